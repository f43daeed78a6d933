package client

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/svc-org/terraform-provider-svc/internal/emulator"
)

// simJobs is a v2 jobs service that runs in the test's process and on its clock
// (testing/synctest's, so hours pass in no time and every figure is exact): as unhelpful as the
// contract allows: no event stream (501), progress that stays at 0 until the end, optionally a
// Retry-After on every read. Jobs run in submission order, workers at once, each for the time
// runFor gives it. It counts every request by job.
type simJobs struct {
	workers    int
	runFor     func(n int) time.Duration // run time of the n-th job submitted (0 first)
	retryAfter int                       // seconds of Retry-After on every read of an unfinished job (0: none)
	// events serves each job's event stream: a status event when it starts and when it ends.
	events bool
	// startDelay is how long after its submission a job starts on a free worker (the service's
	// own latency), so that ends do not fall on the client's read times by construction.
	startDelay time.Duration

	// rateLimitAt, when set, is when (after the first submission) the service starts refusing
	// reads for rateLimitFor with 429 rate_limited and a Retry-After of that many seconds.
	rateLimitAt  time.Duration
	rateLimitFor int

	mu       sync.Mutex
	began    time.Time   // the first submission
	limited  time.Time   // when the first read was refused (zero: none yet)
	reads    []time.Time // every job read, answered or refused
	jobs     map[string]*simJob
	order    []*simJob
	freeAt   []time.Time // when each worker is next free
	requests map[string]int
}

type simJob struct {
	id                      string
	created, started, ended time.Time
}

func newSimJobs(workers int, runFor func(int) time.Duration) *simJobs {
	return &simJobs{workers: workers, runFor: runFor, startDelay: 37 * time.Millisecond, jobs: map[string]*simJob{}, requests: map[string]int{}}
}

// submit plans the job: it starts when the first worker is free (queue order), ends runFor later.
func (s *simJobs) submitLocked(now time.Time) *simJob {
	if s.freeAt == nil {
		s.freeAt = make([]time.Time, s.workers)
	}
	slices.SortFunc(s.freeAt, time.Time.Compare)
	j := &simJob{id: fmt.Sprintf("00000000-0000-4000-8000-%012d", len(s.order)), created: now}
	j.started = later(now.Add(s.startDelay), s.freeAt[0])
	j.ended = j.started.Add(s.runFor(len(s.order)))
	s.freeAt[0] = j.ended
	s.jobs[j.id] = j
	s.order = append(s.order, j)
	return j
}

func (s *simJobs) recordLocked(j *simJob, now time.Time) string {
	stamp := func(t time.Time) string { return `"` + t.UTC().Format(time.RFC3339Nano) + `"` }
	status, started, completed, position, progress, metrics := JobQueued, "null", "null", "null", "null", `{"queue_ms":null,"execution_ms":null}`
	switch {
	case !now.Before(j.ended):
		status, started, completed, progress = JobSucceeded, stamp(j.started), stamp(j.ended), `{"value":1,"nodes_done":2,"nodes_total":2}`
		metrics = fmt.Sprintf(`{"queue_ms":%d,"execution_ms":%d}`, j.started.Sub(j.created).Milliseconds(), j.ended.Sub(j.started).Milliseconds())
	case !now.Before(j.started):
		status, started, progress = JobRunning, stamp(j.started), `{"value":0,"nodes_done":0,"nodes_total":2}`
	default:
		ahead := 0
		for _, o := range s.order {
			if o != j && now.Before(o.started) && o.started.Before(j.started) {
				ahead++
			}
		}
		position = fmt.Sprint(ahead + 1)
	}
	self := "/api/v2/jobs/" + j.id
	return fmt.Sprintf(`{"id":%q,"status":%q,"created_at":%s,"started_at":%s,"completed_at":%s,"expires_at":%s,`+
		`"queue_position":%s,"progress":%s,"outputs":[],"error":null,"metrics":%s,`+
		`"urls":{"self":%q,"events":%q,"cancel":%q}}`,
		j.id, status, stamp(j.created), started, completed, stamp(j.created.Add(24*time.Hour)), position, progress, metrics,
		self, self+"/events", self+"/cancel")
}

