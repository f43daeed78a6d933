package client

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/svc-org/terraform-provider-svc/internal/emulator"
)

func TestPollSchedule(t *testing.T) {
	opts := WaitOptions{PollMin: 100 * time.Millisecond, PollMax: 2 * time.Second, PollStreaming: 10 * time.Second}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	running := func(ago time.Duration) *Job {
		start := now.Add(-ago).Format(time.RFC3339Nano)
		return &Job{Status: JobRunning, StartedAt: &start}
	}
	progress := func(v float64) *Job { return &Job{Status: JobRunning, Progress: &Progress{Value: v}} }

	t.Run("streaming polls only as a safety net", func(t *testing.T) {
		if got := newPollSchedule(opts, nil).Next(progress(0.5), true); got != 10*time.Second {
			t.Fatalf("interval = %v, want 10s", got)
		}
	})
	t.Run("without progress it polls blind", func(t *testing.T) {
		now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		at := func(d time.Duration) time.Duration { return d + blindMargin(d) } // a mark's read time
		for _, c := range []struct {
			name      string
			job       *Job
			sinceWait time.Duration // since the wait began
			reads     int           // reads made before this one
			want      time.Duration
		}{
			{name: "queued as submitted: half a period", job: &Job{Status: JobQueued}, want: at(time.Second)},
			{name: "running 1 s: the second read at 3/2 periods of the run", job: running(1050 * time.Millisecond), sinceWait: 1090 * time.Millisecond, reads: 1, want: at(3*time.Second) - 1050*time.Millisecond},
			{name: "at 3/2 periods: the next whole period", job: running(at(3 * time.Second)), sinceWait: 3200 * time.Millisecond, reads: 2, want: at(4*time.Second) - at(3*time.Second)},
			{name: "at 19 periods: the 20th", job: running(at(38 * time.Second)), sinceWait: 39900 * time.Millisecond, reads: 19, want: at(40*time.Second) - at(38*time.Second)},
			// Past 20 periods, marks a twentieth apart: 40, 42, 44.1, 46.305 s.
			{name: "past 20 periods, a twentieth of the run so far", job: running(at(44100 * time.Millisecond)), sinceWait: 46 * time.Second, reads: 22, want: at(46305*time.Millisecond) - at(44100*time.Millisecond)},
			{name: "never sooner than the budget allows", job: running(at(3 * time.Second)), sinceWait: 3200 * time.Millisecond, reads: 5, want: 10*time.Second - 3200*time.Millisecond},
		} {
			p := newPollSchedule(opts, nil)
			p.clk, p.began = fixedClock{now}, now.Add(-c.sinceWait)
			if c.reads > 0 {
				p.record, p.reads = &Job{}, c.reads-1 // Next counts the read it is given
			}
			if got := p.Next(c.job, false); got != c.want {
				t.Errorf("%s: interval = %v, want %v", c.name, got, c.want)
			}
		}
	})
	t.Run("never sooner than the read's Retry-After", func(t *testing.T) {
		if got := newPollSchedule(opts, nil).Next(&Job{Status: JobRunning, RetryAfter: 7 * time.Second}, false); got != 7*time.Second {
			t.Fatalf("interval = %v, want the 7s Retry-After", got)
		}
	})
	tests := []struct {
		name       string
		first, now float64
		elapsed    time.Duration
		want       time.Duration
	}{
		// 10% in 1 s: 8 s left after 20%: the blind plan's next read (3/2 periods) comes sooner.
		{name: "far from the end the blind plan holds", first: 0.1, now: 0.2, elapsed: time.Second, want: 3*time.Second + blindMargin(3*time.Second) - time.Second},
		// 50% in 5 s: 1 s left at 90%: read just after that, an eighth later.
		{name: "near the end it reads just after the end foretold", first: 0.4, now: 0.9, elapsed: 5 * time.Second, want: time.Second + time.Second/8 + likelyEndMargin},
		// 99% done: 0.05 s left: never below the floor.
		{name: "at the very end the floor holds", first: 0.0, now: 0.99, elapsed: 5 * time.Second, want: 100 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newPollSchedule(opts, nil)
			p.clk, p.began = fixedClock{now}, now.Add(-tt.elapsed)
			p.firstAt, p.firstValue = now.Add(-tt.elapsed), tt.first
			got := p.Next(progress(tt.now), false)
			if d := got - tt.want; d < -time.Microsecond || d > time.Microsecond { // float rounding only
				t.Fatalf("interval = %v, want about %v", got, tt.want)
			}
		})
	}
}

