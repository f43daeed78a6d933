package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// testClient builds a client for srv with fast backoff.
func testClient(t *testing.T, endpoint string, mut ...func(*Config)) *Client {
	t.Helper()
	cfg := Config{Endpoint: endpoint, APIKey: "k-secret", RetryWaitMin: time.Millisecond, RetryWaitMax: 5 * time.Millisecond, MaxRetries: 3}
	for _, m := range mut {
		m(&cfg)
	}
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func jobJSON(id, status string) string {
	return fmt.Sprintf(`{"id":%q,"status":%q,"created_at":"2026-01-01T00:00:00Z","started_at":null,"completed_at":null,`+
		`"expires_at":"2026-01-02T00:00:00Z","queue_position":0,"progress":null,"outputs":[],"error":null,`+
		`"urls":{"self":"/api/v2/jobs/%[1]s","events":"/api/v2/jobs/%[1]s/events","cancel":"/api/v2/jobs/%[1]s/cancel"}}`, id, status)
}

// scripted answers the Nth request with the Nth handler (the last one repeats) and records keys.
type scripted struct {
	mu    sync.Mutex
	steps []http.HandlerFunc
	n     int
	keys  []string
	url   string // set by scriptedClient
}

func (s *scripted) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	i := min(s.n, len(s.steps)-1)
	s.n++
	s.keys = append(s.keys, r.Header.Get("Idempotency-Key"))
	s.mu.Unlock()
	s.steps[i](w, r)
}

// scriptedClient serves steps (the last one answers every later request) at s.url until the
// test ends, and returns the server with a client for it.
func scriptedClient(t *testing.T, steps []http.HandlerFunc) (*scripted, *Client) {
	t.Helper()
	s := &scripted{steps: steps}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	s.url = srv.URL
	return s, testClient(t, srv.URL)
}

func (s *scripted) count() int { s.mu.Lock(); defer s.mu.Unlock(); return s.n }

// assertAttempts fails the test unless the server saw want attempts, each carrying the
// Idempotency-Key key (a resend under another key could start a second run).
func (s *scripted) assertAttempts(t *testing.T, want int, key string) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.n != want {
		t.Fatalf("requests = %d, want %d", s.n, want)
	}
	for _, k := range s.keys {
		if k != key {
			t.Fatalf("an attempt carried Idempotency-Key %q, want %s on every attempt", k, key)
		}
	}
}

func status(code int, headers map[string]string, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		for k, v := range headers {
			w.Header().Set(k, v)
		}
		w.WriteHeader(code)
		_, _ = w.Write([]byte(body))
	}
}

func dropConnection(w http.ResponseWriter, _ *http.Request) {
	conn, _, err := w.(http.Hijacker).Hijack()
	if err == nil {
		_ = conn.Close()
	}
}