func (s *simJobs) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		_, _ = io.Copy(io.Discard, req.Body)
		req.Body.Close()
	}
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	answer := func(code int, body string, header ...string) (*http.Response, error) {
		h := http.Header{"Content-Type": {"application/json"}}
		for i := 0; i+1 < len(header); i += 2 {
			h.Set(header[i], header[i+1])
		}
		return &http.Response{StatusCode: code, Header: h, Body: io.NopCloser(strings.NewReader(body)),
			ContentLength: int64(len(body)), Request: req}, nil
	}
	path := strings.TrimPrefix(req.URL.Path, "/api/v2/jobs")
	if req.Method == http.MethodPost && path == "" {
		if s.began.IsZero() {
			s.began = now
		}
		j := s.submitLocked(now)
		s.requests[j.id]++
		return answer(http.StatusCreated, s.recordLocked(j, now))
	}
	id, events := strings.CutSuffix(strings.TrimPrefix(path, "/"), "/events")
	j := s.jobs[id]
	if j == nil {
		return answer(http.StatusNotFound, `{"error":{"code":"not_found","message":"no such job"}}`)
	}
	s.requests[id]++
	if events && s.events {
		resp, _ := answer(http.StatusOK, "", "Content-Type", "text/event-stream")
		resp.Body, resp.ContentLength = s.streamEvents(req.Context(), j), -1
		return resp, nil
	}
	if events {
		return answer(http.StatusNotImplemented, `{"error":{"code":"not_implemented","message":"no event streams here"}}`)
	}
	s.reads = append(s.reads, now)
	if s.rateLimitAt > 0 && !now.Before(s.began.Add(s.rateLimitAt)) {
		if s.limited.IsZero() {
			s.limited = now
		}
		if now.Before(s.limited.Add(time.Duration(s.rateLimitFor) * time.Second)) {
			return answer(http.StatusTooManyRequests, `{"error":{"code":"rate_limited","message":"slow down"}}`, "Retry-After", fmt.Sprint(s.rateLimitFor))
		}
	}
	if s.retryAfter > 0 && now.Before(j.ended) {
		return answer(http.StatusOK, s.recordLocked(j, now), "Retry-After", fmt.Sprint(s.retryAfter))
	}
	return answer(http.StatusOK, s.recordLocked(j, now))
}

// streamEvents is the job's event stream: "running" when it starts, "succeeded" when it ends.
func (s *simJobs) streamEvents(ctx context.Context, j *simJob) io.ReadCloser {
	r, w := io.Pipe()
	go func() {
		defer w.Close()
		for _, ev := range []struct {
			at     time.Time
			status string
		}{{j.started, JobRunning}, {j.ended, JobSucceeded}} {
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Until(ev.at)):
			}
			if _, err := fmt.Fprintf(w, "event: status\ndata: {\"status\":%q}\n\n", ev.status); err != nil {
				return
			}
		}
	}()
	return r
}

// waitFigures is what one wait cost and how late it saw the end.
type waitFigures struct {
	run      time.Duration
	requests int // submit, event-stream probe and reads, counted at the server
	lag      time.Duration
}

// simulateApply submits n jobs of one workflow shape at once, as one apply would, waits for each
// with the provider's options (one DurationEstimator for the apply), and returns the figures of
// each job. It must run inside a synctest bubble.
func simulateApply(t *testing.T, sim *simJobs, n int) []waitFigures {
	t.Helper()
	c, err := New(Config{Endpoint: "http://svc.test", HTTPClient: &http.Client{Transport: sim}})
	if err != nil {
		t.Fatal(err)
	}
	wf := json.RawMessage(`{"1":{"class_type":"EmptyImage","inputs":{"width":8}},"2":{"class_type":"SaveImage","inputs":{"images":["1",0]}}}`)
	durations := NewDurationEstimator()
	figures := make([]waitFigures, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			job, err := c.SubmitJob(t.Context(), SubmitJobInput{Workflow: wf, IdempotencyKey: fmt.Sprint("key-", i)})
			if err != nil {
				t.Error(err)
				return
			}
			final, err := c.WaitJob(context.WithoutCancel(t.Context()), job, WaitOptions{Durations: durations, Shape: WorkflowShape(wf)})
			seen := time.Now()
			if err != nil || final.Status != JobSucceeded {
				t.Errorf("job %d: WaitJob = %+v, %v", i, final, err)
				return
			}
			sim.mu.Lock()
			j := sim.jobs[job.ID]
			figures[i] = waitFigures{run: j.ended.Sub(j.started), requests: sim.requests[job.ID], lag: seen.Sub(j.ended)}
			sim.mu.Unlock()
		})
	}
	wg.Wait()
	return figures
}

