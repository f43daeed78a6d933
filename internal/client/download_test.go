package client

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"testing/synctest"
	"time"
)

// simAssets is an asset service and its storage in the test's process, on synctest's clock:
// GET /api/v2/assets/{id} answers the record with a URL signed anew (sig=1, 2, ...), GET
// /content?sig=N serves the content, and each content request answers as the next step of a
// script says (the last step repeats). It records every request.
type simAssets struct {
	simScript
	content  []byte
	mu       sync.Mutex
	records  int          // record reads
	signed   int          // URLs signed
	requests []simRequest // content requests
	// outageAnswers counts the requests answered 503 before downUntil
	outageAnswers int
}

// simScript is how a simAssets answers.
type simScript struct {
	downUntil   time.Time // every request before it is answered 503 (an outage)
	ignoreRange bool      // answer 200 with the whole content to a range request
	changed     []byte    // when set, the content served from the second content request on
	steps       []simStep // one per content request; the last repeats
	recordSteps []simStep // one per record read (only status and refused are used); none: all answered
}

// simStep is how one content request is answered.
type simStep struct {
	status     int           // an error status instead of the content (0: the content)
	retryAfter int           // with status: Retry-After seconds
	refused    bool          // the connection is refused
	cutAfter   int           // the body ends after this many bytes, cut (0: not cut)
	stallAfter int           // the body stops after this many bytes until the request ends (0: no stall)
	badRange   bool          // answer a range with a Content-Range starting elsewhere
	delay      time.Duration // before answering
}

type simRequest struct {
	sig    string
	rng    string // Range header
	status int    // what was answered (0: refused)
}

var errSimRefused = &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}

func (s *simAssets) RoundTrip(req *http.Request) (*http.Response, error) {
	if time.Now().Before(s.downUntil) {
		s.mu.Lock()
		s.outageAnswers++
		s.mu.Unlock()
		return simError(req, simStep{status: http.StatusServiceUnavailable}), nil
	}
	if strings.HasPrefix(req.URL.Path, "/api/v2/assets/") {
		return s.record(req)
	}
	s.mu.Lock()
	step := s.steps[min(len(s.requests), len(s.steps)-1)]
	content := s.content
	if s.changed != nil && len(s.requests) > 0 {
		content = s.changed
	}
	s.requests = append(s.requests, simRequest{sig: req.URL.Query().Get("sig"), rng: req.Header.Get("Range")})
	at := len(s.requests) - 1
	s.mu.Unlock()
	if step.delay > 0 {
		time.Sleep(step.delay)
	}
	resp, err := s.answer(req, step, content)
	s.mu.Lock()
	if resp != nil {
		s.requests[at].status = resp.StatusCode
	}
	s.mu.Unlock()
	return resp, err
}

func (s *simAssets) record(req *http.Request) (*http.Response, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.records++
	if len(s.recordSteps) > 0 {
		step := s.recordSteps[min(s.records-1, len(s.recordSteps)-1)]
		if step.refused {
			return nil, errSimRefused
		}
		if step.status != 0 {
			return simError(req, step), nil
		}
	}
	s.signed++
	body := fmt.Sprintf(`{"id":"a1","name":"out.bin","content_type":"application/octet-stream","size_bytes":%d,"hash":null,`+
		`"url":"/content?sig=%d","url_expires_at":"2026-01-01T00:00:00Z"}`, len(s.content), s.signed)
	return simResponse(req, http.StatusOK, http.Header{"Content-Type": {"application/json"}}, io.NopCloser(strings.NewReader(body)), int64(len(body))), nil
}

func (s *simAssets) answer(req *http.Request, step simStep, content []byte) (*http.Response, error) {
	switch {
	case step.refused:
		return nil, errSimRefused
	case step.status != 0:
		return simError(req, step), nil
	}
	start, status := int64(0), http.StatusOK
	h := http.Header{"Content-Type": {"application/octet-stream"}}
	if from, ok := strings.CutPrefix(req.Header.Get("Range"), "bytes="); ok && !s.ignoreRange {
		start, _ = strconv.ParseInt(strings.TrimSuffix(from, "-"), 10, 64)
		status = http.StatusPartialContent
		first := start
		if step.badRange {
			first = 0
		}
		h.Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", first, len(content)-1, len(content)))
	}
	part := content[start:]
	var body io.Reader = bytes.NewReader(part)
	switch {
	case step.cutAfter > 0:
		body = io.MultiReader(bytes.NewReader(part[:step.cutAfter]), errReader{io.ErrUnexpectedEOF})
	case step.stallAfter > 0:
		body = io.MultiReader(bytes.NewReader(part[:step.stallAfter]), silentBody{ctx: req.Context()})
	}
	return simResponse(req, status, h, io.NopCloser(body), int64(len(part))), nil
}

