package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Router error types (X-Svc-Error-Type). The set is open and grows: RouterErrorClass maps a value
// this client does not know to internal_error for control flow, while APIError.Code keeps the
// original for diagnostics.
const (
	RouterErrInvalidInput       = "invalid_input"
	RouterErrConcurrencyLimit   = "concurrency_limit_exceeded"
	RouterErrRateLimited        = "rate_limited"
	RouterErrDeadlineExceeded   = "deadline_exceeded"
	RouterErrProviderTimeout    = "provider_timeout"
	RouterErrProviderError      = "provider_error"
	RouterErrServiceUnavailable = "service_unavailable"
	RouterErrInsufficientCredit = "insufficient_credits"
	RouterErrInternal           = "internal_error"
)

// RouterErrorClass returns the error type that drives control flow: t itself when known, ""
// when empty, and internal_error for any other value.
func RouterErrorClass(t string) string {
	switch t {
	case "", RouterErrInvalidInput, RouterErrConcurrencyLimit, RouterErrRateLimited, RouterErrDeadlineExceeded,
		RouterErrProviderTimeout, RouterErrProviderError, RouterErrServiceUnavailable, RouterErrInsufficientCredit,
		RouterErrInternal:
		return t
	}
	return RouterErrInternal
}

// Router queue statuses. We assume the set is closed: these three values and no other.
const (
	RouterInQueue    = "IN_QUEUE"
	RouterInProgress = "IN_PROGRESS"
	RouterCompleted  = "COMPLETED"
)

// Identifier rules of the router: slugs of lower-case alphanumerics with inner ".", "_" and "-",
// a provider slug at most 64 characters, a model slug at most 128, a model id provider/model.
const (
	maxProviderSlug = 64
	maxModelSlug    = 128
	maxModelID      = 193
)

var (
	routerSlug      = regexp.MustCompile(`^[a-z0-9](?:[a-z0-9._-]*[a-z0-9])?$`)
	routerRequestID = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)
)

// ValidateModelID checks a model id ("provider/model") against the router's identifier rules:
// lower-case alphanumeric slugs (inner '-', '_' and '.' allowed), at most 64 and 128 characters,
// 193 in all.
func ValidateModelID(id string) error {
	prov, model, ok := strings.Cut(id, "/")
	if !ok || strings.Contains(model, "/") {
		return fmt.Errorf("model id %q must have the form provider/model", id)
	}
	if len(id) > maxModelID {
		return fmt.Errorf("model id %q is %d characters; at most %d are allowed", id, len(id), maxModelID)
	}
	check := func(what, v string, limit int) error {
		if len(v) == 0 || len(v) > limit {
			return fmt.Errorf("%s slug %q must be 1 to %d characters", what, v, limit)
		}
		if !routerSlug.MatchString(v) {
			return fmt.Errorf("%s slug %q must be lower-case letters and digits (with inner '-', '_' or '.')", what, v)
		}
		return nil
	}
	if err := check("provider", prov, maxProviderSlug); err != nil {
		return err
	}
	return check("model", model, maxModelSlug)
}

// ValidateRouterRequestID checks a queued request id (a lower-case UUID).
func ValidateRouterRequestID(id string) error {
	if !routerRequestID.MatchString(id) {
		return fmt.Errorf("request id %q is not a lower-case UUID", id)
	}
	return nil
}

// modelURL is {router}/v2/models/{provider}/{model}[/more...].
func (c *Client) modelURL(id string, more ...string) (string, error) {
	if err := ValidateModelID(id); err != nil {
		return "", err
	}
	prov, model, _ := strings.Cut(id, "/")
	p, err := pathSegment("provider", prov)
	if err != nil {
		return "", err
	}
	m, err := pathSegment("model", model)
	if err != nil {
		return "", err
	}
	segs := append([]string{"v2", "models", p, m}, more...)
	return joinPath(c.routerEndpoint, segs...), nil
}

// ---- catalog ----

// Billing answers to RouterModelBilling.charges_on_policy_rejection, after normalisation.
const (
	ChargesYes     = "yes"
	ChargesNo      = "no"
	ChargesUnknown = "unknown"
)

