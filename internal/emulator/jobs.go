package emulator

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
)

// Job statuses.
const (
	statusQueued    = "queued"
	statusRunning   = "running"
	statusSucceeded = "succeeded"
	statusCanceling = "canceling"
	statusCanceled  = "canceled"
	statusFailed    = "failed"
	statusExpired   = "expired"
)

func isTerminal(status string) bool {
	switch status {
	case statusSucceeded, statusCanceled, statusFailed, statusExpired:
		return true
	}
	return false
}

// extraDataKeys are the only keys extra_data accepts.
var extraDataKeys = map[string]bool{"api_key_svc_org": true, "auth_token_svc_org": true}

// job is one execution of a workflow. All fields are guarded by Server.mu.
type job struct {
	id          string
	status      string
	createdAt   time.Time
	startedAt   time.Time
	completedAt time.Time
	expiresAt   time.Time
	progress    *progressJSON
	outputs     []*jobOutput
	err         *jobError
	workflow    map[string]any
	extraData   map[string]any
	logs        strings.Builder
	names       map[string]int // file counters by prefix
	events      []event        // what the events stream pushes, in order
	changed     chan struct{}  // closed and replaced whenever events grows
	ctx         context.Context
	cancel      context.CancelFunc
	lastRead    time.Time // when a read was last answered, for ReadMinInterval
	endReadAt   time.Time // when a read first answered with the job ended (zero: not yet)
	v1          bool      // submitted through POST /api/prompt: its events also go to the v1 socket
}

type jobOutput struct {
	assetID     string
	nodeID      string
	name        string
	typ         string
	contentType string
	size        int64
	hash        string
	urlExpires  time.Time
}

// nextName returns "<prefix>_00001_.<ext>" and so on, counting per job and prefix.
func (j *job) nextName(prefix, ext string) string {
	prefix = sanitizePrefix(prefix)
	j.names[prefix]++
	return fmt.Sprintf("%s_%05d_.%s", prefix, j.names[prefix], ext)
}

// Wire shapes of the v2 jobs interface.
type jobJSON struct {
	ID            string            `json:"id"`
	Status        string            `json:"status"`
	CreatedAt     string            `json:"created_at"`
	StartedAt     *string           `json:"started_at"`
	CompletedAt   *string           `json:"completed_at"`
	ExpiresAt     string            `json:"expires_at"`
	QueuePosition *int              `json:"queue_position"`
	Progress      *progressJSON     `json:"progress"`
	Outputs       []outputJSON      `json:"outputs"`
	Error         *jobError         `json:"error"`
	Metrics       map[string]*int64 `json:"metrics"`
	URLs          jobURLs           `json:"urls"`
}

type progressJSON struct {
	Value            float64 `json:"value"`
	NodesDone        int     `json:"nodes_done"`
	NodesTotal       int     `json:"nodes_total"`
	CurrentNode      *string `json:"current_node"`
	CurrentNodeClass *string `json:"current_node_class"`
	Step             *int    `json:"step"`
	Steps            *int    `json:"steps"`
	Message          *string `json:"message"`
}

// outputJSON is one job output: the asset record, with the node that made it and its type.
type outputJSON struct {
	NodeID string `json:"node_id"`
	Type   string `json:"type"`
	assetJSON
}

type jobError struct {
	Code      string  `json:"code"`
	Message   string  `json:"message"`
	NodeID    *string `json:"node_id"`
	ClassType *string `json:"class_type"`
	Traceback *string `json:"traceback"`
}

type jobURLs struct {
	Self   string `json:"self"`
	Events string `json:"events"`
	Cancel string `json:"cancel"`
	Logs   string `json:"logs,omitempty"`
}

func (s *Server) registerJobRoutes() {
	s.route("POST /api/v2/jobs", OpSubmitJob, s.handleSubmit)
	s.route("GET /api/v2/jobs/{id}", OpGetJob, s.handleGetJob)
	s.route("POST /api/v2/jobs/{id}/cancel", OpCancelJob, s.handleCancel)
	if s.opts.LogsLink {
		s.route("GET /api/v2/jobs/{id}/logs", OpJobLogs, s.handleLogs)
	}
}

func jobPath(id string) string { return "/api/v2/jobs/" + id }

