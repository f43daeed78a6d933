package client

// Hostile servers and hostile input: what a compromised, misconfigured or malicious endpoint (or
// a hostile id in configuration) can make the client do. Each test measures what crossed the
// wire, not only the error text.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

const gib = int64(1) << 30

// hugeBody answers with status and a 1 GiB body generated on the fly (never held in memory), and
// counts the body bytes the client let it write before hanging up.
type hugeBody struct {
	status        int
	declareLength bool // send Content-Length: 1 GiB instead of chunked encoding
	written       atomic.Int64
	requests      atomic.Int32
	done          chan struct{}
}

func newHugeBody(status int, declareLength bool) *hugeBody {
	return &hugeBody{status: status, declareLength: declareLength, done: make(chan struct{}, 16)}
}

func (h *hugeBody) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	h.requests.Add(1)
	defer func() { h.done <- struct{}{} }()
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Svc-Request-Id", "req-huge")
	if h.declareLength {
		w.Header().Set("Content-Length", strconv.FormatInt(gib, 10))
	}
	w.WriteHeader(h.status)
	prefix := `{"id":"44444444-4444-4444-4444-444444444444","status":"queued","pad":"`
	n, err := io.WriteString(w, prefix)
	h.written.Add(int64(n))
	chunk := []byte(strings.Repeat("x", 64<<10))
	for total := int64(n); err == nil && total < gib; total += int64(n) {
		n, err = w.Write(chunk[:min(int64(len(chunk)), gib-total)])
		h.written.Add(int64(n))
	}
}

// waitHandlers waits until n handler runs have returned (the client hung up on each).
func (h *hugeBody) waitHandlers(t *testing.T, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		select {
		case <-h.done:
		case <-time.After(20 * time.Second):
			t.Fatalf("the server is still writing: the client did not hang up (wrote %d bytes)", h.written.Load())
		}
	}
}

// A body beyond the bound is refused with a clear error while reading at most the bound: the
// service cannot make the client (and Terraform with it) exhaust memory.
func TestHugeResponseBodiesRefused(t *testing.T) {
	id := "44444444-4444-4444-4444-444444444444"
	tests := []struct {
		name          string
		status        int
		declareLength bool
		wantInErr     []string
		maxRead       int64 // body bytes the server may get out before the client hangs up (bound + socket buffers)
		maxAlloc      uint64
		requests      int
	}{
		{name: "job record, chunked", status: 200, wantInErr: []string{"read job", "over 32 MiB refused", "req-huge"},
			maxRead: maxJSONBody + 24<<20, maxAlloc: 256 << 20, requests: 1},
		{name: "job record, declared 1 GiB", status: 200, declareLength: true, wantInErr: []string{"read job", "1073741824 bytes", "over 32 MiB refused", "req-huge"},
			maxRead: 24 << 20, maxAlloc: 32 << 20, requests: 1},
		{name: "error body", status: 404, wantInErr: []string{"HTTP 404", "req-huge"},
			maxRead: maxErrorBody + 24<<20, maxAlloc: 32 << 20, requests: 1},
		{name: "error body, retried", status: 503, wantInErr: []string{"HTTP 503", "req-huge"},
			maxRead: 4 * (maxErrorBody + 24<<20), maxAlloc: 64 << 20, requests: 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHugeBody(tt.status, tt.declareLength)
			srv := httptest.NewServer(h)
			defer srv.Close()
			c := testClient(t, srv.URL)

			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			_, err := c.GetJob(context.Background(), id)
			runtime.ReadMemStats(&after)
			h.waitHandlers(t, tt.requests)

			if err == nil {
				t.Fatal("a 1 GiB body was accepted")
			}
			for _, want := range tt.wantInErr {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not say %q", err, want)
				}
			}
			if got := int(h.requests.Load()); got != tt.requests {
				t.Errorf("requests = %d, want %d", got, tt.requests)
			}
			written := h.written.Load()
			alloc := after.TotalAlloc - before.TotalAlloc
			t.Logf("server wrote %.1f MiB of a 1024 MiB body; client process allocated %.1f MiB", float64(written)/(1<<20), float64(alloc)/(1<<20))
			if written > tt.maxRead {
				t.Errorf("the server wrote %d bytes before the client hung up, want at most %d", written, tt.maxRead)
			}
			if alloc > tt.maxAlloc {
				t.Errorf("allocated %d bytes reading the response, want at most %d", alloc, tt.maxAlloc)
			}
		})
	}
}

