package emulator

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
)

type sseEvent struct {
	name string
	data map[string]any
}

// readEvents reads a whole events stream (it must end by itself within 5s).
func readEvents(t *testing.T, h *harness, link string) []sseEvent {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", h.resolve(link), nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("events: %d %v", resp.StatusCode, resp.Header)
	}
	var evs []sseEvent
	var cur sseEvent
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			cur.name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &cur.data); err != nil {
				t.Fatalf("bad data line %q: %v", line, err)
			}
		case line == "":
			if cur.name != "" {
				evs = append(evs, cur)
			}
			cur = sseEvent{}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("stream did not end cleanly: %v (after %d events)", err, len(evs))
	}
	return evs
}

func TestEventsStream(t *testing.T) {
	h := newHarness(t, Options{StepDuration: 2 * time.Millisecond, QueueDelay: 20 * time.Millisecond, LogsLink: true})
	job := h.mustSubmit(imageWorkflow(2, 5))
	evs := readEvents(t, h, job["urls"].(map[string]any)["events"].(string))
	if len(evs) < 3 {
		t.Fatalf("events: %v", evs)
	}
	if evs[0].name != "status" || evs[0].data["status"] != "queued" || evs[0].data["queue_position"] != 1.0 {
		t.Errorf("first event %v", evs[0])
	}
	last := evs[len(evs)-1]
	if last.name != "status" || last.data["status"] != "succeeded" {
		t.Errorf("last event %v", last)
	}
	count := map[string]int{}
	var steps []float64
	for _, e := range evs {
		count[e.name]++
		if e.name == "progress" && e.data["step"] != nil {
			steps = append(steps, e.data["step"].(float64))
		}
		if e.name == "output" && (e.data["url"] == "" || e.data["hash"] == nil || e.data["node_id"] != "3") {
			t.Errorf("output event %v", e.data)
		}
	}
	if count["output"] != 2 || count["progress"] < 5 || count["log"] == 0 || count["status"] < 3 {
		t.Errorf("event counts %v", count)
	}
	for i := 1; i < len(steps); i++ {
		if steps[i] < steps[i-1] {
			t.Errorf("steps out of order: %v", steps)
		}
	}
	// a terminal job: one status event and the end
	evs = readEvents(t, h, job["urls"].(map[string]any)["events"].(string))
	if len(evs) != 1 || evs[0].data["status"] != "succeeded" {
		t.Errorf("events of a finished job: %v", evs)
	}
}

func TestEventsDisabledAndLimited(t *testing.T) {
	h := newHarness(t, Options{EventsDisabled: true})
	id := h.mustSubmit(textWorkflow("x"))["id"].(string)
	resp, body := h.do("GET", "/api/v2/jobs/"+id+"/events", nil, nil)
	if resp.StatusCode != 501 || errCode(decode(t, body)) != "not_implemented" {
		t.Errorf("disabled: %d %s", resp.StatusCode, body)
	}

	h = newHarness(t, Options{MaxStreams: 1, StepDuration: 20 * time.Millisecond, RetryAfter: 2})
	job := h.mustSubmit(imageWorkflow(1, 500))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", h.resolve(job["urls"].(map[string]any)["events"].(string)), nil)
	first, err := http.DefaultClient.Do(req)
	if err != nil || first.StatusCode != 200 {
		t.Fatalf("first stream: %v %v", err, first)
	}
	defer first.Body.Close()
	resp, body = h.do("GET", "/api/v2/jobs/"+job["id"].(string)+"/events", nil, nil)
	if resp.StatusCode != 429 || errCode(decode(t, body)) != "too_many_streams" || resp.Header.Get("Retry-After") != "2" {
		t.Errorf("second stream: %d %v %s", resp.StatusCode, resp.Header, body)
	}
	h.do("POST", "/api/v2/jobs/"+job["id"].(string)+"/cancel", nil, nil)
}

