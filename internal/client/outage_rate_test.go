package client

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"testing/synctest"
	"time"
)

// outageSim puts a gateway in front of a simJobs service, on the test's clock: requests take
// latency there and back, and from at after the first submission for span the gateway answers
// every request 503 (with Retry-After: retryAfter seconds, when positive) or, with refuse, no
// connection is accepted and the event streams open are cut. Every request the outage meets is counted by the second it arrived in.
type outageSim struct {
	*simJobs
	latency    time.Duration
	at, span   time.Duration
	retryAfter int
	refuse     bool

	mu        sync.Mutex
	perSecond []int
}

func (o *outageSim) RoundTrip(req *http.Request) (*http.Response, error) {
	time.Sleep(o.latency / 2)
	if o.down(time.Now()) {
		if req.Body != nil {
			_ = req.Body.Close()
		}
		time.Sleep(o.latency / 2)
		if o.refuse {
			return nil, &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
		}
		h := http.Header{"Content-Type": {"application/json"}}
		if o.retryAfter > 0 {
			h.Set("Retry-After", fmt.Sprint(o.retryAfter))
		}
		body := `{"error":{"code":"upstream_error","message":"the service is temporarily unavailable"}}`
		return &http.Response{StatusCode: http.StatusServiceUnavailable, Header: h, Body: io.NopCloser(strings.NewReader(body)),
			ContentLength: int64(len(body)), Request: req}, nil
	}
	resp, err := o.simJobs.RoundTrip(req)
	if pipe, ok := bodyOf(resp).(*io.PipeReader); ok && o.refuse {
		o.cutAtOutage(pipe)
	}
	time.Sleep(o.latency / 2)
	return resp, err
}

func bodyOf(resp *http.Response) io.ReadCloser {
	if resp == nil {
		return nil
	}
	return resp.Body
}

// cutAtOutage resets an event stream's connection when the service goes away (refuse): a
// restarted process drops every connection it had.
func (o *outageSim) cutAtOutage(stream *io.PipeReader) {
	o.simJobs.mu.Lock()
	start := o.began.Add(o.at)
	o.simJobs.mu.Unlock()
	if d := time.Until(start); d > 0 {
		time.AfterFunc(d, func() { stream.CloseWithError(syscall.ECONNRESET) })
	}
}

// down reports whether the outage meets a request arriving now, and counts it.
func (o *outageSim) down(now time.Time) bool {
	o.simJobs.mu.Lock()
	began := o.began
	o.simJobs.mu.Unlock()
	if began.IsZero() || now.Before(began.Add(o.at)) || !now.Before(began.Add(o.at+o.span)) {
		return false
	}
	sec := int(now.Sub(began.Add(o.at)) / time.Second)
	o.mu.Lock()
	defer o.mu.Unlock()
	for len(o.perSecond) <= sec {
		o.perSecond = append(o.perSecond, 0)
	}
	o.perSecond[sec]++
	return true
}

// simulateBatch runs a batch of rows jobs of one shape, inFlight at a time, as the provider's
// batch engine does (submit, then wait, one DurationEstimator for the batch), and fails unless
// every job succeeded. It must run inside a synctest bubble.
func simulateBatch(t *testing.T, transport http.RoundTripper, rows, inFlight int) {
	t.Helper()
	c, err := New(Config{Endpoint: "http://svc.test", HTTPClient: &http.Client{Transport: transport}})
	if err != nil {
		t.Fatal(err)
	}
	wf := json.RawMessage(`{"1":{"class_type":"EmptyImage","inputs":{"width":8}},"2":{"class_type":"SaveImage","inputs":{"images":["1",0]}}}`)
	durations := NewDurationEstimator()
	slots := make(chan struct{}, inFlight)
	var wg sync.WaitGroup
	for i := range rows {
		slots <- struct{}{}
		wg.Go(func() {
			defer func() { <-slots }()
			ctx := context.WithoutCancel(t.Context())
			job, err := c.SubmitJob(ctx, SubmitJobInput{Workflow: wf, IdempotencyKey: fmt.Sprint("key-", i)})
			if err != nil {
				t.Errorf("row %d: submit: %v", i, err)
				return
			}
			final, err := c.WaitJob(ctx, job, WaitOptions{Durations: durations, Shape: WorkflowShape(wf)})
			if err != nil || final.Status != JobSucceeded {
				t.Errorf("row %d: WaitJob = %+v, %v", i, final, err)
			}
		})
	}
	wg.Wait()
}

