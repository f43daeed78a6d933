package emulator

import (
	"errors"
	"io"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// An outage answers every request of every API 503 with Retry-After, in that API's error
// shape, from its start on the server's clock for its length, and nothing else: before and
// after it the server answers as usual, and a submission it answers creates nothing.
func TestOutageAnswers503WithRetryAfterInsideItsWindow(t *testing.T) {
	t.Parallel()
	const unknownJob = "/api/v2/jobs/00000000-0000-0000-0000-000000000000"
	tests := []struct {
		name           string
		arm            func(s *Server, now time.Time)
		advance        time.Duration // clock moved after arming, before the request
		method, path   string
		body           any
		wantStatus     int
		wantRetryAfter string
		wantCode       string // error.code of the v2 envelope, or the router's X-Svc-Error-Type
	}{
		{
			name:   "before it starts",
			arm:    func(s *Server, now time.Time) { s.Outage(now.Add(time.Minute), 20*time.Second, 3) },
			method: "GET", path: unknownJob, wantStatus: http.StatusNotFound, wantCode: "not_found",
		},
		{
			name:   "inside it: a read",
			arm:    func(s *Server, now time.Time) { s.Outage(now.Add(time.Minute), 20*time.Second, 3) },
			method: "GET", path: unknownJob, advance: 70 * time.Second,
			wantStatus: http.StatusServiceUnavailable, wantRetryAfter: "3", wantCode: "upstream_error",
		},
		{
			name:   "inside it: a submission creates nothing",
			arm:    func(s *Server, now time.Time) { s.Outage(now, 20*time.Second, 0) },
			method: "POST", path: "/api/v2/jobs", body: map[string]any{"workflow": textWorkflow("x")},
			wantStatus: http.StatusServiceUnavailable, wantRetryAfter: "2", wantCode: "upstream_error",
		},
		{
			name:   "inside it: the router, in its own error shape",
			arm:    func(s *Server, now time.Time) { s.Outage(now, 20*time.Second, 5) },
			method: "GET", path: "/v2/models",
			wantStatus: http.StatusServiceUnavailable, wantRetryAfter: "5", wantCode: "service_unavailable",
		},
		{
			name:   "inside it: a path no API serves",
			arm:    func(s *Server, now time.Time) { s.Outage(now, 20*time.Second, 1) },
			method: "GET", path: "/nothing/here",
			wantStatus: http.StatusServiceUnavailable, wantRetryAfter: "1", wantCode: "upstream_error",
		},
		{
			name:   "once it ended",
			arm:    func(s *Server, now time.Time) { s.Outage(now, 20*time.Second, 3) },
			method: "GET", path: unknownJob, advance: 20 * time.Second,
			wantStatus: http.StatusNotFound, wantCode: "not_found",
		},
		{
			name:   "armed after the first submission, none yet",
			arm:    func(s *Server, _ time.Time) { s.OutageAfterSubmission(0, time.Hour, 3) },
			method: "GET", path: unknownJob, advance: time.Minute,
			wantStatus: http.StatusNotFound, wantCode: "not_found",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			clock := &testClock{}
			h := newHarness(t, Options{Now: clock.Now})
			tt.arm(h.s, clock.Now())
			clock.Advance(tt.advance)
			resp, body := h.do(tt.method, tt.path, tt.body, nil)
			if resp.StatusCode != tt.wantStatus || resp.Header.Get("Retry-After") != tt.wantRetryAfter {
				t.Fatalf("%d with Retry-After %q: %s; want %d with %q", resp.StatusCode, resp.Header.Get("Retry-After"), body, tt.wantStatus, tt.wantRetryAfter)
			}
			code := resp.Header.Get("X-Svc-Error-Type")
			if code == "" {
				code = errCode(decode(t, body))
			}
			if code != tt.wantCode {
				t.Fatalf("error %q: %s; want %q", code, body, tt.wantCode)
			}
			if resp.Header.Get(requestIDHeader) == "" {
				t.Fatal("no request id")
			}
			if n := h.s.JobCount(); n != 0 {
				t.Fatalf("%d jobs exist; want none", n)
			}
		})
	}
}