// fixedClock is a clock that stands still.
type fixedClock struct{ t time.Time }

func (c fixedClock) Now() time.Time { return c.t }

func TestWaitJobOutlastsAShortOutage(t *testing.T) {
	id := "55555555-5555-5555-5555-555555555555"
	unavailable := status(503, nil, "down")
	tests := []struct {
		name    string
		steps   []http.HandlerFunc
		wantErr bool
	}{
		// testClient's max_retries is 3: it bounds a request outside a wait only; a wait rides
		// out transient failures until its deadline.
		{name: "a read that succeeds within its retries is waited out", steps: append(repeat(unavailable, 3), status(200, nil, jobJSON(id, "succeeded")))},
		{name: "reads failing beyond max_retries are ridden out", steps: append(repeat(unavailable, 12), status(200, nil, jobJSON(id, "succeeded")))},
		{name: "a 404 ends the wait at once", steps: []http.HandlerFunc{status(404, nil, `{"error":{"code":"not_found","message":"gone"}}`), status(200, nil, jobJSON(id, "succeeded"))}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, c := scriptedClient(t, tt.steps)
			start := &Job{ID: id, Status: JobRunning, URLs: JobURLs{Self: s.url + "/api/v2/jobs/" + id}}
			got, err := c.WaitJob(context.Background(), start, WaitOptions{NoEvents: true, PollMin: time.Millisecond, PollMax: 5 * time.Millisecond})
			if (err != nil) != tt.wantErr {
				t.Fatalf("WaitJob = %v, %v; want error %v", got.Status, err, tt.wantErr)
			}
			if !tt.wantErr && got.Status != JobSucceeded {
				t.Fatalf("status %q, want succeeded", got.Status)
			}
		})
	}
}

func repeat(h http.HandlerFunc, n int) []http.HandlerFunc {
	out := make([]http.HandlerFunc, n)
	for i := range out {
		out[i] = h
	}
	return out
}

func TestAwaitModelResultOutlastsAShortOutage(t *testing.T) {
	const id = "0b0c8f2e-0000-4000-8000-0000000000c3"
	unavailable := status(503, map[string]string{"X-Svc-Error-Type": "service_unavailable"}, `{"detail":"down"}`)
	done := status(200, nil, `{"request_id":"`+id+`","status":"COMPLETED"}`)
	result := status(200, map[string]string{"Content-Type": "application/json"}, `{"text":"hi"}`)
	tests := []struct {
		name    string
		steps   []http.HandlerFunc
		wantErr bool
	}{
		{name: "a read that succeeds within its retries is waited out", steps: append(repeat(unavailable, 3), done, result)},
		{name: "reads failing beyond max_retries are ridden out", steps: append(repeat(unavailable, 12), done, result)},
		{name: "a 403 ends the wait at once", steps: []http.HandlerFunc{status(403, nil, `{"detail":"no"}`), done, result}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, c := scriptedClient(t, tt.steps)
			q := &QueueRequest{RequestID: id, Status: "IN_PROGRESS", StatusURL: s.url + "/q/status", ResponseURL: s.url + "/q", CancelURL: s.url + "/q/cancel"}
			got, res, err := c.AwaitModelResult(context.Background(), q, RouterWaitOptions{PollMin: time.Millisecond, PollMax: 5 * time.Millisecond})
			if res != nil {
				defer res.Body.Close()
			}
			if (err != nil) != tt.wantErr {
				t.Fatalf("AwaitModelResult = %v, %v; want error %v", got.Status, err, tt.wantErr)
			}
			if !tt.wantErr && (!got.Completed() || res == nil) {
				t.Fatalf("status %q, result %v; want COMPLETED and its result", got.Status, res)
			}
		})
	}
}