// fixedPollRequests is what a fixed 2 s poll spends on a job of the given run: a read every
// 2 s, the submission and one event-stream probe, and the contract's allowance of 2 more.
func fixedPollRequests(run time.Duration) float64 { return run.Seconds()/2 + 4 }

// allowedLag is the longest a wait may take to see a run's end: max(1 s, 5 % of the run).
func allowedLag(run time.Duration) time.Duration { return max(time.Second, run/20) }

// Waiting without events and with progress that does not move: every case the contract names
// (a lone job of 3 s, 12 s, 40 s; five jobs of 12 s at once), and a few more batches, sees every
// end within max(1 s, 5 % of the run), at no more requests per job than a fixed 2 s poll, with
// and without the strict server's Retry-After of 1 s on reads.
func TestWaitScheduleBudgetAndLag(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		jobs    int
		workers int
		run     time.Duration
	}{
		{name: "one job of 3 s", jobs: 1, workers: 1, run: 3 * time.Second},
		{name: "one job of 12 s", jobs: 1, workers: 1, run: 12 * time.Second},
		{name: "one job of 40 s", jobs: 1, workers: 1, run: 40 * time.Second},
		{name: "five jobs of 12 s at once", jobs: 5, workers: 5, run: 12 * time.Second},
		{name: "five jobs of 12 s, two at a time", jobs: 5, workers: 2, run: 12 * time.Second},
		{name: "twenty jobs of 30 s at once", jobs: 20, workers: 20, run: 30 * time.Second},
		// Run times set by steps run a few percent long on a loaded server.
		{name: "one job of 3 s, 3 % late", jobs: 1, workers: 1, run: 3090 * time.Millisecond},
		{name: "one job of 12 s, 3 % late", jobs: 1, workers: 1, run: 12360 * time.Millisecond},
		{name: "one job of 40 s, 3 % late", jobs: 1, workers: 1, run: 41200 * time.Millisecond},
		{name: "five jobs of 12 s at once, 3 % late", jobs: 5, workers: 5, run: 12360 * time.Millisecond},
	}
	for _, tt := range tests {
		for _, retryAfter := range []int{0, 1} {
			t.Run(fmt.Sprintf("%s, Retry-After %d", tt.name, retryAfter), func(t *testing.T) {
				t.Parallel()
				synctest.Test(t, func(t *testing.T) {
					sim := newSimJobs(tt.workers, func(int) time.Duration { return tt.run })
					sim.retryAfter = retryAfter
					figures := simulateApply(t, sim, tt.jobs)
					total := 0
					for i, f := range figures {
						total += f.requests
						if f.lag < 0 || f.lag > allowedLag(f.run) {
							t.Errorf("job %d: end seen %v after it happened, want within %v", i, f.lag, allowedLag(f.run))
						}
					}
					perJob := float64(total) / float64(tt.jobs)
					if budget := fixedPollRequests(tt.run); perJob > budget {
						t.Errorf("%.1f requests per job, want at most %.1f (a fixed 2 s poll)", perJob, budget)
					}
					t.Logf("%.1f requests per job (budget %.1f); lags %v", perJob, fixedPollRequests(tt.run), lags(figures))
				})
			})
		}
	}
}

// blindLagBound is the longest a lone blind wait may take to see an end: the gap between two
// reads, a period and a twenty-fourth (the margins grow with the marks), plus the service's
// start-up (the first read counts from the submission, the others from the run's start); past
// 20 periods, 5 % of the run.
func blindLagBound(run, startDelay time.Duration) time.Duration {
	return max(defaultPollMax+defaultPollMax/blindMarginShare+startDelay, run/20)
}

// servedRun reports whether the blind plan promises to see a run of this nominal length (ending
// within a few percent after it) within max(1 s, 5 %): one that ends on one of its marks (half a
// period, 3/2 periods, whole periods, each meant with its margin), or one long enough that 5 %
// of it is more than a period and a half.
func servedRun(nominal time.Duration) bool {
	p := defaultPollMax
	return nominal <= p/2 || nominal == 3*p/2 || (nominal >= 2*p && nominal%p == 0) || nominal/20 >= 3*p/2
}