// renderLocked builds the Job record; s.mu must be held.
func (s *Server) renderLocked(r *http.Request, j *job, now time.Time) jobJSON {
	out := jobJSON{
		ID:          j.id,
		Status:      j.status,
		CreatedAt:   formatTime(j.createdAt),
		StartedAt:   formatTimePtr(j.startedAt),
		CompletedAt: formatTimePtr(j.completedAt),
		ExpiresAt:   formatTime(j.expiresAt),
		Progress:    j.progress,
		Outputs:     []outputJSON{},
		Error:       j.err,
		Metrics:     map[string]*int64{"queue_ms": nil, "execution_ms": nil},
		URLs: jobURLs{
			Self:   s.link(r, jobPath(j.id)),
			Events: s.link(r, jobPath(j.id)+"/events"),
			Cancel: s.link(r, jobPath(j.id)+"/cancel"),
		},
	}
	if s.opts.LogsLink {
		out.URLs.Logs = s.link(r, jobPath(j.id)+"/logs")
	}
	if p := s.queuePositionLocked(j); p > 0 {
		out.QueuePosition = &p
	}
	for _, o := range j.outputs {
		out.Outputs = append(out.Outputs, s.renderOutputLocked(r, j, o, now))
	}
	ms := func(a, b time.Time) *int64 { v := b.Sub(a).Milliseconds(); return &v }
	switch {
	case !j.startedAt.IsZero():
		out.Metrics["queue_ms"] = ms(j.createdAt, j.startedAt)
		if !j.completedAt.IsZero() {
			out.Metrics["execution_ms"] = ms(j.startedAt, j.completedAt)
		}
	case !j.completedAt.IsZero(): // ended while queued
		out.Metrics["queue_ms"] = ms(j.createdAt, j.completedAt)
	}
	return out
}

// ComputeHashes ends the LazyHashes period: from now on outputs[].hash is filled.
func (s *Server) ComputeHashes() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hashesComputed = true
}

// hashShownLocked reports whether the hash of an output of job jobID ("" for an upload) is
// served: always, unless LazyHashes holds it back until ComputeHashes or HashDelay after the
// job ended. s.mu must be held.
func (s *Server) hashShownLocked(jobID string, now time.Time) bool {
	if !s.opts.LazyHashes || s.hashesComputed || jobID == "" {
		return true
	}
	j := s.jobs[jobID]
	if s.opts.HashDelay <= 0 || j == nil || j.completedAt.IsZero() {
		return false
	}
	return !now.Before(j.completedAt.Add(s.opts.HashDelay))
}

// renderOutputLocked renders an output, re-signing its url when half its life is gone.
func (s *Server) renderOutputLocked(r *http.Request, j *job, o *jobOutput, now time.Time) outputJSON {
	if s.opts.ResignOnRead || now.After(o.urlExpires.Add(-s.opts.URLTTL/2)) {
		o.urlExpires = s.urlExpiry(now)
	}
	jobID, hash := j.id, &o.hash
	if !s.hashShownLocked(j.id, now) {
		hash = nil
	}
	return outputJSON{NodeID: o.nodeID, Type: o.typ, assetJSON: assetJSON{
		ID:           o.assetID,
		Name:         o.name,
		ContentType:  o.contentType,
		SizeBytes:    o.size,
		Hash:         hash,
		URL:          s.contentLink(r, o.assetID, o.urlExpires),
		URLExpiresAt: formatTime(o.urlExpires),
		JobID:        &jobID,
	}}
}

// queuePositionLocked is the 1-based place of a queued job (0 when not queued).
func (s *Server) queuePositionLocked(j *job) int {
	if j.status != statusQueued {
		return 0
	}
	for i, q := range s.queue {
		if q == j {
			return i + 1
		}
	}
	return 0
}

// lockJobOr404 locks the server and returns the job the path names, with the lock held; when
// there is no such job it answers 404, unlocks, and returns nil.
func (s *Server) lockJobOr404(w http.ResponseWriter, r *http.Request, now time.Time) *job {
	s.mu.Lock()
	j := s.getJobLocked(r.PathValue("id"), now)
	if j == nil {
		s.mu.Unlock()
		writeError(w, http.StatusNotFound, "not_found", "job not found", nil)
	}
	return j
}