// NormalizeCharges maps charges_on_policy_rejection to yes, no or unknown: the router's
// values are compared exactly, and anything else reads as unknown (possibly charged).
func NormalizeCharges(v string) string {
	switch v {
	case ChargesYes, ChargesNo:
		return v
	}
	return ChargesUnknown
}

// ModelBilling is a catalog entry's billing behaviour (never a price).
type ModelBilling struct {
	ChargesOnPolicyRejection string `json:"charges_on_policy_rejection"`
}

// Model is one catalog entry.
type Model struct {
	ID       string       `json:"id"`
	Provider string       `json:"provider"`
	Model    string       `json:"model"`
	Billing  ModelBilling `json:"billing"`
}

// ModelPage is one page of GET /v2/models.
type ModelPage struct {
	Data       []Model `json:"data"`
	HasMore    bool    `json:"has_more"`
	NextCursor string  `json:"next_cursor"`
	Limit      int     `json:"limit"`
	RequestID  string  `json:"-"`
}

// maxCatalogPages stops a walk that the service never ends (a cursor that does not advance).
const maxCatalogPages = 10000

// listModelsPage reads one catalog page. The cursor is passed back exactly as received
// (URL-encoded); limit <= 0 leaves the service's default.
func (c *Client) listModelsPage(ctx context.Context, cursor string, limit int) (*ModelPage, error) {
	u, err := url.Parse(joinPath(c.routerEndpoint, "v2", "models"))
	if err != nil {
		return nil, err
	}
	q := url.Values{}
	if cursor != "" {
		q.Set("cursor", cursor)
	}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	u.RawQuery = q.Encode()
	var page ModelPage
	a, err := c.doJSON(ctx, call{op: "list models", method: http.MethodGet, url: u.String(), cred: credAPIKey, policy: retryIdempotent}, &page)
	if err != nil {
		return nil, err
	}
	page.RequestID = requestIDOf(a.header)
	for i := range page.Data {
		page.Data[i].Billing.ChargesOnPolicyRejection = NormalizeCharges(page.Data[i].Billing.ChargesOnPolicyRejection)
	}
	return &page, nil
}

// ListModels walks the whole catalog: it follows next_cursor while has_more is true and stops
// only when has_more is false, whatever the size of a page. A failed page fails the walk (a 503
// is never an empty catalog), and an invalid cursor is an error, never a silent restart.
func (c *Client) ListModels(ctx context.Context, limit int) ([]Model, error) {
	var all []Model
	cursor := ""
	seen := map[string]bool{}
	for pages := 1; ; pages++ {
		page, err := c.listModelsPage(ctx, cursor, limit)
		if err != nil {
			return nil, fmt.Errorf("catalog page %d: %w", pages, err)
		}
		all = append(all, page.Data...)
		if !page.HasMore {
			return all, nil
		}
		switch {
		case page.NextCursor == "":
			return nil, fmt.Errorf("catalog page %d says has_more but gives no next_cursor (request id %q)", pages, page.RequestID)
		case seen[page.NextCursor]:
			return nil, fmt.Errorf("catalog page %d repeats an earlier cursor; the walk would never end (request id %q)", pages, page.RequestID)
		case pages >= maxCatalogPages:
			return nil, fmt.Errorf("catalog has more than %d pages; stopped", maxCatalogPages)
		}
		seen[page.NextCursor] = true
		cursor = page.NextCursor
	}
}

// ModelDetail is GET /v2/models/{provider}/{model}: the entry plus the raw body, because the
// detail-only fields are open.
type ModelDetail struct {
	Model
	Raw       json.RawMessage
	RequestID string
}

// GetModel reads one catalog entry.
func (c *Client) GetModel(ctx context.Context, id string) (*ModelDetail, error) {
	u, err := c.modelURL(id)
	if err != nil {
		return nil, err
	}
	var raw json.RawMessage
	a, err := c.doJSON(ctx, call{op: "read model " + id, method: http.MethodGet, url: u, cred: credAPIKey, policy: retryIdempotent}, &raw)
	if err != nil {
		return nil, err
	}
	d := &ModelDetail{Raw: raw, RequestID: requestIDOf(a.header)}
	if err := json.Unmarshal(raw, &d.Model); err != nil {
		return nil, fmt.Errorf("read model %s: not a model entry (request id %q): %w", id, d.RequestID, err)
	}
	d.Billing.ChargesOnPolicyRejection = NormalizeCharges(d.Billing.ChargesOnPolicyRejection)
	return d, nil
}