// tlsServer is an HTTPS server whose certificate no system pool trusts. It counts TLS
// connections attempted and requests that got through.
func tlsServer(t *testing.T) (srv *httptest.Server, conns, requests *atomic.Int32) {
	t.Helper()
	conns, requests = new(atomic.Int32), new(atomic.Int32)
	srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		if r.Method == http.MethodPost {
			w.WriteHeader(http.StatusCreated)
		}
		_, _ = io.WriteString(w, jobJSON("55555555-5555-5555-5555-555555555555", "queued"))
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the expected handshake failures
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv, conns, requests
}

// TLS is always verified, and a certificate failure is final: it is not retried, and a submission
// that failed the handshake is known not to have been sent.
func TestTLSCertificateFailureIsFinal(t *testing.T) {
	ops := map[string]func(*Client) error{
		"read job": func(c *Client) error {
			_, err := c.GetJob(context.Background(), "55555555-5555-5555-5555-555555555555")
			return err
		},
		"submit job": func(c *Client) error {
			_, err := c.SubmitJob(context.Background(), SubmitJobInput{Workflow: json.RawMessage(`{}`), IdempotencyKey: "k"})
			return err
		},
	}
	for name, op := range ops {
		t.Run(name, func(t *testing.T) {
			srv, conns, requests := tlsServer(t)
			err := op(testClient(t, srv.URL))
			if err == nil || !strings.Contains(err.Error(), "certificate") {
				t.Fatalf("err = %v, want a certificate error", err)
			}
			var unknown *UnknownOutcomeError
			if errors.As(err, &unknown) {
				t.Errorf("a failed handshake was reported as an unknown outcome: %v", err)
			}
			if conns.Load() != 1 || requests.Load() != 0 {
				t.Errorf("%d connections and %d requests, want 1 connection (no retry) and no request", conns.Load(), requests.Load())
			}

			// The same server works once its certificate is trusted: the failure above was the
			// verification, not something else.
			trusted := testClient(t, srv.URL, func(cfg *Config) { cfg.HTTPClient = srv.Client() })
			if err := op(trusted); err != nil {
				t.Fatalf("with the server's certificate trusted: %v", err)
			}
		})
	}
}

// There is no switch that turns verification off: a user who needs a private CA installs it in
// the system pool (SSL_CERT_FILE / SSL_CERT_DIR).
func TestConfigHasNoInsecureKnob(t *testing.T) {
	typ := reflect.TypeOf(Config{})
	for i := 0; i < typ.NumField(); i++ {
		name := strings.ToLower(typ.Field(i).Name)
		for _, bad := range []string{"insecure", "skipverify", "skip_verify", "tls", "verify"} {
			if strings.Contains(name, bad) {
				t.Errorf("client.Config has a field %q that looks like a TLS verification switch", typ.Field(i).Name)
			}
		}
	}
	// The default transport verifies.
	c := testClient(t, "https://svc.example")
	if tr, ok := c.short.Transport.(*http.Transport); !ok || (tr.TLSClientConfig != nil && tr.TLSClientConfig.InsecureSkipVerify) {
		t.Fatalf("default transport %T does not verify certificates", c.short.Transport)
	}
}

