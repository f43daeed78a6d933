package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Job statuses of the v2 interface.
const (
	JobQueued    = "queued"
	JobRunning   = "running"
	JobSucceeded = "succeeded"
	JobCanceling = "canceling"
	JobCanceled  = "canceled"
	JobFailed    = "failed"
	JobExpired   = "expired"
)

// JobTerminal reports whether status is one the job never leaves.
func JobTerminal(status string) bool {
	switch status {
	case JobSucceeded, JobCanceled, JobFailed, JobExpired:
		return true
	}
	return false
}

// Job is the v2 job record. Times are kept as the service wrote them, so they are stable in state.
type Job struct {
	ID            string            `json:"id"`
	Status        string            `json:"status"`
	CreatedAt     string            `json:"created_at"`
	StartedAt     *string           `json:"started_at"`
	CompletedAt   *string           `json:"completed_at"`
	ExpiresAt     string            `json:"expires_at"`
	QueuePosition *int64            `json:"queue_position"`
	Progress      *Progress         `json:"progress"`
	Outputs       []Output          `json:"outputs"`
	Error         *JobError         `json:"error"`
	Metrics       map[string]*int64 `json:"metrics,omitempty"`
	URLs          JobURLs           `json:"urls"`

	// RequestID is the X-Svc-Request-Id of the response this record came from.
	RequestID string `json:"-"`
	// RetryAfter is the Retry-After of the read that returned this record (0 when absent): a
	// wait reads the job no sooner than that.
	RetryAfter time.Duration `json:"-"`
	// DecodeWarnings names the values of the record that did not fit their field and were left
	// empty (the rest of the record, id and status first, was kept).
	DecodeWarnings []string `json:"-"`
}

// Progress is the service's latest progress snapshot.
type Progress struct {
	Value            float64 `json:"value"`
	NodesDone        int64   `json:"nodes_done"`
	NodesTotal       int64   `json:"nodes_total"`
	CurrentNode      *string `json:"current_node,omitempty"`
	CurrentNodeClass *string `json:"current_node_class,omitempty"`
	Step             *int64  `json:"step,omitempty"`
	Steps            *int64  `json:"steps,omitempty"`
	Message          *string `json:"message,omitempty"`
}

// Output is one committed job output: the asset it committed (the record GET
// /api/v2/assets/{id} serves), with the node that made it and its type.
type Output struct {
	NodeID string `json:"node_id"`
	Type   string `json:"type"`
	Asset
}

// JobError is the execution failure inside job.error (not an HTTP error).
type JobError struct {
	Code      string  `json:"code"`
	Message   string  `json:"message"`
	NodeID    *string `json:"node_id,omitempty"`
	ClassType *string `json:"class_type,omitempty"`
	Traceback *string `json:"traceback,omitempty"`
}

// JobURLs are the job's follow-up links, resolved to absolute URLs on the origin that returned
// them. Logs is empty when the surface captures no logs.
type JobURLs struct {
	Self   string `json:"self"`
	Events string `json:"events"`
	Cancel string `json:"cancel"`
	Logs   string `json:"logs,omitempty"`
}

// Terminal reports whether the job reached a status it never leaves.
func (j *Job) Terminal() bool { return JobTerminal(j.Status) }

// SubmitJobInput is the body and key of POST /api/v2/jobs.
type SubmitJobInput struct {
	Workflow       json.RawMessage // API-format graph, sent verbatim
	ExtraData      map[string]string
	IdempotencyKey string // chosen by the caller before the first attempt
}