// ---- invocation ----

// InvokeInput is one call of a model: the native input, sent verbatim, and the key chosen by
// the caller before the first attempt.
type InvokeInput struct {
	Model          string
	Input          json.RawMessage
	IdempotencyKey string
}

// Spend is the committed-spend state from X-Committed-Spend-* headers, verbatim.
type Spend struct {
	Limit, Current, Remaining string
}

func (s Spend) IsZero() bool { return s == Spend{} }

func spendOf(h http.Header) Spend {
	return Spend{
		Limit:     echoHeader(h.Get("X-Committed-Spend-Limit")),
		Current:   echoHeader(h.Get("X-Committed-Spend-Current")),
		Remaining: echoHeader(h.Get("X-Committed-Spend-Remaining")),
	}
}

// Spend is the committed-spend state the error's headers gave, printable and capped.
func (e *APIError) Spend() Spend { return spendOf(e.Header) }

// RouterResult is a model's native output as it streams in. The caller must close Body. The
// content type is the provider's own: check it before decoding.
type RouterResult struct {
	Body          io.ReadCloser
	ContentType   string
	ContentLength int64
	RequestID     string
	Replayed      bool   // Idempotent-Replayed: true: a stored result, not charged again
	CreditsUsed   string // X-Svc-Credits-Used, when the provider is on the allowlist
	Spend         Spend
}

func newRouterResult(resp *http.Response) *RouterResult {
	return &RouterResult{
		Body:          resp.Body,
		ContentType:   resp.Header.Get("Content-Type"),
		ContentLength: resp.ContentLength,
		RequestID:     requestIDOf(resp.Header),
		Replayed:      replayed(resp.Header),
		CreditsUsed:   echoHeader(resp.Header.Get("X-Svc-Credits-Used")),
		Spend:         spendOf(resp.Header),
	}
}

func replayed(h http.Header) bool {
	return strings.EqualFold(strings.TrimSpace(h.Get("Idempotent-Replayed")), "true")
}

func invokeHeader(key string) http.Header {
	h := downloadHeader() // the result's bytes as the model's provider made them, never inflated here
	if key != "" {
		h.Set("Idempotency-Key", key)
	}
	return h
}

// InvokeModel runs a model synchronously (POST /v2/models/{provider}/{model}) under the router's
// retry table (retryRouterInvoke): the same key and body on every attempt. Answers that say the
// run goes on (RouterStillRunning) are resent until ctx's deadline; others max_retries times.
// When the retries or the time run out on such an answer, a 5xx, or without a response, the
// error is an *UnknownOutcomeError naming the key: the work may have been accepted, and only a
// resend with the same key can collect it.
func (c *Client) InvokeModel(ctx context.Context, in InvokeInput) (*RouterResult, error) {
	u, err := c.modelURL(in.Model)
	if err != nil {
		return nil, err
	}
	op := "invoke model " + in.Model
	resp, err := c.do(ctx, call{ //nolint:bodyclose // the body is the result: RouterResult.Body, closed by the caller
		op: op, method: http.MethodPost, url: u, cred: credAPIKey, header: invokeHeader(in.IdempotencyKey),
		body: in.Input, policy: retryRouterInvoke, stream: true,
	})
	if err != nil {
		return nil, routerOutcome(op, in.IdempotencyKey, err)
	}
	return newRouterResult(resp), nil
}

// routerOutcome wraps a failure after which accepted work may exist: an unknown outcome, or the
// router's answer that the run under the key still goes on (the deadline came first).
func routerOutcome(op, key string, err error) error {
	if outcomeUnknown(err) || RouterStillRunning(err) {
		return &UnknownOutcomeError{Operation: op, IdempotencyKey: key, Cause: err}
	}
	return err
}

// RouterStillRunning reports whether err carries the router's answer that the run under the
// Idempotency-Key goes on, and that the same request with the same key collects it later: 409
// concurrency_limit_exceeded, or 504 deadline_exceeded with Retry-After.
// It also holds when the context ended while the client waited to resend after such an answer.
func RouterStillRunning(err error) bool {
	var apiErr *APIError
	if errors.As(err, &apiErr) {
		return routerStillRunningAnswer(apiErr.StatusCode, apiErr.Header)
	}
	var ended *waitEndedError
	return errors.As(err, &ended) && routerStillRunningAnswer(ended.last.status, ended.last.header)
}