func TestSubmitJobRetryPolicy(t *testing.T) {
	created := status(201, map[string]string{"X-Svc-Request-Id": "r-ok"}, jobJSON("11111111-1111-1111-1111-111111111111", "queued"))
	queueFull := status(429, map[string]string{"Retry-After": "0"}, `{"error":{"code":"queue_full","message":"full"}}`)
	keyReuse := status(422, nil, `{"error":{"code":"idempotency_key_reuse","message":"used"}}`)
	tests := []struct {
		name         string
		steps        []http.HandlerFunc
		wantRequests int
		wantUnknown  bool
		wantArrived  bool // the unknown outcome says the first attempt arrived
		wantCode     string
	}{
		{name: "429 queue_full is retried with the same key", steps: []http.HandlerFunc{queueFull, queueFull, created}, wantRequests: 3},
		// A full queue can outlast max_retries (3 here): waiting as asked is safe, so it goes on.
		{name: "429 queue_full is retried beyond max_retries", steps: append(repeat(queueFull, 8), created), wantRequests: 9},
		// A lost answer is resent under the same single-use key: the first attempt never created
		// the job here, so the resend does, once.
		{name: "500 then created under the same key", steps: []http.HandlerFunc{status(500, nil, `{"error":{"code":"upstream_error","message":"x"}}`), created}, wantRequests: 2},
		{name: "HTML 502 then created under the same key", steps: []http.HandlerFunc{status(502, nil, "<html>bad gateway</html>"), created}, wantRequests: 2},
		{name: "503 with Retry-After then created", steps: []http.HandlerFunc{status(503, map[string]string{"Retry-After": "0"}, "<html>down</html>"), status(503, nil, "down"), created}, wantRequests: 3},
		{name: "504 then created", steps: []http.HandlerFunc{status(504, nil, "gateway timeout"), created}, wantRequests: 2},
		{name: "dropped connection then created", steps: []http.HandlerFunc{dropConnection, created}, wantRequests: 2},
		// The first attempt created the job and its answer was lost: the resend is refused as a
		// reuse, and only that makes the outcome unknown.
		{name: "lost answer then key reuse is an unknown outcome", steps: []http.HandlerFunc{status(503, nil, "down"), keyReuse}, wantRequests: 2, wantUnknown: true, wantArrived: true},
		{name: "dropped connection then key reuse is an unknown outcome", steps: []http.HandlerFunc{dropConnection, keyReuse}, wantRequests: 2, wantUnknown: true, wantArrived: true},
		// A 429 releases the key: a reuse after only 429s is the user's key used before.
		{name: "key reuse after a 429 is definitive", steps: []http.HandlerFunc{queueFull, keyReuse}, wantRequests: 2, wantCode: "idempotency_key_reuse"},
		{name: "lost answer then a validation error settles it", steps: []http.HandlerFunc{status(502, nil, "x"), status(422, nil, `{"error":{"code":"invalid_workflow","message":"no"}}`)}, wantRequests: 2, wantCode: "invalid_workflow"},
		{name: "validation error is definitive", steps: []http.HandlerFunc{status(422, nil, `{"error":{"code":"invalid_workflow","message":"no"}}`)}, wantRequests: 1, wantCode: "invalid_workflow"},
		{name: "key reuse is definitive", steps: []http.HandlerFunc{keyReuse}, wantRequests: 1, wantCode: "idempotency_key_reuse"},
		{name: "201 without a job record is an unknown outcome", steps: []http.HandlerFunc{status(201, nil, `{}`)}, wantRequests: 1, wantUnknown: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, c := scriptedClient(t, tt.steps)
			job, err := c.SubmitJob(context.Background(), SubmitJobInput{Workflow: json.RawMessage(`{}`), IdempotencyKey: "key-1"})
			s.assertAttempts(t, tt.wantRequests, "key-1")
			var unknown *UnknownOutcomeError
			if errors.As(err, &unknown) != tt.wantUnknown {
				t.Fatalf("unknown outcome = %v, want %v (err %v)", !tt.wantUnknown, tt.wantUnknown, err)
			}
			if tt.wantUnknown && (unknown.IdempotencyKey != "key-1" || !strings.Contains(err.Error(), "key-1")) {
				t.Fatalf("unknown outcome error lost the key: %v", err)
			}
			if tt.wantUnknown && unknown.FirstArrived != tt.wantArrived {
				t.Fatalf("FirstArrived = %v, want %v (err %v)", unknown.FirstArrived, tt.wantArrived, err)
			}
			if tt.wantCode != "" && !HasCode(err, tt.wantCode) {
				t.Fatalf("err = %v, want code %s", err, tt.wantCode)
			}
			if err == nil && (job.ID == "" || job.URLs.Self != s.url+"/api/v2/jobs/"+job.ID) {
				t.Fatalf("job = %+v; want id and self resolved against %s", job, s.url)
			}
		})
	}
}

func TestSubmitJobRetriesWhenConnectionRefused(t *testing.T) {
	tests := []struct {
		name string
		// answeredBefore: the service answered this client earlier (an outage, not a wrong endpoint).
		answeredBefore bool
		wantMore       bool // resent past max_retries, until the deadline
	}{
		{name: "a service that never answered: max_retries resends, then not sent", answeredBefore: false, wantMore: false},
		{name: "a service that answered before: resent until the deadline", answeredBefore: true, wantMore: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			addr := ln.Addr().String()
			ln.Close() // nothing listens: every dial is refused, so the request never left
			c := testClient(t, "http://"+addr, func(cfg *Config) { cfg.MaxRetries = 2 })
			if tt.answeredBefore {
				c.gate.record(gateTicket{}, gateAnswered, 0)
			}
			var resends atomic.Int32
			c.backoffHook = func(time.Duration, time.Duration, int, *http.Response) time.Duration {
				resends.Add(1)
				return time.Millisecond
			}
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer cancel()
			_, err = c.SubmitJob(ctx, SubmitJobInput{Workflow: json.RawMessage(`{}`), IdempotencyKey: "k"})
			var unknown *UnknownOutcomeError
			if err == nil || errors.As(err, &unknown) || !isNotSent(err) {
				t.Fatalf("err = %v; want not sent (the request never left), not an unknown outcome", err)
			}
			n := resends.Load()
			if tt.wantMore && n <= 2 {
				t.Fatalf("%d resends, want more than max_retries (2): resent until the deadline", n)
			}
			if !tt.wantMore && n != 2 {
				t.Fatalf("%d resends, want max_retries (2)", n)
			}
		})
	}
}