// During a 60 s outage, a batch of 1,000 rows with 64 in flight sends at most 5 requests in
// every second of it, the first included, counted where they arrive: its waits learn together
// that the service is down (one scout after the first failure, then one probe at a time), and
// its requests leave one by one, a few at most unanswered, so that few are under way when the
// outage begins. The outage begins 1 s after the first submission, when the rows' first reads
// fall due together, or as the first rows end; the service answers in 1 ms, 20 ms or 100 ms.
// Across a 503 with and without Retry-After, refused connections, and a friendly service
// (event streams) or a strict one (no streams, Retry-After on every read of an unfinished job).
func TestBatchOutageRequestRate(t *testing.T) {
	t.Parallel()
	const rows, inFlight, maxPerSecond = 1000, 64, 5
	tests := []struct {
		name       string
		strict     bool
		retryAfter int
		refuse     bool
		latency    time.Duration // there and back (default 1 ms)
		at         time.Duration // after the first submission (default 1 s)
	}{
		{name: "friendly, 503 with Retry-After", retryAfter: 2},
		{name: "friendly, 503 without Retry-After"},
		{name: "friendly, refused", refuse: true},
		{name: "strict, 503 with Retry-After", strict: true, retryAfter: 2},
		{name: "strict, 503 without Retry-After", strict: true},
		{name: "strict, refused", strict: true, refuse: true},
		{name: "friendly, 503, 20 ms away", retryAfter: 2, latency: 20 * time.Millisecond},
		{name: "strict, 503, 20 ms away", strict: true, retryAfter: 2, latency: 20 * time.Millisecond},
		{name: "friendly, refused, 100 ms away", refuse: true, latency: 100 * time.Millisecond},
		{name: "strict, 503, 100 ms away", strict: true, latency: 100 * time.Millisecond},
		{name: "strict, 503 as the first rows end", strict: true, retryAfter: 2, at: 3100 * time.Millisecond},
		{name: "friendly, 503 as the first rows end", retryAfter: 2, at: 3100 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var perSecond []int
			synctest.Test(t, func(t *testing.T) {
				jobs := newSimJobs(inFlight, func(int) time.Duration { return 3 * time.Second })
				if tt.strict {
					jobs.retryAfter = 1
				} else {
					jobs.events = true
				}
				sim := &outageSim{simJobs: jobs, latency: cmp.Or(tt.latency, time.Millisecond), at: cmp.Or(tt.at, time.Second), span: 60 * time.Second,
					retryAfter: tt.retryAfter, refuse: tt.refuse}
				simulateBatch(t, sim, rows, inFlight)
				perSecond = sim.perSecond
			})
			t.Logf("requests met by the outage, per second: %v", perSecond)
			if total := sumInts(perSecond); total < outageFailures {
				t.Fatalf("the outage met %d requests; want at least %d (the failures that tell the client)", total, outageFailures)
			}
			for sec, n := range perSecond {
				if n > maxPerSecond {
					t.Errorf("second %d of the outage: %d requests; want at most %d", sec, n, maxPerSecond)
				}
			}
		})
	}
}