// getJobLocked returns a job, applying lazy expiry, or nil.
func (s *Server) getJobLocked(id string, now time.Time) *job {
	j := s.jobs[id]
	if j != nil {
		s.expireIfDueLocked(j, now)
	}
	return j
}

func (s *Server) handleSubmit(w http.ResponseWriter, r *http.Request) {
	wf, extra, refused := readSubmission(r)
	if refused != nil {
		writeError(w, refused.status, refused.code, refused.msg, refused.details)
		return
	}

	now := s.now()
	key := r.Header.Get("Idempotency-Key")
	s.mu.Lock()
	if key != "" {
		if claimed, ok := s.idemKeys[key]; ok && now.Sub(claimed) < s.opts.IdempotencyTTL {
			s.mu.Unlock()
			writeError(w, http.StatusUnprocessableEntity, "idempotency_key_reuse", "this Idempotency-Key was already used", nil)
			return
		}
		s.idemKeys[key] = now
	}
	fail := func(status int, code, msg string, details any) {
		if key != "" {
			delete(s.idemKeys, key) // definitive failure without a job: release the key
		}
		s.mu.Unlock()
		if status == http.StatusTooManyRequests {
			w.Header().Set("Retry-After", strconv.Itoa(s.opts.RetryAfter))
		}
		writeError(w, status, code, msg, details)
	}
	if nodeErrs, general := s.validateWorkflowLocked(wf); len(nodeErrs) > 0 || general != "" {
		if general == "" {
			general = "the workflow is invalid"
		}
		fail(http.StatusUnprocessableEntity, "invalid_workflow", general, map[string]any{"node_errors": nodeErrs})
		return
	}
	if missing := s.missingAssetsLocked(wf); len(missing) > 0 {
		fail(http.StatusUnprocessableEntity, "missing_asset", "referenced asset does not exist: "+strings.Join(missing, ", "), map[string]any{"asset_ids": missing})
		return
	}
	if len(s.queue) >= s.opts.QueueLimit {
		fail(http.StatusTooManyRequests, "queue_full", "the queue is full; retry later", nil)
		return
	}
	j := s.createJobLocked(wf, extra, now)
	rec := s.renderLocked(r, j, now)
	s.mu.Unlock()
	w.Header().Set("Location", rec.URLs.Self)
	writeJSON(w, http.StatusCreated, rec)
}

// refusal is an error answer that refuses a request before anything is stored.
type refusal struct {
	status    int
	code, msg string
	details   any
}

// readSubmission reads a job submission's body: a JSON object without reserved fields, with an
// API-format workflow (a UI export is named as such) and a valid extra_data.
func readSubmission(r *http.Request) (wf, extra map[string]any, refused *refusal) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	if err != nil {
		return nil, nil, &refusal{http.StatusBadRequest, "invalid_request", "cannot read the request body", nil}
	}
	var top map[string]any
	if err := json.Unmarshal(body, &top); err != nil || top == nil {
		return nil, nil, &refusal{http.StatusBadRequest, "invalid_request", "the body must be a JSON object", nil}
	}
	for _, f := range []string{"webhook_url", "inputs"} {
		if _, present := top[f]; present {
			return nil, nil, &refusal{http.StatusUnprocessableEntity, "reserved_field", "the field " + strconv.Quote(f) + " is reserved", map[string]any{"field": f}}
		}
	}
	uiExport := &refusal{http.StatusUnprocessableEntity, "workflow_format_ui", "this is a UI-format export; submit the API-format workflow", nil}
	rawWF, hasWF := top["workflow"]
	if !hasWF && isUIFormat(top) {
		return nil, nil, uiExport
	}
	wf, ok := rawWF.(map[string]any)
	switch {
	case !ok:
		return nil, nil, &refusal{http.StatusUnprocessableEntity, "invalid_request", "workflow is required and must be an object", map[string]any{"field": "workflow"}}
	case isUIFormat(wf):
		return nil, nil, uiExport
	}
	extra, msg := checkExtraData(top["extra_data"])
	if msg != "" {
		return nil, nil, &refusal{http.StatusUnprocessableEntity, "invalid_request", msg, map[string]any{"field": "extra_data"}}
	}
	return wf, extra, nil
}

