// Package router is the model router of the reference server: a catalog of demo models, their
// schemas, synchronous runs and queued requests. It is mounted by the emulator's Server, under
// the same mount prefix as the other APIs and through its shared middleware (request id,
// request counting, fault injection):
//
//	GET  /v2/models                                          catalog page (opaque cursor, clamped limit)
//	GET  /v2/models/{provider}/{model}                       one entry plus detail-only fields
//	GET  /v2/models/{provider}/{model}/openapi.json          schema document; ETag, 304 on If-None-Match
//	POST /v2/models/{provider}/{model}                       synchronous run
//	POST /v2/models/{provider}/{model}/requests              queued submit, 201 with a handle
//	GET  /v2/models/{provider}/{model}/requests/{id}/status  status
//	GET  /v2/models/{provider}/{model}/requests/{id}         collect: 200 result, 202 not yet
//	PUT  /v2/models/{provider}/{model}/requests/{id}/cancel  202 CANCELLATION_REQUESTED, 409 ALREADY_COMPLETED
//
// Credentials: X-API-Key (it takes precedence) or Authorization: Bearer, both checked against
// the server's token. Idempotency keys record and replay: the same key and request return the
// stored outcome with Idempotent-Replayed: true; a different request under a used key is 409
// invalid_input; a second caller while the first is still attached is 409
// concurrency_limit_exceeded. A 422 is decided before any run and releases the key.
package router

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/svc-org/terraform-provider-svc/internal/emulator/wire"
)

// Router operation names for request counting and fault injection.
const (
	OpListModels     = "router.models.list"
	OpGetModel       = "router.models.get"
	OpModelSchema    = "router.models.schema"
	OpInvokeModel    = "router.invoke"
	OpSubmitRequest  = "router.requests.submit"
	OpRequestStatus  = "router.requests.status"
	OpCollectRequest = "router.requests.collect"
	OpCancelRequest  = "router.requests.cancel"
)

// Options configure the model router. Zero values give the defaults.
type Options struct {
	FillerModels     int           // extra catalog-only entries filler/model-NNN, to make several pages
	ShortPage        int           // the Nth catalog page (1-based) holds half its limit; has_more stays true
	QueueDelay       time.Duration // time a queued run stays IN_QUEUE (default 0)
	RunDuration      time.Duration // time every model but demo/slow takes (default 0)
	SlowDuration     time.Duration // time demo/slow takes (default 10s)
	SyncDeadline     time.Duration // the router's waiting limit on the synchronous route (default 10m)
	RetryAfter       int           // seconds in Retry-After on 202, 409 and 504 (default 0)
	ConcurrencyLimit int           // runs in flight beyond which a new run gets 429 concurrency_limit_exceeded (0: none)
	SpendLimit       string        // X-Committed-Spend-Limit (default "100.00")
	// PublicBaseURL, when set, is the scheme and host the queue links are built on instead of
	// the request's: a router behind a proxy, or one that names itself "localhost" where the
	// client connects to 127.0.0.1.
	PublicBaseURL string
}

// Host is what the mounting server lends the router.
type Host interface {
	// Route serves pattern (a ServeMux pattern without the mount prefix) as operation op through
	// the server's shared middleware, with auth as the credential check.
	Route(pattern, op string, h http.HandlerFunc, auth func(http.ResponseWriter, *http.Request) bool)
	// Sleep waits d; it returns early, with ctx's error, when ctx ends, and early without one
	// when the server closes or skips every duration.
	Sleep(ctx context.Context, d time.Duration) error
	// Done is closed when the server closes.
	Done() <-chan struct{}
	// Go runs f on a goroutine the server waits for when it closes.
	Go(f func())
}

// Router is the model router's state: catalog, runs, and idempotency keys.
type Router struct {
	host        Host
	opts        Options
	token       string // checked as X-API-Key or bearer token; empty: no check
	mountPrefix string // what queue links start with after the host
	state       *routerState
}

// New builds the router and mounts its routes on host.
func New(host Host, opts Options, token, mountPrefix string) *Router {
	s := &Router{host: host, opts: opts.withDefaults(), token: token, mountPrefix: mountPrefix}
	s.register()
	return s
}

func (o Options) withDefaults() Options {
	if o.SlowDuration <= 0 {
		o.SlowDuration = 10 * time.Second
	}
	if o.SyncDeadline <= 0 {
		o.SyncDeadline = 10 * time.Minute
	}
	if o.SpendLimit == "" {
		o.SpendLimit = "100.00"
	}
	return o
}