func simError(req *http.Request, step simStep) *http.Response {
	h := http.Header{"Content-Type": {"application/json"}, "X-Svc-Request-Id": {"req-" + strconv.Itoa(step.status)}}
	if step.retryAfter > 0 {
		h.Set("Retry-After", strconv.Itoa(step.retryAfter))
	}
	body := fmt.Sprintf(`{"error":{"code":"sim_%d","message":"simulated"}}`, step.status)
	return simResponse(req, step.status, h, io.NopCloser(strings.NewReader(body)), int64(len(body)))
}

func simResponse(req *http.Request, status int, h http.Header, body io.ReadCloser, n int64) *http.Response {
	return &http.Response{StatusCode: status, Status: http.StatusText(status), Header: h, Body: body, ContentLength: n, Request: req,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1}
}

type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }

// silentBody sends nothing until its request ends.
type silentBody struct{ ctx context.Context }

func (r silentBody) Read([]byte) (int, error) { <-r.ctx.Done(); return 0, r.ctx.Err() }

func (s *simAssets) snapshot() (records, signed int, reqs []simRequest) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.records, s.signed, append([]simRequest(nil), s.requests...)
}

// simContent is 1 MiB that is not all zeros, so that a splice at the wrong byte shows.
func simContent() []byte {
	b := make([]byte, 1<<20)
	for i := range b {
		b[i] = byte(i * 7 / 5)
	}
	return b
}