// QueueRequest is a queued run's handle and status (RouterQueueSubmitResponse and
// RouterQueueStatusResponse), with its URLs resolved on the origin that returned them.
type QueueRequest struct {
	RequestID     string `json:"request_id"`
	Status        string `json:"status"`
	ErrorType     string `json:"error_type,omitempty"`
	QueuePosition *int64 `json:"queue_position,omitempty"`
	StatusURL     string `json:"status_url"`
	ResponseURL   string `json:"response_url"`
	CancelURL     string `json:"cancel_url"`
	// Model is the run's model ("provider/model"). With RequestID it names the links built on the
	// router endpoint, tried when a held link answers 404 or 410 (builtLink).
	Model string `json:"-"`

	Replayed      bool          `json:"-"` // the submission was answered from the key's record
	HTTPRequestID string        `json:"-"` // X-Svc-Request-Id of the response
	RetryAfter    time.Duration `json:"-"` // Retry-After of a status answer, 0 when absent
}

// Completed reports whether the run reached COMPLETED (successfully or not).
func (q *QueueRequest) Completed() bool { return q.Status == RouterCompleted }

// Failed reports whether the run completed without success: COMPLETED with an error_type.
func (q *QueueRequest) Failed() bool { return q.Completed() && q.ErrorType != "" }

// finish completes a decoded handle or status from the answer a. Each link is resolved on the
// origin that answered: one that names another origin (a router that builds its links from a
// public base URL, "localhost" where router_endpoint says 127.0.0.1) keeps its path and query
// and is rebased onto that origin, so the API key never leaves the configured origin. rebased
// names the links that were moved, for the caller to log.
func (q *QueueRequest) finish(op string, a answer) (rebased []string, err error) {
	q.HTTPRequestID = requestIDOf(a.header)
	q.Replayed = replayed(a.header)
	if d, ok := parseRetryAfter(a.header.Get("Retry-After")); ok {
		q.RetryAfter = d
	}
	if q.RequestID == "" {
		return nil, fmt.Errorf("%s: the response is not a queued request (no request_id; request id %q)", op, q.HTTPRequestID)
	}
	var errs []error
	if q.Status == "" {
		errs = append(errs, fmt.Errorf("%s: request %s has no status (request id %q)", op, q.RequestID, q.HTTPRequestID))
	}
	// Every link is checked, and one that cannot be followed (credentials in it, another scheme
	// than http(s)) is left empty rather than kept unresolved, so a caller holding the handle
	// never follows it by mistake.
	for _, l := range []struct {
		name string
		link *string
	}{{"status_url", &q.StatusURL}, {"response_url", &q.ResponseURL}, {"cancel_url", &q.CancelURL}} {
		if *l.link == "" {
			errs = append(errs, fmt.Errorf("%s: request %s has no %s (request id %q)", op, q.RequestID, l.name, q.HTTPRequestID))
			continue
		}
		abs, moved, err := resolveLinkOnOrigin(a.url, *l.link)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: request %s %s: %w", op, q.RequestID, l.name, err))
		}
		if moved {
			rebased = append(rebased, l.name)
		}
		*l.link = abs
	}
	return rebased, errors.Join(errs...)
}

// logRebased says that the router's links named another origin and were followed on the one
// that answered: at warn for a submission (once per run), at debug for each status read.
func (c *Client) logRebased(ctx context.Context, q *QueueRequest, a answer, rebased []string, warn bool) {
	if len(rebased) == 0 {
		return
	}
	fields := map[string]any{"request_id": q.RequestID, "links": strings.Join(rebased, ", "), "origin": origin(a.url)}
	if warn {
		c.log.Warn(ctx, "the router's queue links name another origin than the one that answered; "+
			"they are followed on the answering origin (path and query kept), so credentials stay there", fields)
		return
	}
	c.log.Debug(ctx, "queue links rebased onto the answering origin", fields)
}

