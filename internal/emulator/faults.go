package emulator

import (
	"bytes"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Operation names used for request counting and fault injection.
const (
	OpSubmitJob    = "jobs.submit"
	OpGetJob       = "jobs.get"
	OpCancelJob    = "jobs.cancel"
	OpJobEvents    = "jobs.events"
	OpJobLogs      = "jobs.logs"
	OpGetAsset     = "assets.get"
	OpAssetContent = "assets.content"
)

// Fault replaces or disturbs the handling of requests for one operation.
//
// A fault with neither Status nor Drop only delays (Delay) the request, which is
// then handled normally. With AfterHandling the real handler runs first and its
// response is discarded: the client sees the fault, the server kept the effect.
// An empty Body sends no body.
type Fault struct {
	Op            string            // one of the Op* constants
	Nth           int               // apply to the Nth request of Op (1-based); 0 = every request
	Times         int               // consecutive requests affected starting at Nth (default 1; ignored when Nth==0)
	Status        int               // response status to send instead (0 with Drop)
	Body          string            // raw body, e.g. an HTML page or truncated JSON
	ContentType   string            // default application/json when Body starts with '{' else text/html
	Headers       map[string]string // extra headers (e.g. Retry-After, X-Svc-Request-Id)
	Delay         time.Duration     // sleep before handling (respect request ctx cancellation)
	Drop          bool              // hijack and close the connection without any response
	AfterHandling bool              // run the real handler first (so e.g. the job IS created), then discard its response and send the fault (or drop): a lost response

	// Hostile answers (hostile_answers.go). Headers also apply to an answer the real handler
	// gives, so Headers{"Content-Encoding": "gzip"} serves an asset's own bytes as if gzip-encoded.
	Endless    bool // 200 with the real headers but no Content-Length, then zeros until the client goes
	StallAfter int  // with Stall: bytes of the real body sent before the answer stalls
	Stall      bool // send the real headers (and StallAfter bytes), then nothing until the client goes
	// Cut sends the real headers (Content-Length included) and the first CutAfter bytes of the
	// real body, then closes the connection: a body cut short, as by a proxy or a restart.
	Cut           bool
	CutAfter      int
	Outputs       int // a JSON job record's outputs are padded to this many, each a distinct asset id
	RepeatOutputs int // each output of a JSON job record is listed this many times (same asset id)
}

func (f Fault) matches(op string, n int) bool {
	if f.Op != op {
		return false
	}
	if f.Nth <= 0 {
		return true
	}
	times := f.Times
	if times <= 0 {
		times = 1
	}
	return n >= f.Nth && n < f.Nth+times
}

type faultState struct {
	mu         sync.Mutex
	faults     []Fault
	counts     map[string]int
	headers    map[string]http.Header
	submitKeys []string // the Idempotency-Key of every job submission, in order
}

func (fs *faultState) init() {
	fs.counts = map[string]int{}
	fs.headers = map[string]http.Header{}
}

// record counts a request for op, remembers its headers and returns the first
// fault that applies to it, if any.
func (fs *faultState) record(op string, r *http.Request) *Fault {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	fs.counts[op]++
	fs.headers[op] = r.Header.Clone()
	if op == OpSubmitJob {
		fs.submitKeys = append(fs.submitKeys, r.Header.Get("Idempotency-Key"))
	}
	n := fs.counts[op]
	for _, f := range fs.faults {
		if f.matches(op, n) {
			return &f
		}
	}
	return nil
}

// Inject adds a fault. Faults are checked in the order they were injected; the
// first that matches a request applies.
func (s *Server) Inject(f Fault) {
	s.faults.mu.Lock()
	defer s.faults.mu.Unlock()
	s.faults.faults = append(s.faults.faults, f)
}

// ClearFaults removes every injected fault. Request counts are kept.
func (s *Server) ClearFaults() {
	s.faults.mu.Lock()
	defer s.faults.mu.Unlock()
	s.faults.faults = nil
}

// Requests reports how many requests were received for op, faulted ones included.
func (s *Server) Requests(op string) int {
	s.faults.mu.Lock()
	defer s.faults.mu.Unlock()
	return s.faults.counts[op]
}

// TotalRequests reports how many requests were received for every op together, faulted ones
// included: a test that wants no request at all counts them here.
func (s *Server) TotalRequests() int {
	s.faults.mu.Lock()
	defer s.faults.mu.Unlock()
	total := 0
	for _, n := range s.faults.counts {
		total += n
	}
	return total
}

// SubmitKeys returns the Idempotency-Key of every job submission received, faulted ones
// included, in order ("" for none): a resend shows as the same key twice.
func (s *Server) SubmitKeys() []string {
	s.faults.mu.Lock()
	defer s.faults.mu.Unlock()
	return append([]string(nil), s.faults.submitKeys...)
}

// LastRequestHeader returns a copy of the headers of the last request for op, or nil.
func (s *Server) LastRequestHeader(op string) http.Header {
	s.faults.mu.Lock()
	defer s.faults.mu.Unlock()
	return s.faults.headers[op].Clone()
}

// applyFault handles one request under fault f; next is the real (authenticated) handler.
func (s *Server) applyFault(f Fault, w http.ResponseWriter, r *http.Request, next http.HandlerFunc) {
	delay := func() bool {
		if f.Delay <= 0 {
			return true
		}
		t := time.NewTimer(f.Delay)
		defer t.Stop()
		select {
		case <-t.C:
			return true
		case <-r.Context().Done():
			return false
		case <-s.done:
			return false
		}
	}
	// Without AfterHandling the real handler runs only if the fault lets it; with it, the handler
	// runs first (its effect stays) and its answer is replayed or replaced.
	answer := func() { next(w, r) }
	if f.AfterHandling {
		rec := newRecorder()
		next(rec, r)
		answer = func() { rec.replay(w) }
	}
	if !delay() {
		return
	}
	switch {
	case f.Drop:
		dropConnection(w)
	case f.Status != 0:
		writeFault(w, f)
	case f.hostile():
		s.answerHostile(f, w, r, next)
	default:
		for k, v := range f.Headers {
			w.Header().Set(k, v)
		}
		answer()
	}
}

func writeFault(w http.ResponseWriter, f Fault) {
	h := w.Header()
	ct := f.ContentType
	if ct == "" && f.Body != "" {
		ct = "text/html; charset=utf-8"
		if strings.HasPrefix(strings.TrimSpace(f.Body), "{") {
			ct = "application/json"
		}
	}
	if ct != "" {
		h.Set("Content-Type", ct)
	}
	for k, v := range f.Headers {
		h.Set(k, v)
	}
	w.WriteHeader(f.Status)
	_, _ = w.Write([]byte(f.Body))
}

// dropConnection closes the connection without writing a response.
func dropConnection(w http.ResponseWriter) {
	if hj, ok := w.(http.Hijacker); ok {
		if conn, _, err := hj.Hijack(); err == nil {
			_ = conn.Close()
			return
		}
	}
	// HTTP/2 or a wrapped writer: abort the response instead.
	panic(http.ErrAbortHandler)
}

// recorder captures a handler's response so a fault can discard or replay it.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func newRecorder() *recorder { return &recorder{header: http.Header{}} }

func (r *recorder) Header() http.Header { return r.header }
func (r *recorder) WriteHeader(status int) {
	if r.status == 0 {
		r.status = status
	}
}
func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.body.Write(b)
}
func (r *recorder) Flush() {}

func (r *recorder) replay(w http.ResponseWriter) {
	for k, v := range r.header {
		w.Header()[k] = v
	}
	if r.status == 0 {
		r.status = http.StatusOK
	}
	w.WriteHeader(r.status)
	_, _ = w.Write(r.body.Bytes())
}