// A Retry-After beyond the cap ends the retries at once, with an error that names the wait, for
// reads (429 and 503) and for submissions (429).
func TestHugeRetryAfterEndsRetries(t *testing.T) {
	far := time.Now().Add(1000 * time.Hour).UTC().Format(http.TimeFormat)
	ops := map[string]func(*Client) error{
		"read job": func(c *Client) error {
			_, err := c.GetJob(context.Background(), "66666666-6666-6666-6666-666666666666")
			return err
		},
		"submit job": func(c *Client) error {
			_, err := c.SubmitJob(context.Background(), SubmitJobInput{Workflow: json.RawMessage(`{}`), IdempotencyKey: "k"})
			return err
		},
	}
	for _, code := range []int{http.StatusTooManyRequests, http.StatusServiceUnavailable} {
		for _, retryAfter := range []string{"99999999999999", "86400", far} {
			for name, op := range ops {
				t.Run(strconv.Itoa(code)+" "+retryAfter+" "+name, func(t *testing.T) {
					s := &scripted{steps: []http.HandlerFunc{status(code, map[string]string{"Retry-After": retryAfter, "X-Svc-Request-Id": "req-ra"}, `{"error":{"code":"queue_full","message":"full"}}`)}}
					srv := httptest.NewServer(s)
					defer srv.Close()
					start := time.Now()
					err := op(testClient(t, srv.URL))
					if elapsed := time.Since(start); elapsed > 5*time.Second {
						t.Fatalf("took %s: the client waited", elapsed)
					}
					if s.count() != 1 {
						t.Fatalf("requests = %d, want 1", s.count())
					}
					for _, want := range []string{"Retry-After", "longer than the 2m0s this client waits", "req-ra", "HTTP " + strconv.Itoa(code)} {
						if err == nil || !strings.Contains(err.Error(), want) {
							t.Fatalf("err = %v, want it to say %q", err, want)
						}
					}
				})
			}
		}
	}
}

// Ids with "/", "..", "%", "?", "#" or spaces stay one path segment on the wire, and those that
// cannot be one are refused before anything is sent.
func TestHostileJobIDsStayOneSegment(t *testing.T) {
	var mu sync.Mutex
	var got []*url.URL
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.URL)
		mu.Unlock()
		writeJob := status(404, nil, `{"error":{"code":"not_found","message":"no"}}`)
		writeJob(w, r)
	}))
	defer srv.Close()
	prefix := "/deployment/d1"
	c := testClient(t, srv.URL+prefix)

	for _, id := range []string{"../../admin", "a/b", "%2e%2e", "%2F", "x?y=1", "x#frag", "a b", "..%2f", "./x", "\\..\\x", "~", "é"} {
		mu.Lock()
		got = nil
		mu.Unlock()
		_, err := c.GetJob(context.Background(), id)
		if statusOf(err) != 404 {
			t.Fatalf("GetJob(%q): err = %v, want the server's 404", id, err)
		}
		mu.Lock()
		u := got[0]
		mu.Unlock()
		if len(got) != 1 || u.RawQuery != "" || u.Fragment != "" {
			t.Fatalf("GetJob(%q) sent %d requests, last %q", id, len(got), u)
		}
		seg, ok := strings.CutPrefix(u.EscapedPath(), prefix+"/api/v2/jobs/")
		if !ok || strings.Contains(seg, "/") {
			t.Fatalf("GetJob(%q) requested %q: not one segment under %s/api/v2/jobs/", id, u.EscapedPath(), prefix)
		}
		if dec, _ := url.PathUnescape(seg); dec != id {
			t.Fatalf("GetJob(%q) requested segment %q, which is %q", id, seg, dec)
		}
	}
	for _, id := range []string{"", ".", "..", "a\nb", "a\rb", "a\x00b"} {
		mu.Lock()
		got = nil
		mu.Unlock()
		if _, err := c.GetJob(context.Background(), id); err == nil || statusOf(err) != 0 {
			t.Fatalf("GetJob(%q): err = %v, want a refusal before sending", id, err)
		}
		if len(got) != 0 {
			t.Fatalf("GetJob(%q) sent a request", id)
		}
	}
}