// The blind plan of a lone job at every run length from 1 s to 60 s (whole seconds, as a run
// set by its steps' durations would be, exactly or 3 % late as a loaded server runs them), with
// and without the strict server's Retry-After of 1 s: the reads (from the run's start), how
// late the end is seen, and the requests against a fixed 2 s poll's budget. Every run keeps
// the budget and is seen within blindLagBound; the runs the plan's marks serve (servedRun:
// 1, 3 s and every even number of seconds) within max(1 s, 5 %). The test logs the others that
// miss max(1 s, 5 %) (2 s, odd runs from 5 s to 21 s; with 3 % drift, odd ones to 27 s): they are
// seen within a period, as by a fixed 2 s poll; seeing them within 1 s too needs a read every
// second, twice the budget.
func TestWaitScheduleBlindRunLengths(t *testing.T) {
	t.Parallel()
	var table strings.Builder
	table.WriteString("run | Retry-After | drift | reads (s from the run's start) | lateness | requests | budget\n")
	var worstLag, worstLagShare time.Duration
	var worstLagRun time.Duration
	var missed []string // runs seen later than max(1 s, 5 %)
	for sec := 1; sec <= 60; sec++ {
		nominal := time.Duration(sec) * time.Second
		for _, c := range []struct {
			retryAfter int
			drift      float64
		}{{0, 0}, {1, 0}, {1, 0.03}} {
			run := time.Duration(float64(nominal) * (1 + c.drift))
			var f waitFigures
			var reads []time.Duration
			var startDelay time.Duration
			synctest.Test(t, func(t *testing.T) {
				sim := newSimJobs(1, func(int) time.Duration { return run })
				sim.retryAfter = c.retryAfter
				f = simulateApply(t, sim, 1)[0]
				startDelay = sim.startDelay
				for _, r := range sim.reads {
					reads = append(reads, r.Sub(sim.order[0].started))
				}
			})
			fmt.Fprintf(&table, "%v | %d | %.0f%% | %s | %v | %d | %.1f\n", nominal, c.retryAfter, c.drift*100,
				formatReads(reads), f.lag.Round(time.Millisecond), f.requests, fixedPollRequests(f.run))
			if float64(f.requests) > fixedPollRequests(f.run) {
				t.Errorf("run %v (Retry-After %d): %d requests, over a fixed 2 s poll's %.1f", run, c.retryAfter, f.requests, fixedPollRequests(f.run))
			}
			if bound := blindLagBound(f.run, startDelay); f.lag < 0 || f.lag > bound {
				t.Errorf("run %v (Retry-After %d): seen %v late, want within %v", run, c.retryAfter, f.lag, bound)
			}
			if servedRun(nominal) && f.lag > allowedLag(f.run) {
				t.Errorf("run %v (Retry-After %d): seen %v late, want within %v (its marks serve it)", run, c.retryAfter, f.lag, allowedLag(f.run))
			}
			if f.lag > allowedLag(f.run) {
				missed = append(missed, fmt.Sprintf("%v (Retry-After %d, drift %.0f%%)", nominal, c.retryAfter, c.drift*100))
			}
			if f.lag > worstLag {
				worstLag, worstLagRun = f.lag, run
			}
			worstLagShare = max(worstLagShare, f.lag*100/f.run)
		}
	}
	t.Logf("worst lateness %v (run %v); worst as a share of the run %d %%; seen later than max(1 s, 5 %%): %s\n%s",
		worstLag.Round(time.Millisecond), worstLagRun.Round(time.Millisecond), int(worstLagShare), strings.Join(missed, ", "), table.String())
}

func formatReads(reads []time.Duration) string {
	parts := make([]string, len(reads))
	for i, r := range reads {
		parts[i] = fmt.Sprintf("%.2f", r.Seconds())
	}
	return strings.Join(parts, " ")
}

func requestCounts(figures []waitFigures) []int {
	out := make([]int, len(figures))
	for i, f := range figures {
		out[i] = f.requests
	}
	return out
}

func lags(figures []waitFigures) []time.Duration {
	out := make([]time.Duration, len(figures))
	for i, f := range figures {
		out[i] = f.lag.Round(time.Millisecond)
	}
	return out
}