// With the event stream the loop wakes on events instead of polling: a job of about a second
// is followed with one stream and a few reads, and its end is seen at once.
func TestWaitJobFollowsTheEventStream(t *testing.T) {
	srv := emulator.New(emulator.Options{StepDuration: 100 * time.Millisecond})
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	c := testClient(t, srv.URL())
	wf := `{"1":{"class_type":"EmptyImage","inputs":{"width":8,"height":8,"batch_size":1,"color":0}},` +
		`"2":{"class_type":"ImageNoiseSampler","inputs":{"image":["1",0],"seed":1,"steps":10,"denoise":0.5}},` +
		`"3":{"class_type":"SaveImage","inputs":{"images":["2",0],"filename_prefix":"w"}}}`
	job, err := c.SubmitJob(context.Background(), SubmitJobInput{Workflow: json.RawMessage(wf), IdempotencyKey: "k-events"})
	if err != nil {
		t.Fatal(err)
	}
	final, err := c.WaitJob(context.Background(), job, WaitOptions{})
	seen := time.Now()
	if err != nil || final.Status != JobSucceeded || final.CompletedAt == nil {
		t.Fatalf("WaitJob = %+v, %v", final, err)
	}
	done, _ := time.Parse(time.RFC3339Nano, *final.CompletedAt)
	streams, reads := srv.Requests(emulator.OpJobEvents), srv.Requests(emulator.OpGetJob)
	if streams != 1 || reads > 3 {
		t.Fatalf("%d event streams and %d reads; want one stream and at most 3 reads (polling alone makes about 6)", streams, reads)
	}
	if lag := seen.Sub(done); lag > 200*time.Millisecond {
		t.Fatalf("the end was seen %v after it happened", lag)
	}
}

func TestBackoffHonoursRetryAfter(t *testing.T) {
	resp := &http.Response{Header: http.Header{"Retry-After": {"2"}}}
	if got := backoff(time.Millisecond, time.Second, 0, resp); got != 2*time.Second {
		t.Fatalf("backoff = %v, want the 2s the service asked, above RetryWaitMax", got)
	}
	if got := backoff(time.Millisecond, 10*time.Millisecond, 5, &http.Response{Header: http.Header{}}); got < time.Millisecond || got > 10*time.Millisecond {
		t.Fatalf("backoff without Retry-After = %v, want within [1ms, 10ms]", got)
	}
}

// A stream that opens and then says nothing (a buffering proxy holds it) is not trusted: until
// it delivers an event, the loop polls on its schedule, so the end is seen without waiting for
// the streaming safety-net interval.
func TestWaitJobSilentStreamDoesNotDelayTheEnd(t *testing.T) {
	var reads atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/events") {
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
			<-r.Context().Done()
			return
		}
		status := JobRunning
		if reads.Add(1) >= 3 {
			status = JobSucceeded
		}
		fmt.Fprintf(w, `{"id":"j1","status":%q,"urls":{"self":"/jobs/j1","events":"/jobs/j1/events","cancel":"/jobs/j1/cancel"}}`, status)
	}))
	defer srv.Close()
	c := testClient(t, srv.URL)
	job, err := c.GetJob(context.Background(), "j1")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	final, err := c.WaitJob(context.Background(), job, WaitOptions{PollMin: 20 * time.Millisecond, PollMax: 100 * time.Millisecond, PollStreaming: 5 * time.Second})
	if err != nil || final.Status != JobSucceeded {
		t.Fatalf("WaitJob = %+v, %v", final, err)
	}
	if took := time.Since(start); took > time.Second {
		t.Fatalf("the end was seen after %v; a silent stream held the loop to the streaming interval", took)
	}
}

// A stream that repeats a terminal status event at 10 kHz while the record says running costs
// at most one read per PollMin (the schedule's floor), not one per event. Before the floor,
// such a stream made about 1,200 reads a second (1,230 measured).
func TestWaitJobTerminalEventFloodIsThrottled(t *testing.T) {
	t.Parallel()
	srv := emulator.New(emulator.Options{NodeDuration: time.Hour, EventsTerminalFlood: 100 * time.Microsecond})
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	c := testClient(t, srv.URL())
	wf := `{"1":{"class_type":"EmptyImage","inputs":{"width":8,"height":8,"batch_size":1,"color":0}},` +
		`"2":{"class_type":"SaveImage","inputs":{"images":["1",0],"filename_prefix":"f"}}}`
	job, err := c.SubmitJob(context.Background(), SubmitJobInput{Workflow: json.RawMessage(wf), IdempotencyKey: "k-flood"})
	if err != nil {
		t.Fatal(err)
	}
	const window = time.Second
	ctx, cancel := context.WithTimeout(context.Background(), window)
	defer cancel()
	final, err := c.WaitJob(ctx, job, WaitOptions{PollMin: 100 * time.Millisecond})
	if err == nil || final.Terminal() {
		t.Fatalf("WaitJob = %+v, %v; want the job still running at the deadline", final, err)
	}
	// One read per 100 ms floor, plus the first read after the stream connected.
	if reads := srv.Requests(emulator.OpGetJob); reads > 12 {
		t.Fatalf("%d reads in %v; want at most 12 (one per PollMin)", reads, window)
	}
}