// A submission answered with a record whose link cannot be used at all (it carries userinfo): the
// job exists, so the error is not an unknown outcome; it names the job and the key.
func TestSubmitWithUnusableLinkNamesTheJob(t *testing.T) {
	id := "88888888-8888-4888-8888-888888888888"
	srv := httptest.NewServer(status(201, nil, `{"id":"`+id+`","status":"queued","urls":{"self":"https://user:pw@example.net/j"}}`))
	defer srv.Close()
	_, err := testClient(t, srv.URL).SubmitJob(context.Background(), SubmitJobInput{Workflow: json.RawMessage(`{}`), IdempotencyKey: "key-f"})
	var refused *RefusedJobRecordError
	var unknown *UnknownOutcomeError
	if !errors.As(err, &refused) || errors.As(err, &unknown) {
		t.Fatalf("err = %v; want a RefusedJobRecordError", err)
	}
	if refused.JobID != id || refused.Status != "queued" || !strings.Contains(err.Error(), id) || !strings.Contains(err.Error(), "key-f") {
		t.Fatalf("err = %v (%+v); want job id, status and key kept", err, refused)
	}
	if strings.Contains(err.Error(), "pw") {
		t.Fatalf("err = %v; the link's password is quoted", err)
	}
}

// A submission answered with links on another host: they are followed on the service's own
// origin (the path kept), so the foreign host never hears from the client.
func TestSubmitWithForeignLinksRebased(t *testing.T) {
	var foreignHits atomic.Int32
	foreign := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { foreignHits.Add(1) }))
	defer foreign.Close()
	id := "88888888-8888-4888-8888-888888888888"
	var reads atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			w.WriteHeader(http.StatusCreated)
			fmt.Fprintf(w, `{"id":%q,"status":"queued","urls":{"self":%q,"events":%q,"cancel":%q}}`, id, foreign.URL+"/j/"+id, foreign.URL+"/j/e", foreign.URL+"/j/c")
			return
		}
		if r.URL.Path == "/j/"+id && r.Header.Get("Authorization") != "" {
			reads.Add(1)
		}
		fmt.Fprintf(w, `{"id":%q,"status":"succeeded","urls":{"self":"/j/%s"}}`, id, id)
	}))
	defer srv.Close()
	c := testClient(t, srv.URL)
	job, err := c.SubmitJob(context.Background(), SubmitJobInput{Workflow: json.RawMessage(`{}`), IdempotencyKey: "key-f"})
	if err != nil {
		t.Fatal(err)
	}
	if job.URLs.Self != srv.URL+"/j/"+id || job.URLs.Cancel != srv.URL+"/j/c" {
		t.Fatalf("links %+v; want them on %s", job.URLs, srv.URL)
	}
	if _, err := c.RefreshJob(context.Background(), job); err != nil || reads.Load() != 1 {
		t.Fatalf("refresh: err %v, authorized reads of the rebased self link %d", err, reads.Load())
	}
	if foreignHits.Load() != 0 {
		t.Fatal("the foreign host received a request")
	}
}