// Every run length, not only whole seconds, with and without the strict mode's Retry-After of
// 1 s on reads: a lone job never costs more than a fixed 2 s poll and is seen within
// blindLagBound (a period and a little; 5 % of the run past 40 s); five jobs of a shape at once
// are each seen within max(1 s, 5 %), at no more requests per job.
func TestWaitScheduleBoundsAtEveryRunLength(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		for run := 500 * time.Millisecond; run <= 150*time.Second; run += run/9 + 130*time.Millisecond {
			for _, c := range []struct{ n, retryAfter int }{{1, 0}, {5, 0}, {1, 1}, {5, 1}} {
				n := c.n
				sim := newSimJobs(n, func(int) time.Duration { return run })
				sim.retryAfter = c.retryAfter
				figures := simulateApply(t, sim, n)
				total, worst := 0, time.Duration(0)
				for _, f := range figures {
					total += f.requests
					worst = max(worst, f.lag)
				}
				limit := allowedLag(run)
				if n == 1 {
					limit = blindLagBound(run, sim.startDelay)
				}
				if perJob := float64(total) / float64(n); perJob > fixedPollRequests(run) || worst > limit {
					t.Errorf("%d job(s) of %v, Retry-After %d: %.1f requests per job (budget %.1f), seen up to %v late (bound %v)",
						n, run, c.retryAfter, perJob, fixedPollRequests(run), worst, limit)
				}
			}
		}
	})
}

// With the event stream served, the end is seen within 50 ms of it (here at once: the stream's
// terminal status wakes the wait, which reads the record), for a lone job and a batch alike.
func TestWaitScheduleWithEventsSeesTheEndAtOnce(t *testing.T) {
	t.Parallel()
	for _, n := range []int{1, 5} {
		t.Run(fmt.Sprint(n, " jobs of 12 s"), func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				sim := newSimJobs(n, func(int) time.Duration { return 12 * time.Second })
				sim.events = true
				figures := simulateApply(t, sim, n)
				t.Logf("with events: requests %v, lags %v", requestCounts(figures), lags(figures))
				for i, f := range figures {
					if f.lag > 50*time.Millisecond {
						t.Errorf("job %d: end seen %v after it happened, want within 50ms", i, f.lag)
					}
					if budget := fixedPollRequests(f.run); float64(f.requests) > budget {
						t.Errorf("job %d: %d requests, want at most %.1f", i, f.requests, budget)
					}
				}
			})
		})
	}
}

// A Retry-After on the reads of a job paces its wait: no read sooner than it asks.
func TestWaitScheduleHonoursRetryAfterOnReads(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		sim := newSimJobs(1, func(int) time.Duration { return 30 * time.Second })
		sim.retryAfter = 5
		f := simulateApply(t, sim, 1)[0]
		// The submission, the event-stream probe, the read at 1 s and then one per 5 s.
		if want := 2 + 1 + 30/5 + 1; f.requests > want || f.lag > 5*time.Second {
			t.Fatalf("%d requests, seen %v late; want at most %d requests (one read per Retry-After), within 5s", f.requests, f.lag, want)
		}
	})
}

// simRouter is one queued model request on the test's clock: IN_QUEUE, then COMPLETED at done,
// every status answer carrying the given Retry-After. It records when each status was read.
type simRouter struct {
	done       time.Time
	retryAfter int
	mu         sync.Mutex
	reads      []time.Time
}

func (s *simRouter) RoundTrip(req *http.Request) (*http.Response, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	if req.URL.Path == "/q" { // the collect, once a status read said COMPLETED
		const result = `{"text":"hi"}`
		return &http.Response{StatusCode: http.StatusOK, Header: http.Header{"Content-Type": {"application/json"}},
			Body: io.NopCloser(strings.NewReader(result)), ContentLength: int64(len(result)), Request: req}, nil
	}
	s.reads = append(s.reads, now)
	status := RouterInQueue
	if !now.Before(s.done) {
		status = RouterCompleted
	}
	const id = "0b0c8f2e-0000-4000-8000-0000000000c3"
	body := fmt.Sprintf(`{"request_id":%q,"status":%q,"status_url":"/q/status","response_url":"/q","cancel_url":"/q/cancel"}`, id, status)
	h := http.Header{"Content-Type": {"application/json"}}
	if s.retryAfter > 0 {
		h.Set("Retry-After", fmt.Sprint(s.retryAfter))
	}
	return &http.Response{StatusCode: http.StatusOK, Header: h, Body: io.NopCloser(strings.NewReader(body)), ContentLength: int64(len(body)), Request: req}, nil
}