// An outage armed after the first submission starts that long after it, on the server's
// clock, and counts what it answers in each second of it; the submission that started it is
// answered as usual, and the key of a submission it refused stays free.
func TestOutageAfterSubmissionCountsRequestsPerSecond(t *testing.T) {
	t.Parallel()
	clock := &testClock{}
	h := newHarness(t, Options{Now: clock.Now})
	h.s.OutageAfterSubmission(time.Second, 10*time.Second, 0)
	if got := h.s.Outages(); len(got) != 0 {
		t.Fatalf("outages before any submission: %+v", got)
	}
	first := clock.Now()
	if resp, job := h.submit(textWorkflow("a"), "k1"); resp.StatusCode != http.StatusCreated {
		t.Fatalf("first submission: %d %v", resp.StatusCode, job)
	}
	clock.Advance(time.Second)
	for range 2 {
		if resp, _ := h.submit(textWorkflow("b"), "k2"); resp.StatusCode != http.StatusServiceUnavailable {
			t.Fatalf("submission inside the outage: %d", resp.StatusCode)
		}
	}
	clock.Advance(3 * time.Second)
	h.do("GET", "/api/v2/jobs/00000000-0000-0000-0000-000000000000", nil, nil)
	clock.Advance(10 * time.Second)
	if resp, job := h.submit(textWorkflow("b"), "k2"); resp.StatusCode != http.StatusCreated {
		t.Fatalf("the refused key, resent after the outage: %d %v", resp.StatusCode, job)
	}

	got := h.s.Outages()
	if len(got) != 1 {
		t.Fatalf("outages %+v; want one", got)
	}
	from := got[0].From
	if d := from.Sub(first); d < time.Second || d > time.Second+100*time.Millisecond {
		t.Errorf("the outage began %s after the first submission; want 1 s", d)
	}
	if got[0].To.Sub(from) != 10*time.Second {
		t.Errorf("the outage lasts %s; want 10 s", got[0].To.Sub(from))
	}
	if want := []int{2, 0, 0, 1}; !reflect.DeepEqual(got[0].PerSecond, want) {
		t.Errorf("requests per second %v; want %v", got[0].PerSecond, want)
	}
	if n := h.s.JobCount(); n != 2 {
		t.Errorf("%d jobs; want 2 (one per key)", n)
	}
}

// A restart refuses connections, cuts the event streams open on the server, and comes back on
// the same address with every job as it was; a job submitted before it ran meanwhile, and its
// key is still claimed.
func TestRestartRefusesConnectionsAndComesBackWithItsJobs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		// goDown takes the server down and returns a function bringing it back (nil: it comes
		// back on its own).
		goDown func(t *testing.T, s *Server) (comeBack func())
	}{
		{
			name: "StopListening, then ResumeListening",
			goDown: func(t *testing.T, s *Server) func() {
				if err := s.StopListening(); err != nil {
					t.Fatal(err)
				}
				return func() {
					if err := s.ResumeListening(); err != nil {
						t.Fatal(err)
					}
				}
			},
		},
		{
			name: "Restart for a while",
			goDown: func(t *testing.T, s *Server) func() {
				if err := s.Restart(300 * time.Millisecond); err != nil {
					t.Fatal(err)
				}
				return nil
			},
		},
		{
			name: "RestartAfterRequest with no wait: the request is never answered",
			goDown: func(t *testing.T, s *Server) func() {
				s.RestartAfterRequest(OpJobEvents, 1, 0, 300*time.Millisecond)
				resp, err := http.Get(s.URL() + "/api/v2/jobs/00000000-0000-0000-0000-000000000000/events")
				if err == nil {
					resp.Body.Close()
					t.Fatalf("answered %s; want the connection closed unanswered", resp.Status)
				}
				if d, _ := s.Downtimes(); len(d) != 1 {
					t.Fatalf("downtimes %+v as the request failed; want the server down already", d)
				}
				return nil
			},
		},
		{
			name: "RestartAfterSubmission, armed after the first",
			goDown: func(t *testing.T, s *Server) func() {
				s.RestartAfterSubmission(0, 300*time.Millisecond)
				waitUntil(t, "the server never went down", func() bool {
					d, _ := s.Downtimes()
					return len(d) == 1
				})
				return nil
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := New(Options{StepDuration: 20 * time.Millisecond})
			t.Cleanup(s.Close)
			if err := s.Start(); err != nil {
				t.Fatal(err)
			}
			base := s.URL()
			id := submitOn(t, base, "key-1", 10)
			stream, err := http.Get(base + "/api/v2/jobs/" + id + "/events")
			if err != nil {
				t.Fatal(err)
			}
			defer stream.Body.Close()

			comeBack := tt.goDown(t, s)
			if _, err := http.Get(base + "/api/v2/jobs/" + id); !errors.Is(err, syscall.ECONNREFUSED) {
				t.Fatalf("a read while down: %v; want the connection refused", err)
			}
			if _, err := io.ReadAll(stream.Body); err == nil {
				t.Error("the event stream open when the server went down was not cut")
			}
			waitUntil(t, "the job did not run on while the server was down", func() bool {
				st, _ := s.JobStatus(id)
				return st == statusSucceeded
			})
			if comeBack != nil {
				comeBack()
			}
			waitUntil(t, "the server never came back", func() bool {
				resp, err := http.Get(base + "/api/v2/jobs/" + id)
				if err != nil {
					return false
				}
				resp.Body.Close()
				return resp.StatusCode == http.StatusOK
			})
			if s.URL() != base {
				t.Fatalf("back on %s; want %s", s.URL(), base)
			}
			if code := submitStatus(t, base, "key-1"); code != http.StatusUnprocessableEntity {
				t.Fatalf("the key of the job submitted before the restart: %d; want 422 (still claimed)", code)
			}
			downtimes, err := s.Downtimes()
			if err != nil || len(downtimes) != 1 || downtimes[0].To.IsZero() {
				t.Fatalf("downtimes %+v, %v; want one, ended", downtimes, err)
			}
			if s.JobCount() != 1 {
				t.Fatalf("%d jobs; want the one", s.JobCount())
			}
		})
	}
}