func TestMountPrefixAndLinks(t *testing.T) {
	for _, absolute := range []bool{false, true} {
		name := "relative"
		if absolute {
			name = "absolute"
		}
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, Options{MountPrefix: "/deployment/demo/", AbsoluteLinks: absolute})
			j := h.waitStatus(h.mustSubmit(textWorkflow("hello"))["id"].(string), "succeeded")
			want := "/deployment/demo/api/v2/"
			if absolute {
				want = h.ts.URL + want
			}
			urls := j["urls"].(map[string]any)
			out := j["outputs"].([]any)[0].(map[string]any)
			for _, link := range []string{urls["self"].(string), urls["events"].(string), urls["cancel"].(string), out["url"].(string)} {
				if !strings.HasPrefix(link, want) {
					t.Errorf("link %q does not start with %q", link, want)
				}
			}
			// links work when followed
			if resp, body := h.do("GET", h.resolve(urls["self"].(string)), nil, nil); resp.StatusCode != 200 || decode(t, body)["id"] != j["id"] {
				t.Errorf("self: %d %s", resp.StatusCode, body)
			}
			if resp, body := h.do("GET", h.resolve(out["url"].(string)), nil, nil); resp.StatusCode != 200 || string(body) != "hello" {
				t.Errorf("content: %d %q", resp.StatusCode, body)
			}
			// nothing is served outside the prefix
			if resp, body := h.do("GET", h.ts.URL+"/api/v2/jobs/"+j["id"].(string), nil, nil); resp.StatusCode != 404 || errCode(decode(t, body)) != "not_found" {
				t.Errorf("unprefixed: %d %s", resp.StatusCode, body)
			}
		})
	}
}

func TestUnknownRoutes(t *testing.T) {
	h := newHarness(t, Options{Token: "tok"})
	for _, c := range []struct{ method, path string }{{"GET", "/nope"}, {"DELETE", "/api/v2/jobs"}, {"GET", "/api/v2/jobs/" + uuid.NewString()}} {
		resp, body := h.do(c.method, c.path, nil, nil)
		if resp.StatusCode != 404 || errCode(decode(t, body)) != "not_found" || resp.Header.Get("X-Svc-Request-Id") == "" {
			t.Errorf("%s %s: %d %s", c.method, c.path, resp.StatusCode, body)
		}
	}
}