// SubmitJob submits a workflow. The key is single-use (the service never runs a request whose
// key it has seen), so the request is resent under the same Idempotency-Key after every transient
// failure, a lost answer included (a reset or timeout after sending, 500, 502, 503, 504), until
// it is answered or ctx ends (resendSubmission). The outcome is unknown (*UnknownOutcomeError,
// naming the key) only when a resend after a lost answer is refused as a reuse of the key (the
// first attempt arrived: a job may exist that the service did not name), or when ctx ends, or
// the resends stop, with an attempt's answer lost. Without a key, a request that may have
// arrived is never resent. Once ctx ends nothing more is sent, and an attempt on the wire gets
// the client's AnswerGrace to be answered (see submitting).
func (c *Client) SubmitJob(ctx context.Context, in SubmitJobInput) (*Job, error) {
	const op = "submit job"
	ctx, release := c.submitting(ctx)
	defer release()
	body := map[string]any{"workflow": in.Workflow}
	if len(in.ExtraData) > 0 {
		body["extra_data"] = in.ExtraData
	}
	header := http.Header{}
	if in.IdempotencyKey != "" {
		header.Set("Idempotency-Key", in.IdempotencyKey)
	}
	var job Job
	var answerLost bool
	submit := call{
		op:     op,
		method: http.MethodPost,
		url:    joinPath(c.endpoint, "api", "v2", "jobs"),
		cred:   credBearerKey,
		header: header,
		body:   mustJSON(body),
		policy: retryJobSubmit,
		once:   true,
	}
	if in.IdempotencyKey != "" {
		submit.answerLost = &answerLost
	}
	resp, err := c.doJSON(ctx, submit, &job)
	if err != nil {
		if answerLost && !settlesLostAnswer(err) {
			return nil, lostAnswerError(op, in.IdempotencyKey, err)
		}
		if outcomeUnknown(err) {
			return nil, &UnknownOutcomeError{Operation: op, IdempotencyKey: in.IdempotencyKey, Cause: err}
		}
		nameRejectedNodes(err, in.Workflow)
		return nil, err
	}
	if err := c.finishJob(ctx, op, resp, &job); err != nil {
		if job.ID != "" { // the job exists, named by the service; only the rest is unusable
			return nil, &RefusedJobRecordError{Operation: op, JobID: job.ID, Status: job.Status, IdempotencyKey: in.IdempotencyKey, Cause: err}
		}
		return nil, &UnknownOutcomeError{Operation: op, IdempotencyKey: in.IdempotencyKey, Cause: err}
	}
	return &job, nil
}

// settlesLostAnswer reports whether the final answer to a resend, after an attempt whose answer
// was lost, proves that attempt created nothing: a refusal of the request itself (400, 402, 409,
// 413, a 422 other than idempotency_key_reuse), which the service gives only to a key it has not
// seen claimed. A key reuse says the first attempt arrived; 401, 403 and 404 may come before the
// key is looked at; 408, 429 and 5xx settle nothing.
func settlesLostAnswer(err error) bool {
	var apiErr *APIError
	if !errors.As(err, &apiErr) || apiErr.StatusCode < 400 || apiErr.StatusCode >= 500 {
		return false
	}
	switch apiErr.StatusCode {
	case http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound, http.StatusRequestTimeout, http.StatusTooManyRequests:
		return false
	}
	return apiErr.Code != codeIdempotencyKeyReuse
}

// codeIdempotencyKeyReuse is the v2 error code of a request whose key the service has seen.
const codeIdempotencyKeyReuse = "idempotency_key_reuse"

// lostAnswerError is the unknown outcome of a submission an attempt of which may have arrived
// without its answer coming back, and that no later answer settled.
func lostAnswerError(op, key string, err error) *UnknownOutcomeError {
	if HasCode(err, codeIdempotencyKeyReuse) {
		return &UnknownOutcomeError{Operation: op, IdempotencyKey: key, FirstArrived: true, Cause: fmt.Errorf(
			"an attempt's answer was lost, and the service refused the resend under the same Idempotency-Key %s as a reuse: "+
				"the first attempt reached it, and a job may exist that it did not name: %w", key, err)}
	}
	return &UnknownOutcomeError{Operation: op, IdempotencyKey: key, Cause: fmt.Errorf(
		"an attempt's answer was lost, and no resend under the same Idempotency-Key %s settled whether it arrived: %w", key, err)}
}

// outcomeUnknown reports whether a failed submission may nevertheless have created something: any
// 5xx or transport failure after sending. A 4xx is a definitive refusal.
func outcomeUnknown(err error) bool {
	var apiErr *APIError
	if errors.As(err, &apiErr) {
		return apiErr.StatusCode >= 500
	}
	if refused, ok := refusedRedirect(err); ok {
		return !refused.notProcessed()
	}
	var ended *waitEndedError
	if errors.As(err, &ended) && ended.settled() {
		return false // the deadline came while waiting after a definite "not now" (a 429)
	}
	return !neverSent(err)
}