// A 404 through a job's self or cancel link is confirmed by reading the job by id before it is
// taken as gone: a wrong link (a rebased one, say) must not make a live job look deleted.
func TestNotFoundThroughALinkIsConfirmedByID(t *testing.T) {
	const id = "3b8c3f0e-1a2b-4c5d-8e9f-0a1b2c3d4e5f"
	notFound := `{"error":{"code":"not_found","message":"no such path"}}`
	tests := []struct {
		name       string
		byID       int    // status of GET /api/v2/jobs/{id}
		self       string // the self link followed
		cancel     bool   // cancel through /wrong/cancel instead of reading
		byIDCancel bool   // the cancel link of the record read by id works
		wantGone   bool
		wantErr    string
		wantReads  int32 // requests to /api/v2/jobs/{id}
	}{
		{name: "read: wrong self link, job there", byID: 200, self: "/wrong/" + id, wantReads: 1},
		{name: "read: wrong self link, job gone", byID: 404, self: "/wrong/" + id, wantGone: true, wantReads: 1},
		{name: "read: the by-id path itself is not read twice", byID: 404, self: "/api/v2/jobs/" + id, wantGone: true, wantReads: 1},
		{name: "cancel: wrong link, job still running, its own link fails too", byID: 200, cancel: true, wantErr: "yet the job is running", wantReads: 1},
		{name: "cancel: wrong link, job canceled through the link read by id", byID: 200, cancel: true, byIDCancel: true, wantReads: 1},
		{name: "cancel: wrong link, job gone", byID: 404, cancel: true, wantGone: true, wantReads: 1},
		{name: "cancel: wrong link, job unreadable", byID: 503, cancel: true, wantErr: "reading the job by id failed", wantReads: 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var reads atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if tt.byIDCancel && r.Method == http.MethodPost && r.URL.Path == "/api/v2/jobs/"+id+"/cancel" {
					status(200, nil, jobJSON(id, JobCanceling))(w, r)
					return
				}
				if r.URL.Path != "/api/v2/jobs/"+id {
					status(404, nil, notFound)(w, r)
					return
				}
				reads.Add(1)
				if tt.byID != 200 {
					status(tt.byID, nil, notFound)(w, r)
					return
				}
				status(200, nil, jobJSON(id, JobRunning))(w, r)
			}))
			defer srv.Close()
			c := testClient(t, srv.URL)
			var job *Job
			var err error
			if tt.cancel {
				job, err = c.CancelJob(context.Background(), &Job{ID: id, Status: JobRunning, URLs: JobURLs{Self: srv.URL + "/wrong/" + id, Cancel: srv.URL + "/wrong/cancel"}})
			} else {
				job, err = c.ReadJob(context.Background(), id, srv.URL+tt.self)
			}
			switch {
			case tt.wantGone:
				if !Gone(err) {
					t.Fatalf("err = %v, want not found", err)
				}
			case tt.wantErr != "":
				if err == nil || Gone(err) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q and not taken for gone", err, tt.wantErr)
				}
			case tt.byIDCancel:
				if err != nil || job.Status != JobCanceling {
					t.Fatalf("job %+v, err %v; want the job canceled through the link read by id", job, err)
				}
			default:
				if err != nil || job.Status != JobRunning {
					t.Fatalf("job %+v, err %v; want the job read by id", job, err)
				}
			}
			if n := reads.Load(); n != tt.wantReads {
				t.Fatalf("%d reads by id, want %d", n, tt.wantReads)
			}
		})
	}
}

// A read redirected to another origin: the record's links, host-relative or naming that origin,
// resolve on the origin the request was sent to, so later calls never carry the key to the
// redirect target.
func TestLinksAfterACrossOriginRedirectStayOnTheEndpoint(t *testing.T) {
	const id = "5d9e2f3a-4b5c-4d6e-8f70-8192a3b4c5d6"
	for _, tc := range []struct{ name, self string }{
		{name: "host-relative", self: "/api/v2/jobs/" + id},
		{name: "absolute on the redirect target", self: "TARGET/api/v2/jobs/" + id},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var withKey atomic.Int32
			target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Header.Get("Authorization") != "" || r.Header.Get("X-Api-Key") != "" {
					withKey.Add(1)
				}
				self := strings.Replace(tc.self, "TARGET", "http://"+r.Host, 1)
				fmt.Fprintf(w, `{"id":%q,"status":"running","urls":{"self":%q,"events":%q,"cancel":%q}}`, id, self, self+"/events", self+"/cancel")
			}))
			defer target.Close()
			endpoint := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, target.URL+r.URL.Path, http.StatusFound)
			}))
			defer endpoint.Close()
			c := testClient(t, endpoint.URL)
			job, err := c.GetJob(context.Background(), id)
			if err != nil {
				t.Fatal(err)
			}
			for _, link := range []string{job.URLs.Self, job.URLs.Events, job.URLs.Cancel} {
				if !strings.HasPrefix(link, endpoint.URL+"/") {
					t.Fatalf("link %q is not on the endpoint %s", link, endpoint.URL)
				}
			}
			if _, err := c.RefreshJob(context.Background(), job); err != nil {
				t.Fatal(err)
			}
			if n := withKey.Load(); n != 0 {
				t.Fatalf("the redirect target received the API key %d time(s)", n)
			}
		})
	}
}