// checkExtraData enforces the closed extra_data object (absent or null: empty).
func checkExtraData(v any) (map[string]any, string) {
	if v == nil {
		return map[string]any{}, ""
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, "extra_data must be an object"
	}
	for k, val := range m {
		if !extraDataKeys[k] {
			return nil, "extra_data does not accept the key " + strconv.Quote(k)
		}
		if _, isStr := val.(string); !isStr {
			return nil, "extra_data." + k + " must be a string"
		}
	}
	return m, ""
}

// createJobLocked records a validated workflow as a queued job; s.mu must be held.
func (s *Server) createJobLocked(wf, extra map[string]any, now time.Time) *job {
	return s.enqueueJobLocked(wf, extra, now, false)
}

// enqueueJobLocked records a validated workflow as a queued job; v1 marks a prompt submitted
// through the v1 interface, whose events also go to the v1 socket. s.mu must be held.
func (s *Server) enqueueJobLocked(wf, extra map[string]any, now time.Time, v1 bool) *job {
	ctx, cancel := context.WithCancel(context.Background())
	j := &job{
		v1:        v1,
		id:        uuid.NewString(),
		status:    statusQueued,
		createdAt: now,
		expiresAt: now.Add(s.opts.Retention),
		workflow:  wf,
		extraData: extra,
		names:     map[string]int{},
		changed:   make(chan struct{}),
		ctx:       ctx,
		cancel:    cancel,
	}
	s.jobs[j.id] = j
	s.jobOrder = append(s.jobOrder, j.id)
	s.queue = append(s.queue, j)
	s.emitStatusLocked(j)
	s.logLocked(j, "got prompt")
	s.workCond.Signal()
	return j
}

func (s *Server) handleGetJob(w http.ResponseWriter, r *http.Request) {
	now := s.now()
	j := s.lockJobOr404(w, r, now)
	if j == nil {
		return
	}
	if wait := s.readTooSoonLocked(j, now); wait > 0 {
		s.mu.Unlock()
		w.Header().Set("Retry-After", strconv.Itoa(wait))
		writeError(w, http.StatusTooManyRequests, "rate_limited", "this job is read too often; retry later", nil)
		return
	}
	rec := s.renderLocked(r, j, now)
	if isTerminal(rec.Status) && j.endReadAt.IsZero() {
		j.endReadAt = now
	}
	s.mu.Unlock()
	s.setReadRetryAfter(w, rec.Status)
	writeJSON(w, http.StatusOK, rec)
}

// EndRead reports, for a job that ended, when it started and ended (its started_at and
// completed_at) and when a read of the job first answered that it had ended (all on the
// server's clock): how late a client saw the end, give or take the answer's way back. ok is
// false until such a read was answered.
func (s *Server) EndRead(id string) (started, completed, read time.Time, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	j := s.jobs[id]
	if j == nil || j.endReadAt.IsZero() {
		return time.Time{}, time.Time{}, time.Time{}, false
	}
	return j.startedAt, j.completedAt, j.endReadAt, true
}

// readTooSoonLocked, with ReadMinInterval, returns the whole seconds (at least 1) a read of j
// coming at now must wait, or 0 when it may be answered, which it records. s.mu must be held.
func (s *Server) readTooSoonLocked(j *job, now time.Time) int {
	if s.opts.ReadMinInterval <= 0 {
		return 0
	}
	if left := j.lastRead.Add(s.opts.ReadMinInterval).Sub(now); !j.lastRead.IsZero() && left > 0 {
		return int(max(1, (left+time.Second-1)/time.Second))
	}
	j.lastRead = now
	return 0
}

// setReadRetryAfter asks, with ReadRetryAfter, pollers of a job that has not ended to come back
// no sooner than that.
func (s *Server) setReadRetryAfter(w http.ResponseWriter, status string) {
	if s.opts.ReadRetryAfter > 0 && !isTerminal(status) {
		w.Header().Set("Retry-After", strconv.Itoa(s.opts.ReadRetryAfter))
	}
}

func (s *Server) handleCancel(w http.ResponseWriter, r *http.Request) {
	now := s.now()
	j := s.lockJobOr404(w, r, now)
	if j == nil {
		return
	}
	switch j.status {
	case statusQueued:
		s.removeFromQueueLocked(j)
		s.finishLocked(j, statusCanceled, now)
		s.logLocked(j, "canceled while queued")
	case statusRunning:
		s.setStatusLocked(j, statusCanceling)
		s.logLocked(j, "cancel requested")
		j.cancel() // the engine notices at the next step or node boundary
	}
	rec := s.renderLocked(r, j, now)
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, rec)
}