// GetJob reads a job by id: GET {endpoint}/api/v2/jobs/{id}. Used for import and the data source;
// a resource that holds the job's self link follows that instead (ReadJob).
func (c *Client) GetJob(ctx context.Context, id string) (*Job, error) {
	u, err := c.jobURL(id)
	if err != nil {
		return nil, err
	}
	return c.readJob(ctx, "read job", u)
}

// GetJobRidingOut reads job id as a wait reads it: a transient failure (a refused or reset
// connection, 408, 429, 5xx) is read again, as Retry-After asks or backing off, until ctx ends.
// A resumed wait starts with it, so a service restarting when the apply begins ends nothing.
func (c *Client) GetJobRidingOut(ctx context.Context, id string) (*Job, error) {
	return readRidingOut(ctx, c, func(ctx context.Context) (*Job, error) { return c.GetJob(ctx, id) })
}

func (c *Client) jobURL(id string) (string, error) {
	seg, err := pathSegment("job id", id)
	if err != nil {
		return "", err
	}
	return joinPath(c.endpoint, "api", "v2", "jobs", seg), nil
}

// RefreshJob re-reads a job through its self link (which may carry a serverless mount prefix).
func (c *Client) RefreshJob(ctx context.Context, job *Job) (*Job, error) {
	return c.ReadJob(ctx, job.ID, job.URLs.Self)
}

// ReadJob reads job id through selfURL, a self link kept from an earlier read, or by id when
// there is none. A 404 or 410 through a self link other than the job's path on the endpoint is
// confirmed by reading the job by id: the link (one rebased from another host, say) may be what
// is wrong, not the job gone, and a job wrongly taken for gone would be dropped from state.
func (c *Client) ReadJob(ctx context.Context, id, selfURL string) (*Job, error) {
	if selfURL == "" {
		return c.GetJob(ctx, id)
	}
	job, err := c.readJob(ctx, "read job", selfURL)
	if Gone(err) && id != "" {
		if byID, uerr := c.jobURL(id); uerr == nil && byID != selfURL {
			c.log.Debug(ctx, "the job's self link answered not found; reading the job by id", map[string]any{"job_id": id, "error": err.Error()})
			return c.GetJob(ctx, id)
		}
	}
	return job, err
}

func (c *Client) readJob(ctx context.Context, op, u string) (*Job, error) {
	var job Job
	resp, err := c.doJSON(ctx, call{op: op, method: http.MethodGet, url: u, cred: credBearerKey, policy: retryIdempotent}, &job)
	if err != nil {
		return nil, err
	}
	if err := c.finishJob(ctx, op, resp, &job); err != nil {
		return nil, err
	}
	job.RetryAfter, _ = parseRetryAfter(resp.header.Get("Retry-After"))
	return &job, nil
}

// CancelJob asks the service to cancel the job (POST to urls.cancel) and returns the job as it
// stands: canceling, or already terminal. Canceling twice is harmless. We assume the answer is
// the job record; a service that answers otherwise (202 or 204, an empty or other body) is
// read back through the job's self link, since the record is the truth either way.
func (c *Client) CancelJob(ctx context.Context, job *Job) (*Job, error) {
	const op = "cancel job"
	if job.URLs.Cancel == "" {
		return nil, fmt.Errorf("%s %s: the job record has no cancel link", op, job.ID)
	}
	cancel := call{op: op, method: http.MethodPost, url: job.URLs.Cancel, cred: credBearerKey, policy: retryIdempotent}
	resp, err := c.do(ctx, cancel)
	if Gone(err) {
		// Not found through the link: confirm the job is gone (or over) before the caller
		// forgets it, since a wrong link would otherwise leave it running unseen. A job still
		// running is canceled through the link its record read by id names, when that differs
		// (canceling twice is harmless).
		now, rerr := c.GetJob(ctx, job.ID)
		switch {
		case rerr != nil && !Gone(rerr): // not known to be gone: say so rather than forget it
			return nil, fmt.Errorf("%s %s: the cancel link answered %s, and reading the job by id failed: %w", op, job.ID, err.Error(), rerr)
		case rerr == nil && !now.Terminal():
			first := err
			if now.URLs.Cancel != "" && now.URLs.Cancel != job.URLs.Cancel {
				job, cancel.url = now, now.URLs.Cancel
				resp, err = c.do(ctx, cancel) //nolint:bodyclose // closed below once err is nil; on an error do returns no response
			}
			if Gone(err) {
				return nil, fmt.Errorf("%s %s: the cancel link answered %s, yet the job is %s; cancel it on the service", op, job.ID, first.Error(), now.Status)
			}
		}
	}
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var out Job
	if decodeJSON(resp, &out) == nil && out.ID != "" && out.Status != "" {
		if err := c.finishJob(ctx, op, answer{status: resp.StatusCode, header: resp.Header, url: sentURL(resp)}, &out); err != nil {
			return nil, err
		}
		return &out, nil
	}
	return c.RefreshJob(ctx, job)
}