func TestReadRetriesTransientFailures(t *testing.T) {
	id := "22222222-2222-2222-2222-222222222222"
	tests := []struct {
		name         string
		steps        []http.HandlerFunc
		wantRequests int
		wantErr      bool
	}{
		{name: "503 then 200", steps: []http.HandlerFunc{status(503, nil, "busy"), status(200, nil, jobJSON(id, "running"))}, wantRequests: 2},
		{name: "dropped then 200", steps: []http.HandlerFunc{dropConnection, status(200, nil, jobJSON(id, "running"))}, wantRequests: 2},
		{name: "HTML 502 twice then 200", steps: []http.HandlerFunc{status(502, nil, "<html/>"), status(502, nil, "<html/>"), status(200, nil, jobJSON(id, "running"))}, wantRequests: 3},
		{name: "404 is not retried", steps: []http.HandlerFunc{status(404, nil, `{"error":{"code":"not_found","message":"no"}}`)}, wantRequests: 1, wantErr: true},
		{name: "Retry-After over the cap ends the retries", steps: []http.HandlerFunc{status(429, map[string]string{"Retry-After": "3600"}, "slow down"), status(200, nil, jobJSON(id, "running"))}, wantRequests: 1, wantErr: true},
		{name: "retries are bounded", steps: []http.HandlerFunc{status(500, nil, "x")}, wantRequests: 4, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, c := scriptedClient(t, tt.steps)
			_, err := c.GetJob(context.Background(), id)
			if s.count() != tt.wantRequests || (err != nil) != tt.wantErr {
				t.Fatalf("requests = %d, err = %v; want %d requests, error %v", s.count(), err, tt.wantRequests, tt.wantErr)
			}
		})
	}
}

func TestForeignSelfLinkRebased(t *testing.T) {
	srv := httptest.NewServer(status(200, nil, `{"id":"x","status":"queued","urls":{"self":"https://evil.example/jobs/x","events":"/e","cancel":"/c"}}`))
	defer srv.Close()
	job, err := testClient(t, srv.URL).GetJob(context.Background(), "x")
	if err != nil || job.URLs.Self != srv.URL+"/jobs/x" {
		t.Fatalf("GetJob: %+v, %v; want urls.self on %s", job, err, srv.URL)
	}
}

func TestCredentialsNeverFollowCrossOriginRedirect(t *testing.T) {
	var storageSaw atomic.Value
	storage := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		storageSaw.Store(r.Header.Clone())
		_, _ = w.Write([]byte("PNG"))
	}))
	defer storage.Close()
	service := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer k-secret" {
			t.Errorf("the service itself should get the key")
		}
		http.Redirect(w, r, storage.URL+"/blob?sig=x", http.StatusFound)
	}))
	defer service.Close()
	c := testClient(t, service.URL)
	var sink discard
	if _, err := c.DownloadTo(context.Background(), service.URL+"/api/view?filename=a.png", &sink, DownloadLimits{}); err != nil {
		t.Fatal(err)
	}
	h, _ := storageSaw.Load().(http.Header)
	for _, name := range []string{"Authorization", "X-Api-Key", "Cookie"} {
		if h.Get(name) != "" {
			t.Errorf("storage host received %s", name)
		}
	}
	if sink.n != 3 {
		t.Fatalf("downloaded %d bytes, want 3", sink.n)
	}
}

func TestDownloadSendsNoCredentialsToAnotherOrigin(t *testing.T) {
	var got http.Header
	storage := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.Header.Clone()
		_, _ = w.Write([]byte("x"))
	}))
	defer storage.Close()
	c := testClient(t, "http://127.0.0.1:1") // the service is elsewhere
	if _, err := c.DownloadTo(context.Background(), storage.URL+"/o.png", &discard{}, DownloadLimits{}); err != nil {
		t.Fatal(err)
	}
	if got.Get("Authorization") != "" || got.Get("X-Api-Key") != "" {
		t.Fatalf("credentials sent to a storage host: %v", got)
	}
}

type discard struct{ n int }