func TestFaults(t *testing.T) {
	t.Run("nth and times", func(t *testing.T) {
		h := newHarness(t, Options{})
		id := h.mustSubmit(textWorkflow("x"))["id"].(string)
		h.s.Inject(Fault{Op: OpGetJob, Nth: 2, Times: 2, Status: 502, Body: "<html>bad gateway</html>", Headers: map[string]string{"Retry-After": "1"}})
		var got []int
		for i := 0; i < 4; i++ {
			resp, body := h.do("GET", "/api/v2/jobs/"+id, nil, nil)
			got = append(got, resp.StatusCode)
			if resp.StatusCode == 502 && (resp.Header.Get("Content-Type") != "text/html; charset=utf-8" || string(body) != "<html>bad gateway</html>" || resp.Header.Get("X-Svc-Request-Id") == "" || resp.Header.Get("Retry-After") != "1") {
				t.Errorf("fault response %v %q", resp.Header, body)
			}
		}
		if want := []int{200, 502, 502, 200}; mustJSON(got) != mustJSON(want) {
			t.Errorf("statuses %v, want %v", got, want)
		}
		if n := h.s.Requests(OpGetJob); n != 4 {
			t.Errorf("Requests = %d", n)
		}
	})
	t.Run("every request, json body, request id override", func(t *testing.T) {
		h := newHarness(t, Options{})
		h.s.Inject(Fault{Op: OpSubmitJob, Status: 503, Body: `{"error":{"code":"upstream_error"`, Headers: map[string]string{"X-Svc-Request-Id": "fixed"}})
		for i := 0; i < 2; i++ {
			resp, body := h.do("POST", "/api/v2/jobs", map[string]any{"workflow": textWorkflow("x")}, nil)
			if resp.StatusCode != 503 || resp.Header.Get("Content-Type") != "application/json" || resp.Header.Get("X-Svc-Request-Id") != "fixed" || !strings.HasPrefix(string(body), `{"error"`) {
				t.Errorf("%d %v %q", resp.StatusCode, resp.Header, body)
			}
		}
		if h.s.JobCount() != 0 {
			t.Errorf("a faulted submit created a job")
		}
		h.s.ClearFaults()
		h.mustSubmit(textWorkflow("x"))
	})
	t.Run("drop", func(t *testing.T) {
		h := newHarness(t, Options{})
		h.s.Inject(Fault{Op: OpSubmitJob, Nth: 1, Drop: true})
		body := strings.NewReader(`{"workflow":{}}`)
		resp, err := http.Post(h.base+"/api/v2/jobs", "application/json", body)
		if err == nil {
			resp.Body.Close()
			t.Fatalf("dropped request got a response: %d", resp.StatusCode)
		}
		if h.s.JobCount() != 0 || h.s.Requests(OpSubmitJob) != 1 {
			t.Errorf("jobs %d requests %d", h.s.JobCount(), h.s.Requests(OpSubmitJob))
		}
	})
	t.Run("after handling: the job exists, the response is lost", func(t *testing.T) {
		h := newHarness(t, Options{})
		h.s.Inject(Fault{Op: OpSubmitJob, Nth: 1, AfterHandling: true, Status: 500, Body: `{"error":{"code":"upstream_error","message":"x"}}`})
		key := uuid.NewString()
		resp, env := h.submit(textWorkflow("x"), key)
		if resp.StatusCode != 500 || errCode(env) != "upstream_error" {
			t.Errorf("client saw %d %v", resp.StatusCode, env)
		}
		if h.s.JobCount() != 1 {
			t.Fatalf("JobCount = %d, want 1", h.s.JobCount())
		}
		// the unknown outcome keeps the key claimed
		if resp, env := h.submit(textWorkflow("x"), key); resp.StatusCode != 422 || errCode(env) != "idempotency_key_reuse" {
			t.Errorf("retry: %d %v", resp.StatusCode, env)
		}
		h.waitStatus(h.s.JobIDs()[0], "succeeded")
	})
	t.Run("after handling with drop", func(t *testing.T) {
		h := newHarness(t, Options{})
		h.s.Inject(Fault{Op: OpSubmitJob, AfterHandling: true, Drop: true})
		resp, err := http.Post(h.base+"/api/v2/jobs", "application/json", strings.NewReader(`{"workflow":`+mustJSON(textWorkflow("x"))+`}`))
		if err == nil {
			resp.Body.Close()
			t.Fatal("got a response")
		}
		if h.s.JobCount() != 1 {
			t.Errorf("JobCount = %d", h.s.JobCount())
		}
	})
	t.Run("delay respects the client's deadline", func(t *testing.T) {
		h := newHarness(t, Options{})
		h.s.Inject(Fault{Op: OpGetJob, Delay: 10 * time.Second})
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, "GET", h.base+"/api/v2/jobs/x", nil)
		start := time.Now()
		_, err := http.DefaultClient.Do(req)
		if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 2*time.Second {
			t.Errorf("err %v after %v", err, time.Since(start))
		}
	})
	t.Run("delay only, then normal handling", func(t *testing.T) {
		h := newHarness(t, Options{})
		h.s.Inject(Fault{Op: OpSubmitJob, Delay: 10 * time.Millisecond})
		h.mustSubmit(textWorkflow("x"))
	})
}

