package emulator

import (
	"errors"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/svc-org/terraform-provider-svc/internal/emulator/registry"
	"github.com/svc-org/terraform-provider-svc/internal/emulator/router"
	"github.com/svc-org/terraform-provider-svc/internal/emulator/wire"
)

// Faults of the whole service rather than of one request:
//
//   - an outage: a gateway in front of a service that is down answers every request of every
//     API 503 with a Retry-After before it reaches the service (nothing is created, nothing
//     read), from a time on the server's clock (Options.Now) for a while;
//   - a restart: the process is gone, nothing listens and connections are refused; it comes
//     back on the same address with every job as it was, the jobs having run meanwhile (they
//     live in the Server; only the listener closes and reopens).
//
// Either can start at a time of the caller's choosing or a while after the first submission
// the server receives, which is what the command line offers; an outage can also start just
// after the nth request of one operation (a download under way, say).

// DefaultOutageRetryAfter is the Retry-After, in seconds, of an outage that names none.
const DefaultOutageRetryAfter = 2

// submitOps are the requests that submit work; the first of them starts the faults armed to
// begin a while after the first submission.
var submitOps = map[string]bool{OpSubmitJob: true, OpV1Prompt: true, OpSubmitRequest: true, OpInvokeModel: true}

// OutageReport is one outage as the server saw it: when it began and ended (on the server's
// clock) and how many requests it answered in each second from From.
type OutageReport struct {
	From, To  time.Time
	PerSecond []int
}

// Downtime is one span during which the server did not listen (wall clock).
type Downtime struct{ From, To time.Time }

type outage struct {
	from       time.Time     // zero until its start is known (armed after the first submission)
	after      time.Duration // with a zero from: how long after the first submission it begins
	afterOp    string        // with a zero from: it begins just after the afterN-th request of afterOp instead
	afterN     int
	span       time.Duration
	retryAfter int
	perSecond  []int
}

// window reports whether now is inside the outage.
func (o *outage) covers(now time.Time) bool {
	return !o.from.IsZero() && !now.Before(o.from) && now.Before(o.from.Add(o.span))
}

type pendingRestart struct {
	after, down time.Duration
	afterOp     string // when set, the restart begins after past the afterN-th request of afterOp, not the first submission
	afterN      int
}

type wholeServiceFaults struct {
	mu          sync.Mutex
	outages     []*outage
	restarts    []pendingRestart // armed after the first submission, not yet started
	firstSubmit time.Time        // on the server's clock; zero until then
	downtimes   []Downtime
	resumeErr   error
}

// Outage makes every request of every API answer 503 with Retry-After: retryAfter (seconds;
// DefaultOutageRetryAfter when 0 or less) from from, on the server's clock, for d. The body is
// each API's error shape: upstream_error in the v2 envelope (v2 jobs, v1 cloud), the router's
// service_unavailable, the registry's. Requests are counted as usual (Requests). Outages may
// overlap; the earliest armed answers.
func (s *Server) Outage(from time.Time, d time.Duration, retryAfter int) {
	s.armOutage(&outage{from: from, span: d, retryAfter: retryAfter})
}

// OutageAfterSubmission is Outage from after past the first submission the server receives
// (a v2 job, a v1 prompt, a router request), or past the one it already received.
func (s *Server) OutageAfterSubmission(after, d time.Duration, retryAfter int) {
	s.armOutage(&outage{after: after, span: d, retryAfter: retryAfter})
}

// OutageAfterRequest is Outage from just after the nth request of op the server receives
// (counted from now; that request is answered as usual, or as a fault injected for it says), for
// d: a download cut short by a Cut fault on its first request, then an outage, say.
func (s *Server) OutageAfterRequest(op string, n int, d time.Duration, retryAfter int) {
	s.armOutage(&outage{afterOp: op, afterN: max(n, 1), span: d, retryAfter: retryAfter})
}

func (s *Server) armOutage(o *outage) {
	if o.retryAfter <= 0 {
		o.retryAfter = DefaultOutageRetryAfter
	}
	st := &s.whole
	st.mu.Lock()
	defer st.mu.Unlock()
	if o.from.IsZero() && o.afterOp == "" && !st.firstSubmit.IsZero() {
		o.from = st.firstSubmit.Add(o.after)
	}
	st.outages = append(st.outages, o)
}

// Outages reports every outage whose start is known, in the order they were armed.
func (s *Server) Outages() []OutageReport {
	st := &s.whole
	st.mu.Lock()
	defer st.mu.Unlock()
	var out []OutageReport
	for _, o := range st.outages {
		if !o.from.IsZero() {
			out = append(out, OutageReport{From: o.from, To: o.from.Add(o.span), PerSecond: append([]int(nil), o.perSecond...)})
		}
	}
	return out
}