func (d *discard) Write(p []byte) (int, error) { d.n += len(p); return len(p), nil }

// net/http resends a request with an Idempotency-Key on its own when a reused keep-alive
// connection breaks. The submission must never be resent that way, though submissions reuse
// their connections: the client resends it itself, knowing the first answer was lost, so the
// service's refusal of the resend as a reuse is an unknown outcome (the first arrived). Resent
// by net/http behind the client's back, that refusal would be the answer to the client's first
// attempt, and taken for a key used before.
func TestSubmitNotResentByNetHTTPOnReusedConnection(t *testing.T) {
	id := "33333333-3333-3333-3333-333333333333"
	var posts atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch posts.Add(1) {
		case 1:
			w.WriteHeader(http.StatusCreated)
			_, _ = w.Write([]byte(jobJSON(id, "queued"))) // leaves an idle connection
		case 2:
			dropConnection(w, r) // read the request, then lose the answer
		default:
			w.WriteHeader(http.StatusUnprocessableEntity)
			_, _ = w.Write([]byte(`{"error":{"code":"idempotency_key_reuse","message":"used"}}`))
		}
	}))
	defer srv.Close()
	c := testClient(t, srv.URL)
	ctx := context.Background()
	if _, err := c.SubmitJob(ctx, SubmitJobInput{Workflow: json.RawMessage(`{}`), IdempotencyKey: "k1"}); err != nil {
		t.Fatal(err)
	}
	_, err := c.SubmitJob(ctx, SubmitJobInput{Workflow: json.RawMessage(`{}`), IdempotencyKey: "k2"})
	var unknown *UnknownOutcomeError
	if !errors.As(err, &unknown) || !unknown.FirstArrived {
		t.Fatalf("err = %v, want an unknown outcome whose first attempt arrived", err)
	}
	if n := posts.Load(); n != 3 {
		t.Fatalf("the service received %d submissions, want exactly 3 (the second resent once, by the client)", n)
	}
}

// A batch submits and reads hundreds of jobs at once: its requests ride kept connections, not
// a new connection each.
func TestRequestsReuseConnections(t *testing.T) {
	t.Parallel()
	id := "33333333-3333-3333-3333-333333333334"
	var mu sync.Mutex
	conns := map[string]map[string]bool{} // method to remote addresses
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		if conns[r.Method] == nil {
			conns[r.Method] = map[string]bool{}
		}
		conns[r.Method][r.RemoteAddr] = true
		mu.Unlock()
		if r.Method == http.MethodPost {
			w.WriteHeader(http.StatusCreated)
		}
		_, _ = w.Write([]byte(jobJSON(id, "queued")))
	}))
	defer srv.Close()
	c := testClient(t, srv.URL)
	const workers, rounds = 8, 5
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range rounds {
				key := fmt.Sprintf("k-%d-%d", w, i)
				if _, err := c.SubmitJob(context.Background(), SubmitJobInput{Workflow: json.RawMessage(`{}`), IdempotencyKey: key}); err != nil {
					t.Error(err)
				}
				if _, err := c.GetJob(context.Background(), id); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	for method, addrs := range conns {
		if len(addrs) > workers {
			t.Errorf("%d requests of %s came on %d connections, want at most %d (one per request at once)", workers*rounds, method, len(addrs), workers)
		}
	}
}

// The cancel answer is an assumption (the job record); whatever a service answers instead, the
// job is read back through its self link.
func TestCancelJobWhateverTheAnswer(t *testing.T) {
	id := "44444444-4444-4444-4444-444444444444"
	tests := []struct {
		name   string
		cancel http.HandlerFunc
	}{
		{name: "200 with the job", cancel: status(200, nil, jobJSON(id, "canceling"))},
		{name: "202 with an empty body", cancel: status(202, nil, "")},
		{name: "204", cancel: status(204, nil, "")},
		{name: "200 with another body", cancel: status(200, nil, `{"ok":true}`)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Method == http.MethodPost {
					tt.cancel(w, r)
					return
				}
				_, _ = w.Write([]byte(jobJSON(id, "canceling")))
			}))
			defer srv.Close()
			c := testClient(t, srv.URL)
			job, err := c.GetJob(context.Background(), id)
			if err != nil {
				t.Fatal(err)
			}
			got, err := c.CancelJob(context.Background(), job)
			if err != nil || got.Status != "canceling" || got.ID != id {
				t.Fatalf("CancelJob = %+v, %v; want the job, canceling", got, err)
			}
		})
	}
}