// A download rides out transient failures until its deadline, resuming with a range where the
// server honours one and reading the whole content again where it does not, with a URL signed
// anew for every attempt; what is not transient ends it at once. Run on synctest's clock: the
// times are exact.
func TestDownloadAssetRidesOutFailures(t *testing.T) {
	t.Parallel()
	rep := func(n int, s simStep) []simStep {
		out := make([]simStep, n)
		for i := range out {
			out[i] = s
		}
		return out
	}
	tests := []struct {
		name        string
		sim         simScript
		lim         DownloadLimits
		deadline    time.Duration // 0: an hour
		wantErr     string        // "" succeeds
		wantIs      error
		wantStatus  int      // the status the error carries (0: not checked)
		wantRanges  []string // the Range header of each content request (nil: not checked)
		wantReqs    int      // content requests
		wantElapsed [2]time.Duration
	}{
		{
			name:       "cut mid-stream, then resumed with a range",
			sim:        simScript{steps: []simStep{{cutAfter: 300_000}, {}}},
			wantRanges: []string{"", "bytes=300000-"}, wantReqs: 2,
		},
		{
			name:       "cut twice, each attempt resuming where the last stopped",
			sim:        simScript{steps: []simStep{{cutAfter: 100_000}, {cutAfter: 100_000}, {}}},
			wantRanges: []string{"", "bytes=100000-", "bytes=200000-"}, wantReqs: 3,
		},
		{
			name:       "a server that ignores the range: the whole content again, the first bytes dropped",
			sim:        simScript{ignoreRange: true, steps: []simStep{{cutAfter: 300_000}, {}}},
			wantRanges: []string{"", "bytes=300000-"}, wantReqs: 2,
		},
		{
			name:    "content that changed between attempts is refused",
			sim:     simScript{ignoreRange: true, changed: bytes.Repeat([]byte{1}, 1<<20), steps: []simStep{{cutAfter: 300_000}, {}}},
			wantErr: "differ from the ones already written", wantIs: ErrContentChanged, wantReqs: 2,
		},
		{
			name:    "a 206 for other bytes than asked is refused",
			sim:     simScript{steps: []simStep{{cutAfter: 300_000}, {badRange: true}}},
			wantErr: "not from byte 300000", wantReqs: 2,
		},
		{
			name:     "503 with Retry-After three times, then the content",
			sim:      simScript{steps: append(rep(3, simStep{status: 503, retryAfter: 2}), simStep{})},
			wantReqs: 4,
			// Three waits of 2 s; a record read and its content request, due together, leave
			// departureSpacing apart.
			wantElapsed: [2]time.Duration{6 * time.Second, 6*time.Second + 8*departureSpacing},
		},
		{
			name:     "refused for a while, then the content",
			sim:      simScript{steps: append(rep(6, simStep{refused: true}), simStep{})},
			wantReqs: 7,
			// backoff from 250 ms with full jitter, doubling its ceiling (and the outage gate's
			// probes, once three failed in a row): at least 6 × 250 ms, at most 0.5+1+...+16 s
			// twice over
			wantElapsed: [2]time.Duration{1500 * time.Millisecond, 63 * time.Second},
		},
		{
			name:     "the record read refused for a while too",
			sim:      simScript{recordSteps: []simStep{{}, {refused: true}, {refused: true}, {status: 502}, {}}, steps: []simStep{{cutAfter: 10}, {}}},
			wantReqs: 2, wantRanges: []string{"", "bytes=10-"},
		},
		{
			name:     "a stall, then resumed",
			sim:      simScript{steps: []simStep{{stallAfter: 500_000}, {}}},
			lim:      DownloadLimits{StallTimeout: 10 * time.Second},
			wantReqs: 2, wantRanges: []string{"", "bytes=500000-"},
			wantElapsed: [2]time.Duration{10 * time.Second, 11 * time.Second},
		},
		{
			name:        "503 until the deadline: the error names the last failure",
			sim:         simScript{steps: []simStep{{status: 503}}},
			deadline:    time.Minute,
			wantErr:     "HTTP 503",
			wantIs:      context.DeadlineExceeded,
			wantElapsed: [2]time.Duration{time.Minute, time.Minute},
		},
		{
			name:    "404 ends at once",
			sim:     simScript{steps: []simStep{{status: 404}}},
			wantErr: "HTTP 404", wantStatus: 404, wantReqs: 1,
		},
		{
			name:    "404 after a cut ends at once",
			sim:     simScript{steps: []simStep{{cutAfter: 10}, {status: 404}}},
			wantErr: "HTTP 404", wantStatus: 404, wantReqs: 2,
		},
		{
			name:     "403 once (a signed URL that expired): one more attempt at once, signed anew",
			sim:      simScript{steps: []simStep{{status: 403}, {}}},
			wantReqs: 2, wantElapsed: [2]time.Duration{0, 0},
		},
		{
			name:    "403 twice in a row is a refusal",
			sim:     simScript{steps: []simStep{{status: 403}}},
			wantErr: "HTTP 403", wantStatus: 403, wantReqs: 2,
		},
		{
			name:    "410 ends at once",
			sim:     simScript{steps: []simStep{{status: 410}}},
			wantErr: "HTTP 410", wantStatus: 410, wantReqs: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				sim := &simAssets{simScript: tt.sim, content: simContent()}
				c, err := New(Config{Endpoint: "http://svc.test", APIKey: "k", HTTPClient: &http.Client{Transport: sim}})
				if err != nil {
					t.Fatal(err)
				}
				deadline := tt.deadline
				if deadline == 0 {
					deadline = time.Hour
				}
				ctx, cancel := context.WithTimeout(t.Context(), deadline)
				defer cancel()
				began := time.Now()
				rec, err := c.GetAssetRidingOut(ctx, "a1")
				if err != nil {
					t.Fatal(err)
				}
				var got bytes.Buffer
				d, _, err := c.DownloadAsset(ctx, rec, &got, tt.lim)
				elapsed := time.Since(began)
				records, signed, reqs := sim.snapshot()
				switch {
				case tt.wantErr == "" && err != nil:
					t.Fatalf("download failed: %v", err)
				case tt.wantErr == "" && (!bytes.Equal(got.Bytes(), sim.content) || d.Size != int64(len(sim.content))):
					t.Fatalf("wrote %d bytes (size %d), not the %d bytes of the content", got.Len(), d.Size, len(sim.content))
				case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
					t.Fatalf("error %v, want one saying %q", err, tt.wantErr)
				case tt.wantIs != nil && !errors.Is(err, tt.wantIs):
					t.Fatalf("error %v, want one that is %v", err, tt.wantIs)
				case tt.wantStatus != 0 && statusOf(err) != tt.wantStatus:
					t.Fatalf("error %v carries status %d, want %d", err, statusOf(err), tt.wantStatus)
				}
				if tt.wantReqs > 0 && len(reqs) != tt.wantReqs {
					t.Errorf("%d content requests, want %d: %+v", len(reqs), tt.wantReqs, reqs)
				}
				for i, want := range tt.wantRanges {
					if i < len(reqs) && reqs[i].rng != want {
						t.Errorf("request %d asked Range %q, want %q", i+1, reqs[i].rng, want)
					}
				}
				// Every attempt used a URL signed for it: one record read per attempt (the
				// first by GetAssetRidingOut), never a URL used twice.
				sigs := map[string]bool{}
				for _, r := range reqs {
					if sigs[r.sig] {
						t.Errorf("signed URL %s used by two attempts: %+v", r.sig, reqs)
					}
					sigs[r.sig] = true
				}
				if len(reqs) > 0 && signed != len(reqs) {
					t.Errorf("%d URLs signed (%d record reads) for %d content requests, want one each", signed, records, len(reqs))
				}
				if w := tt.wantElapsed; w != [2]time.Duration{} && (elapsed < w[0] || elapsed > w[1]) {
					t.Errorf("took %v, want %v to %v", elapsed, w[0], w[1])
				}
				t.Logf("%d content requests, %d record reads, %v; err %v", len(reqs), records, elapsed, err)
			})
		})
	}
}