type routerState struct {
	mu        sync.Mutex
	models    []*routerModel // sorted by id
	byID      map[string]*routerModel
	requests  map[string]*routerRun
	keys      map[string]*keyRecord
	keysSeen  map[string][]string // op -> Idempotency-Key of every request that reached the handler
	runs      map[string]int      // model -> runs started
	notMod    int                 // 304 answers
	inFlight  int
	forgotten map[string]bool // request ids aged out (ForgetRouterRequests)
}

// keyRecord is what an Idempotency-Key recorded: the request it came with and its run.
type keyRecord struct {
	fingerprint string
	run         *routerRun
	handle      []byte // queued: the 201 body
}

// routerRun is one accepted run of a model.
type routerRun struct {
	id        string
	model     *routerModel
	status    string
	outcome   routerOutcome
	done      chan struct{}
	cancel    context.CancelFunc
	attached  int // synchronous callers waiting on it
	delivered bool
}

func (s *Router) register() {
	rs := &routerState{
		byID: map[string]*routerModel{}, requests: map[string]*routerRun{}, keys: map[string]*keyRecord{},
		keysSeen: map[string][]string{}, runs: map[string]int{}, forgotten: map[string]bool{},
	}
	rs.models = demoModels()
	for i := 1; i <= s.opts.FillerModels; i++ {
		rs.models = append(rs.models, fillerModel(i))
	}
	sort.Slice(rs.models, func(i, j int) bool { return rs.models[i].id < rs.models[j].id })
	for _, m := range rs.models {
		rs.byID[m.id] = m
	}
	s.state = rs

	s.host.Route("GET /v2/models", OpListModels, s.handleListModels, s.routerAuth)
	s.host.Route("GET /v2/models/{provider}/{model}", OpGetModel, s.handleGetModel, s.routerAuth)
	s.host.Route("GET /v2/models/{provider}/{model}/openapi.json", OpModelSchema, s.handleModelSchema, s.routerAuth)
	s.host.Route("POST /v2/models/{provider}/{model}", OpInvokeModel, s.handleInvoke, s.routerAuth)
	s.host.Route("POST /v2/models/{provider}/{model}/requests", OpSubmitRequest, s.handleRouterSubmit, s.routerAuth)
	s.host.Route("GET /v2/models/{provider}/{model}/requests/{id}/status", OpRequestStatus, s.handleRequestStatus, s.routerAuth)
	s.host.Route("GET /v2/models/{provider}/{model}/requests/{id}", OpCollectRequest, s.handleCollect, s.routerAuth)
	s.host.Route("PUT /v2/models/{provider}/{model}/requests/{id}/cancel", OpCancelRequest, s.handleRouterCancel, s.routerAuth)
}

// routerAuth accepts X-API-Key (which takes precedence) or a bearer token equal to Token.
func (s *Router) routerAuth(w http.ResponseWriter, r *http.Request) bool {
	if s.token == "" {
		return true
	}
	got := r.Header.Get("X-API-Key")
	if got == "" {
		got = strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
	}
	if got != "" && subtle.ConstantTimeCompare([]byte(got), []byte(s.token)) == 1 {
		return true
	}
	WriteError(w, http.StatusUnauthorized, "unauthorized", "missing or invalid credentials", nil)
	return false
}

// WriteError writes the router's error shape: {"detail": ...} with the type in X-Svc-Error-Type.
func WriteError(w http.ResponseWriter, status int, errType, detail string, headers map[string]string) {
	w.Header().Set("X-Svc-Error-Type", errType)
	for k, v := range headers {
		w.Header().Set(k, v)
	}
	wire.WriteJSON(w, status, map[string]any{"detail": detail})
}

// ---- catalog ----

type catalogEntry struct {
	ID       string            `json:"id"`
	Provider string            `json:"provider"`
	Model    string            `json:"model"`
	Billing  map[string]string `json:"billing"`
}

func (m *routerModel) entry() catalogEntry {
	return catalogEntry{ID: m.id, Provider: m.provider(), Model: m.name(), Billing: map[string]string{"charges_on_policy_rejection": m.charges}}
}

// Cursors are opaque to clients: base64url of "page:offset".
func encodeCursor(page, offset int) string {
	return base64.RawURLEncoding.EncodeToString(fmt.Appendf(nil, "%d:%d", page, offset))
}