// outageAnswer notes a request of op and reports whether an outage answers it, and with what
// Retry-After, or whether a restart it arms with no wait takes the server down before it is
// answered (restartNow, the downtime; the caller restarts the server and leaves the request
// unanswered). The first submission starts what was armed to follow it.
func (s *Server) outageAnswer(op string) (retryAfter int, down bool, restartNow time.Duration) {
	now := s.opts.Now()
	st := &s.whole
	st.mu.Lock()
	defer st.mu.Unlock()
	if submitOps[op] && st.firstSubmit.IsZero() {
		st.firstSubmit = now
		for _, o := range st.outages {
			if o.from.IsZero() && o.afterOp == "" {
				o.from = now.Add(o.after)
			}
		}
		kept := st.restarts[:0]
		for _, r := range st.restarts {
			if r.afterOp != "" {
				kept = append(kept, r)
				continue
			}
			s.restartAfter(r.after, r.down)
		}
		st.restarts = kept
	}
	for _, o := range st.outages {
		if o.covers(now) {
			sec := int(now.Sub(o.from) / time.Second)
			for len(o.perSecond) <= sec {
				o.perSecond = append(o.perSecond, 0)
			}
			o.perSecond[sec]++
			return o.retryAfter, true, 0
		}
	}
	restartNow = s.armRestartsAfterLocked(op)
	for _, o := range st.outages { // after the check: the request that starts one is answered
		if o.from.IsZero() && o.afterOp == op {
			if o.afterN--; o.afterN == 0 {
				o.from = now
			}
		}
	}
	return 0, false, restartNow
}

// answeredByAnOutage handles a request of op the service's outages or restarts take: an outage
// answers it as a gateway would, a restart it arms with no wait takes the server down before it
// is answered. It reports whether the request was taken so.
func (s *Server) answeredByAnOutage(w http.ResponseWriter, op string) bool {
	retryAfter, down, restartNow := s.outageAnswer(op)
	switch {
	case down:
		writeOutage(w, op, retryAfter)
	case restartNow > 0:
		_ = s.Restart(restartNow) // closes this request's connection too; fails only when already down
	default:
		return false
	}
	return true
}

// writeOutage answers a request of op as a gateway in front of a service that is down.
func writeOutage(w http.ResponseWriter, op string, retryAfter int) {
	const msg = "the service is temporarily unavailable; retry later"
	ra := strconv.Itoa(retryAfter)
	switch {
	case strings.HasPrefix(op, "router."):
		router.WriteError(w, http.StatusServiceUnavailable, "service_unavailable", msg, map[string]string{"Retry-After": ra})
	case op == registry.OpClaim || op == registry.OpTranslations || op == registry.OpDelete:
		w.Header().Set("Retry-After", ra)
		wire.WriteJSON(w, http.StatusServiceUnavailable, map[string]string{"error": "upstream_error", "message": msg})
	default:
		w.Header().Set("Retry-After", ra)
		writeError(w, http.StatusServiceUnavailable, "upstream_error", msg, nil)
	}
}

// StopListening answers the submissions under way (submissionDrain), then closes the server's
// listener and every connection open on it (event streams and v1 sockets included), as a
// process that went away: connections are refused until ResumeListening. Jobs go on running; nothing of their state is lost.
func (s *Server) StopListening() error {
	s.mu.Lock()
	srv := s.httpSrv
	s.httpSrv = nil
	closed := s.closed
	s.mu.Unlock()
	if srv == nil || closed {
		return errors.New("emulator: not listening")
	}
	s.submissions.drain(submissionDrainLimit)
	// Noted first: a client that sees its connection close finds the downtime already begun.
	s.whole.mu.Lock()
	s.whole.downtimes = append(s.whole.downtimes, Downtime{From: time.Now()})
	s.whole.mu.Unlock()
	err := srv.Close()
	s.DropSockets() // hijacked connections: http.Server.Close does not know them
	return err
}

// submissionDrainLimit is how long a restart waits for the submissions under way to be
// answered before it closes their connections anyway.
const submissionDrainLimit = 2 * time.Second

// submissionDrain lets a restart answer the submissions under way before it goes down, as a
// service draining its requests does in a deploy: a restart never creates a job and loses its
// answer (that is a fault of its own, Fault.AfterHandling with Drop). A submission that arrives
// once the drain began is not handled at all.
type submissionDrain struct {
	mu       sync.Mutex
	underWay int
	draining bool
	idle     chan struct{} // closed when underWay reaches 0 during a drain
}

// enter reports whether a submission may be handled, counting it under way.
func (d *submissionDrain) enter() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.draining {
		return false
	}
	d.underWay++
	return true
}