// submitOn submits a job of steps sampler steps to base under key and returns its id.
func submitOn(t *testing.T, base, key string, steps int) string {
	t.Helper()
	resp, body := postJob(t, base, key, steps)
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("submit: %d %s", resp.StatusCode, body)
	}
	id, _ := decode(t, body)["id"].(string)
	return id
}

func submitStatus(t *testing.T, base, key string) int {
	t.Helper()
	resp, _ := postJob(t, base, key, 1)
	return resp.StatusCode
}

func postJob(t *testing.T, base, key string, steps int) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest("POST", base+"/api/v2/jobs", strings.NewReader(jobBody(steps)))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Idempotency-Key", key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, data
}

// waitUntil polls cond (a condition of the server, not a fixed wait) for up to 10 s.
func waitUntil(t *testing.T, failure string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal(failure)
		}
	}
}

// An outage armed after the nth request of an operation answers that request as usual and
// every request after it 503, whatever its operation, for its span.
func TestOutageAfterRequestStartsJustAfterIt(t *testing.T) {
	t.Parallel()
	h := newHarness(t, Options{})
	id := h.s.PutAsset("out.bin", "application/octet-stream", []byte("content"))
	h.s.OutageAfterRequest(OpGetAsset, 2, time.Minute, 4)
	var got []int
	for _, path := range []string{"/api/v2/jobs/00000000-0000-0000-0000-000000000000", "/api/v2/assets/" + id, "/api/v2/assets/" + id, "/api/v2/assets/" + id, "/api/v2/jobs/00000000-0000-0000-0000-000000000000"} {
		resp, _ := h.do("GET", path, nil, nil)
		got = append(got, resp.StatusCode)
	}
	if want := []int{404, 200, 200, 503, 503}; !slices.Equal(got, want) {
		t.Fatalf("answers %v, want %v", got, want)
	}
	if o := h.s.Outages(); len(o) != 1 || sum(o[0].PerSecond) != 2 || o[0].To.Sub(o[0].From) != time.Minute {
		t.Fatalf("outages %+v; want one of a minute that answered 2 requests", o)
	}
}

func sum(ns []int) int {
	total := 0
	for _, n := range ns {
		total += n
	}
	return total
}

// A restart answers the submissions under way before it goes down, as a service draining its
// requests in a deploy: a job it created is never left without its answer (losing one is a
// fault of its own). The submission here is held 300 ms by a fault when the restart begins.
func TestRestartAnswersTheSubmissionsUnderWay(t *testing.T) {
	t.Parallel()
	s := New(Options{StepDuration: 20 * time.Millisecond})
	t.Cleanup(s.Close)
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	s.Inject(Fault{Op: OpSubmitJob, Nth: 1, Delay: 300 * time.Millisecond})
	answered := make(chan int, 1)
	go func() {
		status, _ := postJobOnce(s.URL(), "key-1") // 0 when the connection closed unanswered
		answered <- status
	}()
	waitUntil(t, "the submission never arrived", func() bool { return s.Requests(OpSubmitJob) == 1 })
	if err := s.Restart(time.Second); err != nil {
		t.Fatal(err)
	}
	if status := <-answered; status != http.StatusCreated || s.JobCount() != 1 {
		t.Fatalf("the submission under way was answered %d with %d job(s) created; want 201 and its job", status, s.JobCount())
	}
	if d, _ := s.Downtimes(); len(d) != 1 {
		t.Fatalf("downtimes %+v; want the restart to have gone down after answering", d)
	}
}

// postJobOnce submits a small job under key and returns the status (0: no answer).
func postJobOnce(base, key string) (int, error) {
	req, err := http.NewRequest("POST", base+"/api/v2/jobs", strings.NewReader(jobBody(1)))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Idempotency-Key", key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}

// jobBody is a small job's submission whose sampler runs steps steps.
func jobBody(steps int) string {
	return `{"workflow":{"1":{"class_type":"EmptyImage","inputs":{"width":8,"height":8,"batch_size":1,"color":0}},` +
		`"2":{"class_type":"ImageNoiseSampler","inputs":{"image":["1",0],"seed":1,"steps":` + strconv.Itoa(steps) + `,"denoise":1}},` +
		`"3":{"class_type":"SaveImage","inputs":{"images":["2",0],"filename_prefix":"r"}}}}`
}