// finishJob checks a decoded record and resolves its links against the request that returned it.
// A link on another origin is rebased onto the origin that answered (resolveLinkOnOrigin): the
// service named its own path, and the credentials stay where the user sent them.
func (c *Client) finishJob(ctx context.Context, op string, resp answer, job *Job) error {
	job.RequestID = requestIDOf(resp.header)
	if job.ID == "" || job.Status == "" {
		return fmt.Errorf("%s: the response is not a job record (no id or status; request id %q)", op, job.RequestID)
	}
	if job.Outputs == nil {
		job.Outputs = []Output{}
	}
	base := resp.url
	var err error
	var rebased []string
	resolve := func(name string, link *string, required bool) {
		if err != nil {
			return
		}
		if *link == "" {
			if required {
				err = fmt.Errorf("%s: job %s has no urls.%s (request id %q)", op, job.ID, name, job.RequestID)
			}
			return
		}
		abs, moved, rerr := resolveLinkOnOrigin(base, *link)
		if rerr != nil {
			err = fmt.Errorf("%s: job %s urls.%s: %w", op, job.ID, name, rerr)
			return
		}
		if moved {
			rebased = append(rebased, fmt.Sprintf("urls.%s %s", name, capEcho(redactLink(*link), maxEchoedHeader)))
		}
		*link = abs
	}
	resolve("self", &job.URLs.Self, true)
	resolve("events", &job.URLs.Events, false)
	resolve("cancel", &job.URLs.Cancel, false)
	resolve("logs", &job.URLs.Logs, false)
	if err != nil {
		return err
	}
	if len(rebased) > 0 {
		c.log.Debug(ctx, "job links name another host; their paths are followed on the origin that answered", map[string]any{
			"job_id": job.ID, "origin": origin(base), "links": strings.Join(rebased, ", ")})
	}
	// Output URLs may live on a storage host; they are resolved but not origin-checked, because
	// the download sends no credentials to another origin (see Download).
	for i := range job.Outputs {
		if u, e := resolveAnyOrigin(base, job.Outputs[i].URL); e == nil {
			job.Outputs[i].URL = u
		}
	}
	return nil
}

// resolveAnyOrigin resolves an absolute or host-relative reference without the same-origin rule.
func resolveAnyOrigin(base *url.URL, ref string) (string, error) {
	u, err := url.Parse(ref)
	if err != nil {
		return "", err
	}
	if u.Scheme == "" && u.Host == "" {
		u.Scheme, u.Host = base.Scheme, base.Host
	} else if u.Scheme == "" {
		u.Scheme = base.Scheme
	}
	return u.String(), nil
}

// nameRejectedNodes gives an invalid_workflow error the class of each node it names, read from
// the submitted workflow: the service's answer names node ids only, and "node 7" alone sends the
// user counting through the graph.
func nameRejectedNodes(err error, workflow json.RawMessage) {
	var apiErr *APIError
	if !errors.As(err, &apiErr) || len(apiErr.NodeErrors) == 0 {
		return
	}
	var nodes map[string]struct {
		ClassType string `json:"class_type"`
	}
	if json.Unmarshal(workflow, &nodes) != nil {
		return
	}
	apiErr.NodeClasses = make(map[string]string, len(apiErr.NodeErrors))
	for id := range apiErr.NodeErrors {
		if n, ok := nodes[id]; ok && n.ClassType != "" {
			apiErr.NodeClasses[id] = n.ClassType
		}
	}
}