// A queued router request has no events: it is polled as often as its Retry-After asks, no
// more (and no less), and without one on the blind schedule.
func TestAwaitModelResultPacedByRetryAfter(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		retryAfter int
		run        time.Duration
		wantGap    time.Duration // least time between two status reads
		maxLag     time.Duration
	}{
		{name: "Retry-After 3", retryAfter: 3, run: 20 * time.Second, wantGap: 3 * time.Second, maxLag: 3 * time.Second},
		{name: "Retry-After 1", retryAfter: 1, run: 20 * time.Second, wantGap: time.Second, maxLag: time.Second},
		{name: "no Retry-After: blind", run: 20 * time.Second, wantGap: time.Second, maxLag: 2 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				sim := &simRouter{done: time.Now().Add(tt.run), retryAfter: tt.retryAfter}
				c, err := New(Config{Endpoint: "http://svc.test", HTTPClient: &http.Client{Transport: sim}})
				if err != nil {
					t.Fatal(err)
				}
				q := &QueueRequest{RequestID: "0b0c8f2e-0000-4000-8000-0000000000c3", Status: RouterInQueue,
					StatusURL: "http://svc.test/q/status", ResponseURL: "http://svc.test/q", CancelURL: "http://svc.test/q/cancel"}
				if tt.retryAfter > 0 {
					q.RetryAfter = time.Duration(tt.retryAfter) * time.Second // as the submission's answer gave it
				}
				final, res, err := c.AwaitModelResult(t.Context(), q, RouterWaitOptions{})
				if err != nil || !final.Completed() || res == nil {
					t.Fatalf("AwaitModelResult = %+v, %v, %v", final, res, err)
				}
				res.Body.Close()
				if lag := time.Since(sim.done); lag > tt.maxLag {
					t.Errorf("completion seen %v late, want within %v", lag, tt.maxLag)
				}
				for i := 1; i < len(sim.reads); i++ {
					if gap := sim.reads[i].Sub(sim.reads[i-1]); gap < tt.wantGap {
						t.Errorf("reads %d and %d %v apart, want at least %v", i-1, i, gap, tt.wantGap)
					}
				}
				if tt.retryAfter > 0 && len(sim.reads) > int(tt.run/tt.wantGap)+1 {
					t.Errorf("%d reads in %v, want one per Retry-After", len(sim.reads), tt.run)
				}
			})
		})
	}
}

// REAL TIME (about 3 s): the one check of the schedule against the reference server itself, in
// its strict mode (no event stream, progress that does not move, Retry-After on reads): a lone job of about 2 s
// costs no more requests than a fixed 2 s poll and is seen within that poll's 2 s. The
// figures at every run length come from the simulated service above, on a fake clock.
func TestWaitScheduleAgainstTheReferenceServerRealTime(t *testing.T) {
	t.Parallel()
	srv := emulator.New(emulator.Options{Mode: emulator.ModeStrict, StepDuration: 100 * time.Millisecond})
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	c := testClient(t, srv.URL())
	wf := `{"1":{"class_type":"EmptyImage","inputs":{"width":8,"height":8,"batch_size":1,"color":0}},` +
		`"2":{"class_type":"ImageNoiseSampler","inputs":{"image":["1",0],"seed":1,"steps":20,"denoise":0.5}},` +
		`"3":{"class_type":"SaveImage","inputs":{"images":["2",0],"filename_prefix":"w"}}}`
	job, err := c.SubmitJob(t.Context(), SubmitJobInput{Workflow: json.RawMessage(wf), IdempotencyKey: "k-blind"})
	if err != nil {
		t.Fatal(err)
	}
	final, err := c.WaitJob(t.Context(), job, WaitOptions{Durations: NewDurationEstimator(), Shape: WorkflowShape([]byte(wf))})
	seen := time.Now()
	if err != nil || final.Status != JobSucceeded {
		t.Fatalf("WaitJob = %+v, %v", final, err)
	}
	start, _ := parseJobTime(final.StartedAt)
	end, _ := parseJobTime(final.CompletedAt)
	run, lag := end.Sub(start), seen.Sub(end)
	requests := srv.Requests(emulator.OpSubmitJob) + srv.Requests(emulator.OpGetJob) + srv.Requests(emulator.OpJobEvents)
	t.Logf("run %v: %d requests (budget %.1f), seen %v late", run.Round(time.Millisecond), requests, fixedPollRequests(run), lag.Round(time.Millisecond))
	if float64(requests) > fixedPollRequests(run) || lag > 2*time.Second {
		t.Fatalf("run %v: %d requests (budget %.1f), seen %v late (bound 2s)", run, requests, fixedPollRequests(run), lag)
	}
}