// leave sends the submission's answer on its way and counts it done.
func (d *submissionDrain) leave(w http.ResponseWriter) {
	_ = http.NewResponseController(w).Flush()
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.underWay--; d.underWay == 0 && d.idle != nil {
		close(d.idle)
		d.idle = nil
	}
}

// drain refuses new submissions and waits, at most limit, for those under way.
func (d *submissionDrain) drain(limit time.Duration) {
	d.mu.Lock()
	d.draining = true
	if d.underWay == 0 {
		d.mu.Unlock()
		return
	}
	idle := make(chan struct{})
	d.idle = idle
	d.mu.Unlock()
	t := time.NewTimer(limit)
	defer t.Stop()
	select {
	case <-idle:
	case <-t.C:
	}
}

// reopen lets submissions in again.
func (d *submissionDrain) reopen() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.draining, d.idle = false, nil
}

// ResumeListening listens again on the address StopListening closed, with every job as it is.
func (s *Server) ResumeListening() error {
	raw, _ := s.listenerURL.Load().(string)
	u, err := url.Parse(raw)
	if raw == "" || err != nil {
		return errors.New("emulator: never listened")
	}
	ln, err := listenAgain(u.Host)
	if err != nil {
		return err
	}
	s.submissions.reopen()
	if err := s.serve(ln); err != nil {
		return err
	}
	s.whole.mu.Lock()
	if n := len(s.whole.downtimes); n > 0 && s.whole.downtimes[n-1].To.IsZero() {
		s.whole.downtimes[n-1].To = time.Now()
	}
	s.whole.mu.Unlock()
	return nil
}

// listenAgain listens on addr, trying for a few seconds while the address is still taken.
func listenAgain(addr string) (net.Listener, error) {
	deadline := time.Now().Add(5 * time.Second)
	for {
		ln, err := net.Listen("tcp", addr)
		if err == nil || time.Now().After(deadline) {
			return ln, err
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Restart stops listening now and listens again, on the same address, after down (wall
// clock: the listener is a real socket). Connections are refused meanwhile; jobs run on.
func (s *Server) Restart(down time.Duration) error {
	if err := s.StopListening(); err != nil {
		return err
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		t := time.NewTimer(down)
		defer t.Stop()
		select {
		case <-t.C:
		case <-s.done:
			return
		}
		if err := s.ResumeListening(); err != nil {
			s.whole.mu.Lock()
			s.whole.resumeErr = err
			s.whole.mu.Unlock()
		}
	}()
	return nil
}

// RestartAfterSubmission is Restart(down), after after past the first submission the server
// receives (or the one it already received).
func (s *Server) RestartAfterSubmission(after, down time.Duration) {
	st := &s.whole
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.firstSubmit.IsZero() {
		st.restarts = append(st.restarts, pendingRestart{after: after, down: down})
		return
	}
	s.restartAfter(after-s.opts.Now().Sub(st.firstSubmit), down)
}

// RestartAfterRequest is Restart(down), after past the nth request of op the server receives
// (counted from now): a download cut short by the restart, say. With no wait (after <= 0) the
// server goes down as that request arrives, and it is never answered: its connection closes.
func (s *Server) RestartAfterRequest(op string, n int, after, down time.Duration) {
	st := &s.whole
	st.mu.Lock()
	defer st.mu.Unlock()
	st.restarts = append(st.restarts, pendingRestart{after: after, down: down, afterOp: op, afterN: max(n, 1)})
}

// armRestartsAfterLocked counts a request of op towards the restarts armed after requests of
// it, starting those whose count is reached, and returns the downtime of one armed with no wait,
// which the request that reached it starts itself (0: none); s.whole.mu must be held.
func (s *Server) armRestartsAfterLocked(op string) (restartNow time.Duration) {
	st := &s.whole
	kept := st.restarts[:0]
	for _, r := range st.restarts {
		if r.afterOp == op {
			if r.afterN--; r.afterN == 0 {
				if r.after <= 0 {
					restartNow = max(restartNow, r.down)
				} else {
					s.restartAfter(r.after, r.down)
				}
				continue
			}
		}
		kept = append(kept, r)
	}
	st.restarts = kept
	return restartNow
}

// restartAfter restarts the server after a wait (none when it is not positive).
func (s *Server) restartAfter(wait, down time.Duration) {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		t := time.NewTimer(max(wait, 0))
		defer t.Stop()
		select {
		case <-t.C:
			_ = s.Restart(down) // fails only when the server is closed or already down
		case <-s.done:
		}
	}()
}

// Downtimes reports when the server stopped listening and when it listened again (To is zero
// while it is still down), and the error of the last return that failed, if any.
func (s *Server) Downtimes() ([]Downtime, error) {
	s.whole.mu.Lock()
	defer s.whole.mu.Unlock()
	return append([]Downtime(nil), s.whole.downtimes...), s.whole.resumeErr
}