func TestTerminalStatusEventIsParsed(t *testing.T) {
	t.Parallel()
	tests := []struct {
		data string
		want bool
	}{
		{`{"status":"succeeded"}`, true},
		{`{"status":"canceled","queue_position":null}`, true},
		{`{"status":"running","note":"\"failed\" is not this job's status"}`, false},
		{`{"status":"running"}`, false},
		{`"succeeded"`, false},
		{`not json "expired"`, false},
	}
	for _, tt := range tests {
		if got := terminalStatusEvent(tt.data); got != tt.want {
			t.Errorf("terminalStatusEvent(%s) = %v, want %v", tt.data, got, tt.want)
		}
	}
}

// A service that answered 501 to an event stream serves none: later waits poll without asking.
func TestWaitJobRemembersEventsNotImplemented(t *testing.T) {
	t.Parallel()
	srv := emulator.New(emulator.Options{EventsDisabled: true, StepDuration: 20 * time.Millisecond, Workers: 3})
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	c := testClient(t, srv.URL())
	for i := range 3 {
		wf := fmt.Sprintf(`{"1":{"class_type":"EmptyImage","inputs":{"width":8,"height":8,"batch_size":1,"color":0}},`+
			`"2":{"class_type":"ImageNoiseSampler","inputs":{"image":["1",0],"seed":%d,"steps":25,"denoise":0.5}},`+
			`"3":{"class_type":"SaveImage","inputs":{"images":["2",0],"filename_prefix":"w"}}}`, i)
		job, err := c.SubmitJob(context.Background(), SubmitJobInput{Workflow: json.RawMessage(wf)})
		if err != nil {
			t.Fatal(err)
		}
		if final, err := c.WaitJob(context.Background(), job, WaitOptions{}); err != nil || final.Status != JobSucceeded {
			t.Fatalf("WaitJob = %+v, %v", final, err)
		}
	}
	if streams := srv.Requests(emulator.OpJobEvents); streams != 1 {
		t.Fatalf("%d event stream requests for 3 jobs; want 1 (the 501 is remembered)", streams)
	}
}

// The wait loop redials an event stream that ends early, at most maxEventRedials times, and
// never one that was refused: the stream's reconnect goes through the one wait loop.
func TestWaitJobRedialsAStreamThatEndsEarly(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		eventStatus int
		wantStreams int32
	}{
		{name: "served, then cut without the terminal status", eventStatus: http.StatusOK, wantStreams: 1 + maxEventRedials},
		{name: "refused", eventStatus: http.StatusServiceUnavailable, wantStreams: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var streams, reads atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if strings.HasSuffix(r.URL.Path, "/events") {
					streams.Add(1)
					if tt.eventStatus != http.StatusOK {
						w.WriteHeader(tt.eventStatus)
						return
					}
					w.Header().Set("Content-Type", "text/event-stream")
					fmt.Fprint(w, "event: progress\ndata: {\"value\":0.1}\n\n")
					return // the stream ends early
				}
				status := JobRunning
				if reads.Add(1) >= 40 {
					status = JobSucceeded
				}
				fmt.Fprintf(w, `{"id":"j1","status":%q,"urls":{"self":"/jobs/j1","events":"/jobs/j1/events","cancel":"/jobs/j1/cancel"}}`, status)
			}))
			defer srv.Close()
			c := testClient(t, srv.URL)
			job, err := c.GetJob(context.Background(), "j1")
			if err != nil {
				t.Fatal(err)
			}
			final, err := c.WaitJob(context.Background(), job, WaitOptions{PollMin: time.Millisecond, PollMax: 5 * time.Millisecond})
			if err != nil || final.Status != JobSucceeded {
				t.Fatalf("WaitJob = %+v, %v", final, err)
			}
			if got := streams.Load(); got != tt.wantStreams {
				t.Fatalf("%d event stream requests, want %d", got, tt.wantStreams)
			}
		})
	}
}