// A read refused with 429 and a Retry-After holds every wait of the client, not only the one
// that was refused: the batch as a whole honours the service's rate limit.
func TestWaitScheduleRateLimitHoldsTheWholeBatch(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		sim := newSimJobs(5, func(int) time.Duration { return 20 * time.Second })
		sim.rateLimitAt, sim.rateLimitFor = 3500*time.Millisecond, 4
		simulateApply(t, sim, 5)
		if sim.limited.IsZero() {
			t.Fatal("no read was refused; the test proves nothing")
		}
		held := sim.limited.Add(4 * time.Second)
		var during []time.Duration
		for _, r := range sim.reads {
			if r.After(sim.limited) && r.Before(held) {
				during = append(during, r.Sub(sim.limited))
			}
		}
		if len(during) > 0 {
			t.Fatalf("%d reads within the 4 s the service asked for (at %v after the refusal)", len(during), during)
		}
	})
}

// simPromptStatus is the v1 status route of one prompt on the test's clock: in progress until
// done, then success. It records when each status was read.
type simPromptStatus struct {
	done  time.Time
	mu    sync.Mutex
	reads []time.Time
}

func (s *simPromptStatus) RoundTrip(req *http.Request) (*http.Response, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	s.reads = append(s.reads, now)
	status := "in_progress"
	if !now.Before(s.done) {
		status = PromptSuccess
	}
	body := fmt.Sprintf(`{"status":%q}`, status)
	return &http.Response{StatusCode: http.StatusOK, Header: http.Header{"Content-Type": {"application/json"}},
		Body: io.NopCloser(strings.NewReader(body)), ContentLength: int64(len(body)), Request: req}, nil
}

// A prompt followed without its socket reads its status on the blind plan of a job's wait, its
// marks counted from the wait's start (the status route tells no start time): a prompt of 3 s
// is read at 1/2 and 3/2 periods (seen at once), one of 12 s then at every whole period.
func TestWaitPromptWithoutSocketReadsOnTheBlindPlan(t *testing.T) {
	t.Parallel()
	at := func(mark time.Duration) time.Duration { return mark + blindMargin(mark) }
	tests := []struct {
		run   time.Duration
		reads []time.Duration // from the wait's start
	}{
		{run: 3 * time.Second, reads: []time.Duration{at(time.Second), at(3 * time.Second)}},
		{run: 12 * time.Second, reads: []time.Duration{at(time.Second), at(3 * time.Second), at(4 * time.Second),
			at(6 * time.Second), at(8 * time.Second), at(10 * time.Second), at(12 * time.Second)}},
	}
	for _, tt := range tests {
		t.Run(tt.run.String(), func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				began := time.Now()
				sim := &simPromptStatus{done: began.Add(tt.run)}
				c, err := New(Config{Endpoint: "http://svc.test", APIKey: "k", HTTPClient: &http.Client{Transport: sim}})
				if err != nil {
					t.Fatal(err)
				}
				res, err := c.WaitPrompt(t.Context(), "p-1", nil, PromptWaitOptions{})
				if err != nil || res.Status != PromptSuccess {
					t.Fatalf("WaitPrompt = %+v, %v", res, err)
				}
				got := make([]time.Duration, len(sim.reads))
				for i, r := range sim.reads {
					got[i] = r.Sub(began)
				}
				if !slices.Equal(got, tt.reads) {
					t.Errorf("status read at %v, want %v", got, tt.reads)
				}
			})
		})
	}
}