// SubmitModelRequest queues a run (POST .../requests) under the same retry table as InvokeModel.
// When the router accepted the run but its answer cannot be used in full (a link that is missing
// or cannot be followed), the handle is returned WITH the error, so the request id is not lost.
func (c *Client) SubmitModelRequest(ctx context.Context, in InvokeInput) (*QueueRequest, error) {
	ctx, release := c.submitting(ctx)
	defer release()
	u, err := c.modelURL(in.Model, "requests")
	if err != nil {
		return nil, err
	}
	op := "submit model request " + in.Model
	h := invokeHeader(in.IdempotencyKey)
	h.Set("Accept", "application/json")
	var q QueueRequest
	a, err := c.doJSON(ctx, call{
		op: op, method: http.MethodPost, url: u, cred: credAPIKey, header: h, body: in.Input, policy: retryRouterInvoke,
	}, &q)
	if err != nil {
		return nil, routerOutcome(op, in.IdempotencyKey, err)
	}
	q.Model = in.Model
	rebased, err := q.finish(op, a)
	c.logRebased(ctx, &q, a, rebased, true)
	if err != nil {
		if q.RequestID == "" {
			return nil, &UnknownOutcomeError{Operation: op, IdempotencyKey: in.IdempotencyKey, Cause: err}
		}
		// Accepted, but a link cannot be followed: the run exists and is billable, so its id goes
		// back with the error for the caller to keep; the unusable link is left empty.
		return &q, err
	}
	return &q, nil
}

// QueueLinks is a handle for request requestID of model with its links built on the router
// endpoint. The router's own links are followed whenever they are known; this serves import, and
// a handle whose links could not be used.
func (c *Client) QueueLinks(model, requestID string) (*QueueRequest, error) {
	if err := ValidateRouterRequestID(requestID); err != nil {
		return nil, err
	}
	base, err := c.modelURL(model, "requests", requestID)
	if err != nil {
		return nil, err
	}
	return &QueueRequest{RequestID: requestID, Model: model, StatusURL: base + "/status", ResponseURL: base, CancelURL: base + "/cancel"}, nil
}

// builtLink is the link pick selects, built on the router endpoint for held, when err says the
// held link answered 404 or 410 and the built one differs. A held link (one rebased from another
// origin onto a different path, say) may be what is wrong rather than the run gone, and taking a
// live run for gone could leave it running, or have it run again under a new key; so the built
// link is tried before the answer is believed. Only a not-found answer costs the building.
func (c *Client) builtLink(held *QueueRequest, err error, pick func(*QueueRequest) string) (string, bool) {
	if !Gone(err) || held.Model == "" {
		return "", false
	}
	built, err := c.QueueLinks(held.Model, held.RequestID)
	if err != nil {
		return "", false
	}
	u := pick(built)
	return u, u != pick(held)
}

// finishStatus completes a status answer (the status route, or a collect answered 202) to the
// handle held. Unlike a submission, its links are not needed: one that is missing or cannot be
// followed is taken from the held handle, so a server that sends them only once does not break
// the wait.
func (c *Client) finishStatus(ctx context.Context, q *QueueRequest, op string, a answer, held *QueueRequest) error {
	rebased, err := q.finish(op, a)
	if err != nil && (q.RequestID == "" || q.Status == "") {
		return err
	}
	c.logRebased(ctx, q, a, rebased, false)
	q.FillLinks(held)
	return nil
}

// FillLinks takes each link q lacks from other.
func (q *QueueRequest) FillLinks(other *QueueRequest) {
	for _, l := range []struct{ mine, theirs *string }{
		{&q.StatusURL, &other.StatusURL}, {&q.ResponseURL, &other.ResponseURL}, {&q.CancelURL, &other.CancelURL},
	} {
		if *l.mine == "" {
			*l.mine = *l.theirs
		}
	}
	if q.Model == "" {
		q.Model = other.Model
	}
}