func (s *Server) handleLogs(w http.ResponseWriter, r *http.Request) {
	j := s.lockJobOr404(w, r, s.now())
	if j == nil {
		return
	}
	text := j.logs.String()
	s.mu.Unlock()
	if text == "" {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Content-Length", strconv.Itoa(len(text)))
	_, _ = io.WriteString(w, text)
}

// ---- inspection helpers for tests ----

// JobCount reports how many jobs were created (purged ones included).
func (s *Server) JobCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.jobOrder)
}

// JobIDs lists the ids of the jobs still on record, in creation order.
func (s *Server) JobIDs() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	ids := make([]string, 0, len(s.jobOrder))
	for _, id := range s.jobOrder {
		if s.jobs[id] != nil {
			ids = append(ids, id)
		}
	}
	return ids
}

// JobStatus reports a job's status (after lazy expiry) and whether it is on record.
func (s *Server) JobStatus(id string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	j := s.getJobLocked(id, s.now())
	if j == nil {
		return "", false
	}
	return j.status, true
}

// JobExtraData returns a copy of the extra_data the job received (nil for an unknown job).
func (s *Server) JobExtraData(id string) map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	j := s.jobs[id]
	if j == nil {
		return nil
	}
	out := make(map[string]any, len(j.extraData))
	for k, v := range j.extraData {
		out[k] = v
	}
	return out
}

// JobInput returns the value of a node's input in the workflow the job received (false for an
// unknown job, node or input): what tells apart the jobs of a batch's rows, whose workflows
// differ in a row's values.
func (s *Server) JobInput(id, node, input string) (any, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	j := s.jobs[id]
	if j == nil {
		return nil, false
	}
	n, _ := j.workflow[node].(map[string]any)
	inputs, _ := n["inputs"].(map[string]any)
	v, ok := inputs[input]
	return v, ok
}

// ExpireJob ends a job's retention now: status expired, expires_at in the past,
// outputs and their assets gone.
func (s *Server) ExpireJob(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if j := s.jobs[id]; j != nil && j.status != statusExpired {
		now := s.now()
		j.expiresAt = now.Add(-time.Second)
		s.expireIfDueLocked(j, now)
	}
}

// PurgeJob forgets a job entirely: GET answers 404 not_found afterwards.
// Its Idempotency-Key stays claimed.
func (s *Server) PurgeJob(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	j := s.jobs[id]
	if j == nil {
		return
	}
	// Expire the record first: a running execution then commits nothing more and
	// open event streams end.
	j.expiresAt = s.now().Add(-time.Second)
	s.expireIfDueLocked(j, s.now())
	delete(s.jobs, id)
}

// JobSpan is the server's view of the jobs still on record: when the first was created, the
// first started and the last completed (zero when none has), and how long they ran in all.
type JobSpan struct {
	FirstCreated, FirstStarted, LastCompleted time.Time
	Busy                                      time.Duration   // sum of started-to-completed over the jobs that completed
	Lifetimes                                 []time.Duration // created-to-completed of each job that completed
}

// Span returns the JobSpan of the jobs created since (all of them when since is zero).
func (s *Server) Span(since time.Time) JobSpan {
	s.mu.Lock()
	defer s.mu.Unlock()
	var sp JobSpan
	earliest := func(t *time.Time, v time.Time) {
		if !v.IsZero() && (t.IsZero() || v.Before(*t)) {
			*t = v
		}
	}
	for _, j := range s.jobs {
		if j.createdAt.Before(since) {
			continue
		}
		earliest(&sp.FirstCreated, j.createdAt)
		earliest(&sp.FirstStarted, j.startedAt)
		if !j.completedAt.IsZero() {
			if j.completedAt.After(sp.LastCompleted) {
				sp.LastCompleted = j.completedAt
			}
			if !j.startedAt.IsZero() {
				sp.Busy += j.completedAt.Sub(j.startedAt)
			}
			sp.Lifetimes = append(sp.Lifetimes, j.completedAt.Sub(j.createdAt))
		}
	}
	return sp
}