// A URL the caller gave is asked again on every attempt (it cannot be signed anew), resumed the
// same way; a writer that fails ends the download at once, with the writer's error.
func TestDownloadToRidesOutWithTheURLGiven(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		steps    []simStep
		w        func(*bytes.Buffer) io.Writer
		wantErr  error
		wantReqs int
	}{
		{name: "cut, 503, then the rest", steps: []simStep{{cutAfter: 4096}, {status: 503}, {}}, wantReqs: 3},
		{name: "the writer fails: not tried again", steps: []simStep{{}}, wantReqs: 1, wantErr: errDiskFull,
			w: func(*bytes.Buffer) io.Writer { return failingWriter{} }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				sim := &simAssets{simScript: simScript{steps: tt.steps}, content: simContent()}
				c, err := New(Config{Endpoint: "http://svc.test", HTTPClient: &http.Client{Transport: sim}})
				if err != nil {
					t.Fatal(err)
				}
				var got bytes.Buffer
				var w io.Writer = &got
				if tt.w != nil {
					w = tt.w(&got)
				}
				_, err = c.DownloadTo(t.Context(), "http://svc.test/content?sig=given", w, DownloadLimits{})
				records, _, reqs := sim.snapshot()
				switch {
				case tt.wantErr == nil && (err != nil || !bytes.Equal(got.Bytes(), sim.content)):
					t.Fatalf("download: %v (%d bytes written)", err, got.Len())
				case tt.wantErr != nil && !errors.Is(err, tt.wantErr):
					t.Fatalf("error %v, want %v", err, tt.wantErr)
				}
				if len(reqs) != tt.wantReqs || records != 0 {
					t.Errorf("%d content requests and %d record reads, want %d and none", len(reqs), records, tt.wantReqs)
				}
				for _, r := range reqs {
					if r.sig != "given" {
						t.Errorf("asked sig %q, want the URL given", r.sig)
					}
				}
			})
		})
	}
}

var errDiskFull = errors.New("no space left on device")

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errDiskFull }