// ModelRequestStatus reads a queued run's status through the held handle's status URL.
func (c *Client) ModelRequestStatus(ctx context.Context, held *QueueRequest) (*QueueRequest, error) {
	const op = "read model request status"
	var q QueueRequest
	status := call{op: op, method: http.MethodGet, url: held.StatusURL, cred: credAPIKey, policy: retryIdempotent}
	a, err := c.doJSON(ctx, status, &q)
	if u, ok := c.builtLink(held, err, func(q *QueueRequest) string { return q.StatusURL }); ok {
		status.url = u
		a, err = c.doJSON(ctx, status, &q)
	}
	if err != nil {
		return nil, err
	}
	if err := c.finishStatus(ctx, &q, op, a, held); err != nil {
		return nil, err
	}
	if status.url != held.StatusURL {
		q.StatusURL = status.url // the built link answered: keep polling there, not through the 404
	}
	return &q, nil
}

// CollectModelRequest asks for the result at the held handle's response URL. A 200 returns the
// result (close its Body); a 202 means the run is not complete yet and returns its status
// instead (the held handle, with the answer's Retry-After, when the body is not a status).
func (c *Client) CollectModelRequest(ctx context.Context, held *QueueRequest) (*RouterResult, *QueueRequest, error) {
	const op = "collect model request"
	collect := call{
		op: op, method: http.MethodGet, url: held.ResponseURL, cred: credAPIKey, header: downloadHeader(),
		policy: retryIdempotent, stream: true, accept: []int{http.StatusAccepted},
	}
	resp, err := c.do(ctx, collect)
	if u, ok := c.builtLink(held, err, func(q *QueueRequest) string { return q.ResponseURL }); ok {
		collect.url = u
		resp, err = c.do(ctx, collect)
	}
	if err != nil {
		return nil, nil, err
	}
	if resp.StatusCode != http.StatusAccepted {
		return newRouterResult(resp), nil, nil
	}
	defer resp.Body.Close()
	a := answer{status: resp.StatusCode, header: resp.Header, url: sentURL(resp)}
	var q QueueRequest
	if decodeJSON(resp, &q) != nil || c.finishStatus(ctx, &q, op, a, held) != nil {
		// "Not yet" is the answer whatever the body: the status route tells the rest.
		q = *held
		q.HTTPRequestID = requestIDOf(resp.Header)
		q.RetryAfter, _ = parseRetryAfter(resp.Header.Get("Retry-After"))
	}
	return nil, &q, nil
}

// Cancel outcomes. The router fixes these names, not the cancel body's fields.
const (
	RouterCancelRequested   = "CANCELLATION_REQUESTED"
	RouterCancelAlreadyDone = "ALREADY_COMPLETED"
)

// CancelOutcome is the answer to a cancel. Status comes from the body's status field when
// there is one (our assumption: {request_id, status}), else from the HTTP status: the router
// gives the outcome by status code and leaves the body's field names open.
type CancelOutcome struct {
	RequestID string `json:"request_id"`
	Status    string `json:"status"`
	HTTPCode  int    `json:"-"`
}

// CancelModelRequest asks a queued run to stop (PUT cancel_url). Both 202 and 409 are answers:
// the request was noted, or the run had already completed. A cancel is a request, not a
// guarantee: partner work in flight may finish and be billed. A body of another shape than
// assumed (empty, other fields, not JSON) does not turn the answer into an error.
func (c *Client) CancelModelRequest(ctx context.Context, held *QueueRequest) (*CancelOutcome, error) {
	cancel := call{
		op: "cancel model request", method: http.MethodPut, url: held.CancelURL, cred: credAPIKey,
		policy: retryIdempotent, accept: []int{http.StatusConflict},
	}
	resp, err := c.do(ctx, cancel)
	if u, ok := c.builtLink(held, err, func(q *QueueRequest) string { return q.CancelURL }); ok {
		cancel.url = u
		resp, err = c.do(ctx, cancel)
	}
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var out CancelOutcome
	_ = decodeJSON(resp, &out) // best effort: the status code is the answer
	out.HTTPCode = resp.StatusCode
	if out.Status == "" {
		switch resp.StatusCode {
		case http.StatusAccepted:
			out.Status = RouterCancelRequested
		case http.StatusConflict:
			out.Status = RouterCancelAlreadyDone
		}
	}
	return &out, nil
}

// RouterWaitOptions tune AwaitModelResult.
type RouterWaitOptions struct {
	PollMin, PollMax time.Duration
	// OnUpdate is called with every status that differs from the last in status or place in
	// the queue.
	OnUpdate func(*QueueRequest)
}