func decodeCursor(c string, total int) (page, offset int, ok bool) {
	if len(c) < 1 || len(c) > 512 {
		return 0, 0, false
	}
	raw, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return 0, 0, false
	}
	p, o, found := strings.Cut(string(raw), ":")
	if !found {
		return 0, 0, false
	}
	page, err1 := strconv.Atoi(p)
	offset, err2 := strconv.Atoi(o)
	if err1 != nil || err2 != nil || page < 2 || offset < 0 || offset > total {
		return 0, 0, false
	}
	return page, offset, true
}

func (s *Router) handleListModels(w http.ResponseWriter, r *http.Request) {
	limit := 20
	if v := r.URL.Query().Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			WriteError(w, http.StatusBadRequest, "invalid_input", "limit must be an integer", nil)
			return
		}
		switch {
		case n > 100:
			limit = 100
		case n > 0:
			limit = n
		}
	}
	rs := s.state
	total := len(rs.models)
	page, offset := 1, 0
	if c := r.URL.Query().Get("cursor"); c != "" {
		var ok bool
		if page, offset, ok = decodeCursor(c, total); !ok {
			WriteError(w, http.StatusBadRequest, "invalid_input", "invalid cursor", nil)
			return
		}
	}
	n := limit
	if page == s.opts.ShortPage {
		n = max(1, limit/2)
	}
	end := min(offset+n, total)
	data := make([]catalogEntry, 0, end-offset)
	for _, m := range rs.models[offset:end] {
		data = append(data, m.entry())
	}
	body := map[string]any{"data": data, "has_more": end < total, "limit": limit}
	if end < total {
		body["next_cursor"] = encodeCursor(page+1, end)
	}
	wire.WriteJSON(w, http.StatusOK, body)
}

// model finds the path's model or answers 404.
func (s *Router) model(w http.ResponseWriter, r *http.Request) *routerModel {
	id := r.PathValue("provider") + "/" + r.PathValue("model")
	if m := s.state.byID[id]; m != nil {
		return m
	}
	WriteError(w, http.StatusNotFound, "not_found", "model "+id+" not found", nil)
	return nil
}

func (s *Router) handleGetModel(w http.ResponseWriter, r *http.Request) {
	m := s.model(w, r)
	if m == nil {
		return
	}
	body := map[string]any{}
	for k, v := range m.detail {
		body[k] = v
	}
	e := m.entry()
	body["id"], body["provider"], body["model"], body["billing"] = e.ID, e.Provider, e.Model, e.Billing
	wire.WriteJSON(w, http.StatusOK, body)
}

func (s *Router) handleModelSchema(w http.ResponseWriter, r *http.Request) {
	m := s.model(w, r)
	if m == nil {
		return
	}
	doc, _ := json.Marshal(m.openAPIDocument())
	sum := sha256.Sum256(doc)
	etag := `"` + hex.EncodeToString(sum[:8]) + `"`
	w.Header().Set("ETag", etag)
	w.Header().Set("Cache-Control", "private, must-revalidate")
	if inm := r.Header.Get("If-None-Match"); inm != "" && (inm == etag || inm == "*") {
		s.state.mu.Lock()
		s.state.notMod++
		s.state.mu.Unlock()
		w.WriteHeader(http.StatusNotModified)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(doc)
}

// ---- invocation ----

// modelInput finds the model the path names and reads its native input; when either fails it
// has answered (404, 400 or 422) and ok is false.
func (s *Router) modelInput(w http.ResponseWriter, r *http.Request) (m *routerModel, body []byte, in map[string]any, ok bool) {
	if m = s.model(w, r); m == nil {
		return nil, nil, nil, false
	}
	body, in, ok = s.readInput(w, r, m)
	return m, body, in, ok
}

// readInput reads the native input (a JSON object) or answers 400 / 422.
func (s *Router) readInput(w http.ResponseWriter, r *http.Request, m *routerModel) ([]byte, map[string]any, bool) {
	raw, err := io.ReadAll(io.LimitReader(r.Body, 1<<20+1))
	if err != nil {
		WriteError(w, http.StatusBadRequest, "invalid_input", "could not read body", nil)
		return nil, nil, false
	}
	if len(raw) > 1<<20 {
		WriteError(w, http.StatusRequestEntityTooLarge, "invalid_input", "request body too large", nil)
		return nil, nil, false
	}
	var in map[string]any
	if err := json.Unmarshal(raw, &in); err != nil || in == nil {
		WriteError(w, http.StatusBadRequest, "invalid_input", "body must be a JSON object", nil)
		return nil, nil, false
	}
	if errs := m.validateInput(in); len(errs) > 0 {
		w.Header().Set("X-Svc-Error-Type", "invalid_input")
		w.Header().Set("Idempotent-Replayed", "false")
		wire.WriteJSON(w, http.StatusUnprocessableEntity, map[string]any{"detail": errs})
		return nil, nil, false
	}
	return raw, in, true
}

func fingerprint(r *http.Request, body []byte) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\n%s\n%s\n", r.Method, r.URL.Path, r.URL.RawQuery)
	h.Write(body)
	return hex.EncodeToString(h.Sum(nil))
}