// Whenever an outage begins (every 100 ms from 1 s to 7 s after the first submission, every
// 300 ms under the race detector: the rows' first reads, their ends and the next rows'
// submissions, event streams and reads), a batch of 200 rows with 64 in flight sends at most 5
// requests in its first second, on a
// service answering in 1, 5 or 15 ms (a loaded machine): the requests under way when it began,
// the client's window at most, then the gate's scout. Slower answers open the window further
// to keep 250 requests a second leaving (up to 14 in the first second 50 ms away).
func TestOutageRequestRateWheneverItBegins(t *testing.T) {
	t.Parallel()
	const rows, inFlight, maxPerSecond = 200, 64, 5
	for _, latency := range []time.Duration{time.Millisecond, 5 * time.Millisecond, 15 * time.Millisecond} {
		for _, strict := range []bool{false, true} {
			t.Run(fmt.Sprintf("%v away, strict %v", latency, strict), func(t *testing.T) {
				t.Parallel()
				step := 100 * time.Millisecond
				if raceDetector { // the same bursts, fewer start points in them
					step = 300 * time.Millisecond
				}
				for at := time.Second; at < 7*time.Second; at += step {
					first := firstSecondOfOutage(t, latency, at, strict, rows, inFlight)
					if first > maxPerSecond {
						t.Errorf("an outage from %v met %d requests in its first second; want at most %d", at, first, maxPerSecond)
					}
				}
			})
		}
	}
}

// firstSecondOfOutage runs a batch through a 5 s outage from at after the first submission and
// returns the requests the outage met in its first second.
func firstSecondOfOutage(t *testing.T, latency, at time.Duration, strict bool, rows, inFlight int) int {
	t.Helper()
	first := 0
	synctest.Test(t, func(t *testing.T) {
		jobs := newSimJobs(inFlight, func(int) time.Duration { return 3 * time.Second })
		if strict {
			jobs.retryAfter = 1
		} else {
			jobs.events = true
		}
		sim := &outageSim{simJobs: jobs, latency: latency, at: at, span: 5 * time.Second, retryAfter: 2}
		simulateBatch(t, sim, rows, inFlight)
		if len(sim.perSecond) > 0 {
			first = sim.perSecond[0]
		}
	})
	return first
}

func sumInts(ns []int) int {
	total := 0
	for _, n := range ns {
		total += n
	}
	return total
}

// Once the service is back, a batch's waits find it within the gate's probe backoff, not their
// own ride-out backoffs (up to 30 s after a minute of failures): a gate that finds the service back wakes
// every wait riding out failures, and a submission's attempts wait on the gate, not on a backoff
// grown through the outage. A 40-row batch, 8 in flight, jobs of 1 s, meets a minute of refused
// connections (a restart) or of 503 without Retry-After from 1 s after the first submission; its
// last row ends within outageProbeMax of the service's return, and the 32 rows left then (four
// waves of about 1.5 s: submission, run, read).
func TestWaitsFindTheServiceBackWithTheGate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name           string
		rows, inFlight int
		refuse         bool
	}{
		{name: "refused", rows: 40, inFlight: 8, refuse: true},
		{name: "503 without Retry-After", rows: 40, inFlight: 8},
		// A lone wait has no other wait to probe for it: its own reads are the gate's probes.
		{name: "a lone wait, refused", rows: 1, inFlight: 1, refuse: true},
		{name: "a lone wait, 503 without Retry-After", rows: 1, inFlight: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			// The backoffs are jittered: the worst of ten runs.
			var worst time.Duration
			for range 10 {
				worst = max(worst, lagAfterTheServiceIsBack(t, tt.rows, tt.inFlight, tt.refuse))
			}
			t.Logf("the batch ended at worst %v after the service was back", worst)
			if want := outageProbeMax + 4*1500*time.Millisecond; worst > want {
				t.Errorf("the batch ended %v after the service was back; want at most %v", worst, want)
			}
		})
	}
}

// lagAfterTheServiceIsBack runs a batch, jobs of 1 s, through a minute of outage from 1 s after
// the first submission and returns how long after the service was back its last row ended.
func lagAfterTheServiceIsBack(t *testing.T, rows, inFlight int, refuse bool) time.Duration {
	t.Helper()
	var lag time.Duration
	synctest.Test(t, func(t *testing.T) {
		jobs := newSimJobs(inFlight, func(int) time.Duration { return time.Second })
		sim := &outageSim{simJobs: jobs, latency: time.Millisecond, at: time.Second, span: time.Minute, refuse: refuse}
		simulateBatch(t, sim, rows, inFlight)
		jobs.mu.Lock()
		back := jobs.began.Add(sim.at + sim.span)
		jobs.mu.Unlock()
		lag = time.Since(back)
	})
	return lag
}