// onStatus calls OnUpdate when next tells something new over prev.
func (o RouterWaitOptions) onStatus(prev, next *QueueRequest) {
	if o.OnUpdate != nil && (next.Status != prev.Status || !equalPos(next.QueuePosition, prev.QueuePosition)) {
		o.OnUpdate(next)
	}
}

// routerSchedule polls a queued model request: after the service's Retry-After when its last
// answer gave one (the pace it asks for: no sooner, and no later, since it is the one thing
// that tells when to look), else on the blind plan of a job's wait (blindPlan).
type routerSchedule struct {
	min, max time.Duration
	began    time.Time
	clk      clock
	// nexts counts the calls of Next: one before the first read, then one after each.
	nexts int
}

func newRouterSchedule(opts RouterWaitOptions) *routerSchedule {
	return &routerSchedule{
		min: orDuration(opts.PollMin, defaultPollMin), max: orDuration(opts.PollMax, defaultPollMax),
		began: time.Now(), clk: systemClock{},
	}
}

func (s *routerSchedule) Next(last *QueueRequest, _ bool) time.Duration {
	reads := s.nexts
	s.nexts++
	if last.RetryAfter > 0 {
		return max(last.RetryAfter, s.min)
	}
	return blindPlan{period: s.max, floor: s.min, began: s.began, origin: s.began, reads: reads}.wait(s.clk.Now())
}

func equalPos(a, b *int64) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// routerAwait is the record AwaitModelResult's wait reads: the last status, and the result
// once collected.
type routerAwait struct {
	q   *QueueRequest
	res *RouterResult
	// collectNow: the status just said COMPLETED (or the caller's did), so the result is
	// collected at once rather than on the schedule.
	collectNow bool
}

// over reports whether the wait has its answer: the result, or a run that completed with an
// error_type (it has none).
func (a *routerAwait) over() bool { return a.res != nil || a.q.Failed() }

// AwaitModelResult waits for q to complete and collects its result from response_url, on the
// one wait loop: while the status is not COMPLETED a read is a status read; once it is, a read
// is a collect. A 202 from the collect route means the result is not ready after all: the
// next collect comes at the pace the service asks (its Retry-After). A run that completed with
// an error_type returns its final status and no result. On error the last status seen is
// returned with it.
func (c *Client) AwaitModelResult(ctx context.Context, q *QueueRequest, opts RouterWaitOptions) (*QueueRequest, *RouterResult, error) {
	loop := waitLoop[*routerAwait]{
		read:     c.readRouterAwait,
		done:     (*routerAwait).over,
		schedule: routerAwaitSchedule{newRouterSchedule(opts)},
		share:    waitShare{c},
		onRead:   func(prev, next *routerAwait) { opts.onStatus(prev.q, next.q) },
	}
	last, err := loop.run(ctx, &routerAwait{q: q, collectNow: q.Completed()})
	return last.q, last.res, err
}

// readRouterAwait reads the status, or, once it says COMPLETED without an error_type, collects
// the result. A collect answered 202 keeps the status (unless its body says a status that is
// not COMPLETED, which is then the status) with that answer's Retry-After.
func (c *Client) readRouterAwait(ctx context.Context, last *routerAwait) (*routerAwait, error) {
	if !last.q.Completed() {
		q, err := c.ModelRequestStatus(ctx, last.q)
		if err != nil {
			return nil, err
		}
		return &routerAwait{q: q, collectNow: q.Completed()}, nil
	}
	res, pending, err := c.CollectModelRequest(ctx, last.q)
	if err != nil {
		return nil, err
	}
	if res != nil {
		return &routerAwait{q: last.q, res: res}, nil
	}
	if !pending.Completed() {
		return &routerAwait{q: pending}, nil
	}
	q := *last.q
	q.RetryAfter = pending.RetryAfter
	return &routerAwait{q: &q}, nil
}

// routerAwaitSchedule paces AwaitModelResult's reads as routerSchedule paces status reads, but
// collects at once after a status that says COMPLETED.
type routerAwaitSchedule struct{ s *routerSchedule }

func (r routerAwaitSchedule) Next(last *routerAwait, streaming bool) time.Duration {
	if last.collectNow {
		return 0
	}
	return r.s.Next(last.q, streaming)
}