// keyed looks up the request's Idempotency-Key. It answers 409 invalid_input for a different
// request under a used key and returns (nil, false); a fresh key returns (nil, true).
func (s *Router) keyed(w http.ResponseWriter, r *http.Request, op string, body []byte) (*keyRecord, bool) {
	rs := s.state
	key := r.Header.Get("Idempotency-Key")
	rs.keysSeen[op] = append(rs.keysSeen[op], key)
	if key == "" {
		return nil, true
	}
	rec := rs.keys[key]
	if rec == nil {
		return nil, true
	}
	if rec.fingerprint != fingerprint(r, body) {
		WriteError(w, http.StatusConflict, "invalid_input", "the request differs from the original request of this Idempotency-Key", nil)
		return nil, false
	}
	return rec, true
}

// startRunLocked accepts a run (or answers 429 when at the concurrency limit).
func (s *Router) startRunLocked(w http.ResponseWriter, m *routerModel, id string, in map[string]any) *routerRun {
	rs := s.state
	o := s.opts
	if o.ConcurrencyLimit > 0 && rs.inFlight >= o.ConcurrencyLimit {
		h := s.spendHeaders()
		h["Retry-After"] = strconv.Itoa(o.RetryAfter)
		WriteError(w, http.StatusTooManyRequests, "concurrency_limit_exceeded", "too many requests in flight", h)
		return nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	run := &routerRun{id: id, model: m, status: "IN_QUEUE", done: make(chan struct{}), cancel: cancel}
	rs.runs[m.id]++
	rs.inFlight++
	s.host.Go(func() {
		defer cancel()
		var out routerOutcome
		if s.host.Sleep(ctx, o.QueueDelay) != nil {
			out = routerOutcome{errorType: errTypeCancelled}
		} else {
			rs.mu.Lock()
			run.status = "IN_PROGRESS"
			rs.mu.Unlock()
			if m.id != ModelSlow && s.host.Sleep(ctx, o.RunDuration) != nil {
				out = routerOutcome{errorType: errTypeCancelled}
			} else {
				out = m.run(ctx, s, in)
			}
		}
		rs.mu.Lock()
		run.status, run.outcome = "COMPLETED", out
		rs.inFlight--
		rs.mu.Unlock()
		close(run.done)
	})
	return run
}

// responseRequestID is the X-Svc-Request-Id of the response being written: the id of a run
// accepted by this request. A handler run under a fault's recorder has none yet; it gets one.
func responseRequestID(w http.ResponseWriter) string {
	id := w.Header().Get(wire.RequestIDHeader)
	if id == "" {
		id = uuid.NewString()
		w.Header().Set(wire.RequestIDHeader, id)
	}
	return id
}

func (s *Router) spendHeaders() map[string]string {
	o := s.opts
	total := 0
	for _, n := range s.state.runs {
		total += n
	}
	limit, _ := strconv.ParseFloat(o.SpendLimit, 64)
	current := float64(total) * 0.01
	return map[string]string{
		"X-Committed-Spend-Limit":     o.SpendLimit,
		"X-Committed-Spend-Current":   strconv.FormatFloat(current, 'f', 2, 64),
		"X-Committed-Spend-Remaining": strconv.FormatFloat(limit-current, 'f', 2, 64),
	}
}

func (s *Router) handleInvoke(w http.ResponseWriter, r *http.Request) {
	m, body, in, ok := s.modelInput(w, r)
	if !ok {
		return
	}
	rs := s.state
	o := s.opts
	rs.mu.Lock()
	rec, ok := s.keyed(w, r, OpInvokeModel, body)
	if !ok {
		rs.mu.Unlock()
		return
	}
	replay := rec != nil
	var run *routerRun
	if replay {
		run = rec.run
		if run.attached > 0 {
			rs.mu.Unlock()
			WriteError(w, http.StatusConflict, "concurrency_limit_exceeded", "the original call for this Idempotency-Key still runs",
				map[string]string{"Retry-After": strconv.Itoa(o.RetryAfter)})
			return
		}
	} else {
		if run = s.startRunLocked(w, m, responseRequestID(w), in); run == nil {
			rs.mu.Unlock()
			return
		}
		if key := r.Header.Get("Idempotency-Key"); key != "" {
			rs.keys[key] = &keyRecord{fingerprint: fingerprint(r, body), run: run}
		}
	}
	run.attached++
	rs.mu.Unlock()

	t := time.NewTimer(o.SyncDeadline)
	defer t.Stop()
	select {
	case <-run.done:
	case <-t.C:
	case <-r.Context().Done():
	case <-s.host.Done():
	}
	rs.mu.Lock()
	run.attached--
	completed := run.status == "COMPLETED"
	replay = replay || run.delivered
	if completed {
		run.delivered = true
	}
	rs.mu.Unlock()
	if !completed {
		WriteError(w, http.StatusGatewayTimeout, "deadline_exceeded", "the router stopped waiting; resend the same request and key to collect",
			map[string]string{"Retry-After": strconv.Itoa(o.RetryAfter)})
		return
	}
	s.writeOutcome(w, run, replay)
}

// writeOutcome sends a completed run's result, or its failure.
func (s *Router) writeOutcome(w http.ResponseWriter, run *routerRun, replay bool) {
	if run.outcome.errorType != "" {
		status := http.StatusBadGateway
		if run.outcome.errorType == errTypeCancelled {
			status = http.StatusGone
		}
		WriteError(w, status, run.outcome.errorType, "the run failed: "+run.outcome.errorType, nil)
		return
	}
	s.state.mu.Lock()
	for k, v := range s.spendHeaders() {
		w.Header().Set(k, v)
	}
	s.state.mu.Unlock()
	w.Header().Set("Idempotent-Replayed", strconv.FormatBool(replay))
	if run.model.credits && !replay {
		w.Header().Set("X-Svc-Credits-Used", "1")
	}
	w.Header().Set("Content-Type", run.outcome.contentType)
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Content-Length", strconv.Itoa(len(run.outcome.body)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(run.outcome.body)
}

// ---- queued delivery ----

func (s *Router) queueStatusLocked(r *http.Request, run *routerRun) map[string]any {
	base := s.routerLink(r, "/v2/models/"+run.model.id+"/requests/"+run.id)
	body := map[string]any{
		"request_id": run.id, "status": run.status,
		"status_url": base + "/status", "response_url": base, "cancel_url": base + "/cancel",
	}
	if run.status == "IN_QUEUE" {
		body["queue_position"] = 0
	}
	if run.status == "COMPLETED" && run.outcome.errorType != "" {
		body["error_type"] = run.outcome.errorType
	}
	return body
}

// routerLink is an absolute URL on the request's host (or on PublicBaseURL): the router's
// queue URLs (status_url, response_url, cancel_url) are absolute.
func (s *Router) routerLink(r *http.Request, path string) string {
	if base := s.opts.PublicBaseURL; base != "" {
		return strings.TrimRight(base, "/") + s.mountPrefix + path
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host + s.mountPrefix + path
}

func (s *Router) handleRouterSubmit(w http.ResponseWriter, r *http.Request) {
	m, body, in, ok := s.modelInput(w, r)
	if !ok {
		return
	}
	rs := s.state
	rs.mu.Lock()
	defer rs.mu.Unlock()
	rec, ok := s.keyed(w, r, OpSubmitRequest, body)
	if !ok {
		return
	}
	if rec != nil {
		w.Header().Set("Idempotent-Replayed", "true")
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write(rec.handle)
		return
	}
	run := s.startRunLocked(w, m, responseRequestID(w), in)
	if run == nil {
		return
	}
	rs.requests[run.id] = run
	handle, _ := json.Marshal(s.queueStatusLocked(r, run))
	if key := r.Header.Get("Idempotency-Key"); key != "" {
		rs.keys[key] = &keyRecord{fingerprint: fingerprint(r, body), run: run, handle: handle}
	}
	w.Header().Set("Idempotent-Replayed", "false")
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusCreated)
	_, _ = w.Write(handle)
}

// queued finds the path's request, or answers 404 (unknown) or 410 (aged out).
func (s *Router) queuedLocked(w http.ResponseWriter, r *http.Request) *routerRun {
	id := r.PathValue("id")
	if s.state.forgotten[id] {
		WriteError(w, http.StatusGone, "invalid_input", "request "+id+" has aged out", nil)
		return nil
	}
	run := s.state.requests[id]
	if run == nil || run.model.id != r.PathValue("provider")+"/"+r.PathValue("model") {
		WriteError(w, http.StatusNotFound, "not_found", "request "+id+" not found", nil)
		return nil
	}
	return run
}

// lockQueued locks the router and returns the path's request with the lock held; when there is
// none it answers (404 or 410), unlocks, and returns nil.
func (s *Router) lockQueued(w http.ResponseWriter, r *http.Request) *routerRun {
	s.state.mu.Lock()
	run := s.queuedLocked(w, r)
	if run == nil {
		s.state.mu.Unlock()
	}
	return run
}

func (s *Router) handleRequestStatus(w http.ResponseWriter, r *http.Request) {
	run := s.lockQueued(w, r)
	if run == nil {
		return
	}
	defer s.state.mu.Unlock()
	if run.status != "COMPLETED" {
		w.Header().Set("Retry-After", strconv.Itoa(s.opts.RetryAfter))
	}
	wire.WriteJSON(w, http.StatusOK, s.queueStatusLocked(r, run))
}

func (s *Router) handleCollect(w http.ResponseWriter, r *http.Request) {
	rs := s.state
	run := s.lockQueued(w, r)
	if run == nil {
		return
	}
	if run.status != "COMPLETED" {
		body := s.queueStatusLocked(r, run)
		rs.mu.Unlock()
		w.Header().Set("Retry-After", strconv.Itoa(s.opts.RetryAfter))
		wire.WriteJSON(w, http.StatusAccepted, body)
		return
	}
	replay := run.delivered
	run.delivered = true
	rs.mu.Unlock()
	s.writeOutcome(w, run, replay)
}

func (s *Router) handleRouterCancel(w http.ResponseWriter, r *http.Request) {
	run := s.lockQueued(w, r)
	if run == nil {
		return
	}
	defer s.state.mu.Unlock()
	if run.status == "COMPLETED" {
		wire.WriteJSON(w, http.StatusConflict, map[string]string{"request_id": run.id, "status": "ALREADY_COMPLETED"})
		return
	}
	run.cancel()
	wire.WriteJSON(w, http.StatusAccepted, map[string]string{"request_id": run.id, "status": "CANCELLATION_REQUESTED"})
}

// ---- inspection for tests ----

// Runs reports how many runs of model the router started (replays start none).
func (s *Router) Runs(model string) int {
	s.state.mu.Lock()
	defer s.state.mu.Unlock()
	return s.state.runs[model]
}

// KeysSeen returns the Idempotency-Key of every request of op (OpInvokeModel or
// OpSubmitRequest) that reached the handler, in order ("" for none).
func (s *Router) KeysSeen(op string) []string {
	s.state.mu.Lock()
	defer s.state.mu.Unlock()
	return append([]string(nil), s.state.keysSeen[op]...)
}

// SchemaNotModified reports how many schema reads were answered 304.
func (s *Router) SchemaNotModified() int {
	s.state.mu.Lock()
	defer s.state.mu.Unlock()
	return s.state.notMod
}

// Request reports a queued request's status and error type.
func (s *Router) Request(id string) (status, errorType string, ok bool) {
	s.state.mu.Lock()
	defer s.state.mu.Unlock()
	run := s.state.requests[id]
	if run == nil {
		return "", "", false
	}
	return run.status, run.outcome.errorType, true
}

// WaitRequest blocks until the queued request completes (or d passes) and reports whether it did.
func (s *Router) WaitRequest(id string, d time.Duration) bool {
	s.state.mu.Lock()
	run := s.state.requests[id]
	s.state.mu.Unlock()
	if run == nil {
		return false
	}
	select {
	case <-run.done:
		return true
	case <-time.After(d):
		return false
	}
}

// ForgetRequests ages out every queued request: their routes answer 410 from now on, as
// after the 24-hour retention.
func (s *Router) ForgetRequests() {
	s.state.mu.Lock()
	defer s.state.mu.Unlock()
	for id := range s.state.requests {
		s.state.forgotten[id] = true
	}
}