// The downloads of one client learn together that the service is down (the outage gate the
// waits share): 32 downloads through a minute of 503 without Retry-After send a few requests
// after the first failures, one probe at a time, not 32 backoffs' worth; all finish once it is
// back.
func TestDownloadsShareTheOutageGate(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		const downloads = 32
		sim := &simAssets{simScript: simScript{steps: []simStep{{}}}, content: simContent()}
		c, err := New(Config{Endpoint: "http://svc.test", HTTPClient: &http.Client{Transport: sim}})
		if err != nil {
			t.Fatal(err)
		}
		rec, err := c.GetAsset(t.Context(), "a1")
		if err != nil {
			t.Fatal(err)
		}
		sim.downUntil = time.Now().Add(time.Minute)
		var wg sync.WaitGroup
		for range downloads {
			wg.Go(func() {
				var got bytes.Buffer
				first := *rec // each download its own record, as each would have read it
				if _, _, err := c.DownloadAsset(t.Context(), &first, &got, DownloadLimits{}); err != nil || got.Len() != len(sim.content) {
					t.Errorf("download: %v (%d bytes)", err, got.Len())
				}
			})
		}
		wg.Wait()
		sim.mu.Lock()
		down := sim.outageAnswers
		sim.mu.Unlock()
		// Each download's first attempt goes out before the service is taken for down; after that, probes.
		if down > downloads+12 {
			t.Errorf("%d requests answered 503 during the outage; want at most %d (the first attempts, then a probe at a time)", down, downloads+12)
		}
		t.Logf("%d downloads: %d requests during a minute of 503, done %v after it began", downloads, down, time.Since(sim.downUntil.Add(-time.Minute)))
	})
}

// simStorage is a service whose view route redirects to a storage host, in the test's process:
// each answers 503 while it is down, storage refuses connections when refused is set.
type simStorage struct {
	content                    []byte
	serviceDown, storageDown   bool
	storageRefused             bool
	mu                         sync.Mutex
	serviceAsked, storageAsked int
}

func (s *simStorage) RoundTrip(req *http.Request) (*http.Response, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if req.URL.Host == "svc.test" {
		s.serviceAsked++
		if s.serviceDown {
			return simError(req, simStep{status: http.StatusServiceUnavailable}), nil
		}
		h := http.Header{"Location": {"http://storage.test/obj?sig=" + strconv.Itoa(s.serviceAsked)}}
		return simResponse(req, http.StatusFound, h, http.NoBody, 0), nil
	}
	s.storageAsked++
	switch {
	case s.storageRefused:
		return nil, errSimRefused
	case s.storageDown:
		return simError(req, simStep{status: http.StatusServiceUnavailable}), nil
	}
	h := http.Header{"Content-Type": {"application/octet-stream"}}
	return simResponse(req, http.StatusOK, h, io.NopCloser(bytes.NewReader(s.content)), int64(len(s.content))), nil
}

// Only the service's own failures tell the outage gate it is down: a storage host that fails
// behind the view route's redirect, or a URL given on another host, is not the service (its
// other waits go on), while the view route failing itself is.
func TestDownloadFailuresElsewhereLeaveTheGateOpen(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name                                     string
		serviceDown, storageDown, storageRefused bool
		given                                    string // DownloadTo this URL instead of the view route
		wantDown                                 bool
	}{
		{name: "storage behind the view redirect answers 503", storageDown: true},
		{name: "storage behind the view redirect refuses connections", storageRefused: true},
		{name: "a URL given on another host answers 503", storageDown: true, given: "http://storage.test/obj?sig=given"},
		{name: "the view route answers 503", serviceDown: true, wantDown: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				sim := &simStorage{content: simContent(), serviceDown: tt.serviceDown, storageDown: tt.storageDown, storageRefused: tt.storageRefused}
				c, err := New(Config{Endpoint: "http://svc.test", HTTPClient: &http.Client{Transport: sim}})
				if err != nil {
					t.Fatal(err)
				}
				ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
				defer cancel()
				if tt.given != "" {
					_, err = c.DownloadTo(ctx, tt.given, io.Discard, DownloadLimits{})
				} else {
					_, err = c.DownloadView(ctx, ViewFile{Filename: "out.png", Type: "output"}, io.Discard, DownloadLimits{})
				}
				if !errors.Is(err, context.DeadlineExceeded) {
					t.Fatalf("download: %v; want it to ride out the failures until its deadline", err)
				}
				sim.mu.Lock()
				asked := sim.serviceAsked + sim.storageAsked
				sim.mu.Unlock()
				if closed := c.gate.serviceIsDown(); closed != tt.wantDown || asked < 2*outageFailures {
					t.Errorf("after %d requests the service is down: %v; want %v", asked, closed, tt.wantDown)
				}
			})
		})
	}
}