func TestExpireAndPurge(t *testing.T) {
	h := newHarness(t, Options{})
	j := h.waitStatus(h.mustSubmit(textWorkflow("x"))["id"].(string), "succeeded")
	id := j["id"].(string)
	out := j["outputs"].([]any)[0].(map[string]any)

	h.s.ExpireJob(id)
	e := h.getJob(id)
	exp, err := time.Parse(time.RFC3339Nano, e["expires_at"].(string))
	if e["status"] != "expired" || len(e["outputs"].([]any)) != 0 || err != nil || !exp.Before(time.Now()) {
		t.Errorf("expired job %v", e)
	}
	if resp, body := h.do("GET", h.resolve(out["url"].(string)), nil, nil); resp.StatusCode != 404 || errCode(decode(t, body)) != "blob_not_found" {
		t.Errorf("content of expired output: %d %s", resp.StatusCode, body)
	}
	if resp, body := h.do("GET", "/api/v2/assets/"+out["id"].(string), nil, nil); resp.StatusCode != 404 || errCode(decode(t, body)) != "not_found" {
		t.Errorf("asset of expired output: %d %s", resp.StatusCode, body)
	}

	h.s.PurgeJob(id)
	if resp, body := h.do("GET", "/api/v2/jobs/"+id, nil, nil); resp.StatusCode != 404 || errCode(decode(t, body)) != "not_found" {
		t.Errorf("purged: %d %s", resp.StatusCode, body)
	}
	if _, ok := h.s.JobStatus(id); ok {
		t.Error("JobStatus still knows the purged job")
	}
}

func TestRetentionExpiresLazily(t *testing.T) {
	clk := &testClock{}
	h := newHarness(t, Options{Retention: time.Hour, Now: clk.Now})
	j := h.waitStatus(h.mustSubmit(textWorkflow("x"))["id"].(string), "succeeded")
	done, _ := time.Parse(time.RFC3339Nano, j["completed_at"].(string))
	exp, _ := time.Parse(time.RFC3339Nano, j["expires_at"].(string))
	if exp.Sub(done) != time.Hour {
		t.Errorf("expires_at - completed_at = %v", exp.Sub(done))
	}
	if got := h.getJob(j["id"].(string))["status"]; got != "succeeded" {
		t.Fatalf("before expires_at: status %v", got)
	}
	clk.Advance(time.Hour)
	if got := h.getJob(j["id"].(string))["status"]; got != "expired" {
		t.Errorf("after expires_at: status %v, want expired", got)
	}
}

func TestAuth(t *testing.T) {
	h := newHarness(t, Options{Token: "s3cret"})
	for _, auth := range []string{"", "Bearer wrong", "s3cret"} {
		req, _ := http.NewRequest("POST", h.base+"/api/v2/jobs", strings.NewReader(`{"workflow":{}}`))
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 401 {
			t.Errorf("Authorization %q: %d", auth, resp.StatusCode)
		}
	}
	j := h.waitStatus(h.mustSubmit(textWorkflow("x"))["id"].(string), "succeeded")
	if got := h.s.LastRequestHeader(OpSubmitJob).Get("Authorization"); got != "Bearer s3cret" {
		t.Errorf("LastRequestHeader: %q", got)
	}
	// signed content needs no credential, but a valid signature
	link := h.resolve(j["outputs"].([]any)[0].(map[string]any)["url"].(string))
	resp, err := http.Get(link)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("content without credential: %v %v", err, resp)
	}
	resp.Body.Close()
	for name, bad := range map[string]string{
		"bad signature": strings.Replace(link, "sig=", "sig=00", 1),
		"expired":       h.resolve(h.s.contentLink(nil, j["outputs"].([]any)[0].(map[string]any)["id"].(string), time.Now().Add(-time.Minute))),
	} {
		resp, err := http.Get(bad)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 403 {
			t.Errorf("%s: %d", name, resp.StatusCode)
		}
	}
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func TestFlatProgress(t *testing.T) {
	t.Parallel()
	h := newHarness(t, Options{FlatProgress: true, EventsDisabled: true, StepDuration: 5 * time.Millisecond})
	id := h.mustSubmit(imageWorkflow(1, 100))["id"].(string)
	runningReads := 0
	done := h.waitFor(id, "a terminal status", func(j map[string]any) bool {
		if j["status"] == "running" {
			runningReads++
			if p, ok := j["progress"].(map[string]any); ok && p["value"].(float64) != 0 {
				t.Fatalf("progress moved while running: %v", p)
			}
		}
		return j["status"] == "succeeded"
	})
	if runningReads == 0 {
		t.Fatal("never saw the job running")
	}
	if p := done["progress"].(map[string]any); p["value"].(float64) != 1 {
		t.Errorf("finished job's progress: %v", p)
	}
}
