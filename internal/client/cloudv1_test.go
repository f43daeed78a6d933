package client

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/png"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/svc-org/terraform-provider-svc/internal/emulator"
)

const v1Key = "v1-secret-key"

// recordingLogger keeps every log line with its fields rendered, to check what is never logged.
type recordingLogger struct {
	mu    sync.Mutex
	lines []string
}

func (l *recordingLogger) add(msg string, f map[string]any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, fmt.Sprintf("%s %v", msg, f))
}
func (l *recordingLogger) Debug(_ context.Context, m string, f map[string]any) { l.add(m, f) }
func (l *recordingLogger) Trace(_ context.Context, m string, f map[string]any) { l.add(m, f) }
func (l *recordingLogger) Warn(_ context.Context, m string, f map[string]any)  { l.add(m, f) }
func (l *recordingLogger) all() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

func v1Server(t *testing.T, opts emulator.Options) *emulator.Server {
	t.Helper()
	opts.Token = v1Key
	srv := emulator.New(opts)
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	return srv
}

func v1Client(t *testing.T, srv *emulator.Server, log Logger) *Client {
	return testClient(t, srv.URL(), func(c *Config) { c.APIKey = v1Key; c.Logger = log })
}

var fastWait = PromptWaitOptions{PollInterval: 5 * time.Millisecond, PollIntervalSocket: 20 * time.Millisecond, SocketGrace: 2 * time.Second}

func pngBytes(t *testing.T) []byte {
	var buf bytes.Buffer
	if err := png.Encode(&buf, image.NewNRGBA(image.Rect(0, 0, 2, 2))); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestUploadImageAndMaskSendMultipartFields(t *testing.T) {
	t.Parallel()
	srv := v1Server(t, emulator.Options{})
	c := v1Client(t, srv, nil)
	ctx := context.Background()

	img, err := c.Upload(ctx, UploadInput{FileName: "cat.png", Content: pngBytes(t), ContentType: "image/png", Type: "input", Overwrite: true})
	if err != nil {
		t.Fatal(err)
	}
	ref := `{"filename":"cat.png","subfolder":"","type":"input"}`
	mask, err := c.Upload(ctx, UploadInput{Mask: true, FileName: "cat-mask.png", Content: pngBytes(t), Type: "input", OriginalRef: ref})
	if err != nil {
		t.Fatal(err)
	}
	if img.Name != "cat.png" || mask.Name != "cat-mask.png" {
		t.Fatalf("names: %q, %q", img.Name, mask.Name)
	}
	ups := srv.Uploads()
	if len(ups) != 2 {
		t.Fatalf("uploads: %d", len(ups))
	}
	want := []struct {
		route  string
		fields map[string]string
	}{
		{"image", map[string]string{"type": "input", "overwrite": "true"}},
		{"mask", map[string]string{"type": "input", "subfolder": "", "original_ref": ref}},
	}
	for i, w := range want {
		u := ups[i]
		if u.Route != w.route || u.FileField != "image" || u.Size == 0 || !strings.HasPrefix(u.ContentType, "multipart/form-data; boundary=") {
			t.Errorf("upload %d: %+v", i, u)
		}
		for k, v := range w.fields {
			if got, ok := u.Fields[k]; !ok || got != v {
				t.Errorf("upload %d field %s = %q (present %v), want %q", i, k, got, ok, v)
			}
		}
	}
	if h := srv.LastRequestHeader(emulator.OpV1UploadImage); h.Get("X-Api-Key") != v1Key || h.Get("Authorization") != "" {
		t.Errorf("upload credentials: X-API-Key %q Authorization %q", h.Get("X-Api-Key"), h.Get("Authorization"))
	}
}

func TestObjectInfoRequiredOptionalChoices(t *testing.T) {
	t.Parallel()
	srv := v1Server(t, emulator.Options{})
	info, err := v1Client(t, srv, nil).GetObjectInfo(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	s := info.Classes["ImageNoiseSampler"]
	if fmt.Sprint(s.RequiredInputs) != "[image seed steps]" || fmt.Sprint(s.OptionalInputs) != "[denoise]" || fmt.Sprint(s.Outputs) != "[IMAGE]" || s.OutputNode {
		t.Errorf("ImageNoiseSampler: %+v", s)
	}
	if !info.Classes["SaveImage"].OutputNode {
		t.Error("SaveImage is an output node")
	}
	if len(info.Raw) == 0 {
		t.Error("raw JSON missing")
	}
}

// Servers written from the same documents shape definitions differently; a field the client
// cannot read leaves that field empty, never the whole document unreadable.
func TestParseObjectInfoShapes(t *testing.T) {
	t.Parallel()
	info, err := ParseObjectInfo([]byte(`{
	  "Text":  {"input": {"required": {"text": ["STRING", {"multiline": true}], "mode": [["a", "b"]], "ckpt": ["COMBO", {"options": ["x"]}]},
	                      "optional": {"n": ["INT"]}, "hidden": {"id": "UNIQUE_ID"}}, "output": ["STRING", ["a", "b"]], "output_node": false,
	            "category": "text", "python_module": "nodes", "api_node": true},
	  "Odd":   {"input": {"required": ["text"], "optional": null}, "output": "IMAGE", "output_node": "true", "category": 5},
	  "Bare":  {},
	  "Null":  null
	}`))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"Text": "{Category:text RequiredInputs:[ckpt mode text] OptionalInputs:[n] Outputs:[STRING COMBO] OutputNode:false}",
		"Odd":  "{Category: RequiredInputs:[] OptionalInputs:[] Outputs:[] OutputNode:false}",
		"Bare": "{Category: RequiredInputs:[] OptionalInputs:[] Outputs:[] OutputNode:false}",
		"Null": "{Category: RequiredInputs:[] OptionalInputs:[] Outputs:[] OutputNode:false}",
	}
	for name, w := range want {
		if got := fmt.Sprintf("%+v", info.Classes[name]); got != w {
			t.Errorf("%s = %s, want %s", name, got, w)
		}
	}
	// %+v prints nil as []: a nil list would reach Terraform as null, and length() would fail.
	for name, c := range info.Classes {
		if c.RequiredInputs == nil || c.OptionalInputs == nil || c.Outputs == nil {
			t.Errorf("%s has a nil list: %#v", name, c)
		}
	}
	for _, bad := range []string{`[]`, `"x"`, `{"A": 1`} {
		if _, err := ParseObjectInfo([]byte(bad)); err == nil {
			t.Errorf("ParseObjectInfo(%s) accepted", bad)
		}
	}
}

const v1Workflow = `{
  "1": {"class_type": "EmptyImage", "inputs": {"width": 4, "height": 4, "batch_size": 2, "color": 255}},
  "2": {"class_type": "ImageNoiseSampler", "inputs": {"image": ["1", 0], "seed": 1, "steps": 2}},
  "3": {"class_type": "SaveImage", "inputs": {"images": ["2", 0], "filename_prefix": "v1"}}
}`

// runPrompt connects the socket, submits and waits, as svc_prompt does.
func runPrompt(t *testing.T, c *Client, workflow string) (*PromptResult, error) {
	t.Helper()
	sock, promptID := dialAndSubmit(t, c, "7d3f8a52-0c0e-4b9a-9d7e-3a1f7a8c2b11",
		SubmitPromptInput{Workflow: json.RawMessage(workflow), ExtraData: map[string]string{"api_key_svc_org": "partner"}})
	defer sock.Close()
	return c.WaitPrompt(context.Background(), promptID, sock, fastWait)
}

// dialAndSubmit connects a socket under clientID, then submits the prompt, in svc_prompt's
// order (the socket does not replay). The socket is closed when the test ends.
func dialAndSubmit(t *testing.T, c *Client, clientID string, in SubmitPromptInput) (sock *Socket, promptID string) {
	t.Helper()
	ctx := context.Background()
	sock, err := c.DialSocket(ctx, clientID)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sock.Close)
	sub, err := c.SubmitPrompt(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	return sock, sub.PromptID
}

func TestPromptSuccessOutputsFromSocketAndViewWithoutCredentials(t *testing.T) {
	t.Parallel()
	srv := v1Server(t, emulator.Options{})
	log := &recordingLogger{}
	c := v1Client(t, srv, log)
	res, err := runPrompt(t, c, v1Workflow)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Succeeded() || res.Status != PromptSuccess || res.SocketOutcome != SocketSuccess || !res.OutputsComplete {
		t.Fatalf("result: %+v", res)
	}
	if len(res.Outputs) != 2 || res.Outputs[0].NodeID != "3" || res.Outputs[0].Kind != "image" || res.Outputs[0].Type != "output" ||
		!strings.HasPrefix(res.Outputs[0].Filename, "v1_") {
		t.Fatalf("outputs: %+v", res.Outputs)
	}
	if res.Previews == 0 {
		t.Error("no binary preview frames decoded")
	}
	var buf bytes.Buffer
	o := res.Outputs[0]
	if _, err := c.DownloadView(context.Background(), ViewFile{Filename: o.Filename, Subfolder: o.Subfolder, Type: o.Type}, &buf, DownloadLimits{}); err != nil {
		t.Fatal(err)
	}
	want, _ := srv.ViewContent(o.Filename)
	if !bytes.Equal(buf.Bytes(), want) {
		t.Errorf("view returned %d bytes, want %d", buf.Len(), len(want))
	}
	if h := srv.LastRequestHeader(emulator.OpV1View); h.Get("X-Api-Key") != v1Key {
		t.Error("the service's own /api/view did not get X-API-Key")
	}
	hs := srv.StorageRequestHeaders()
	if len(hs) != 1 {
		t.Fatalf("storage requests: %d", len(hs))
	}
	for _, h := range []string{"X-Api-Key", "Authorization", "Cookie"} {
		if v := hs[0].Get(h); v != "" {
			t.Errorf("storage host received %s: %q", h, v)
		}
	}
	if logs := log.all(); strings.Contains(logs, v1Key) || !strings.Contains(logs, "token=REDACTED") {
		t.Errorf("logs must name the socket URL with its token redacted:\n%s", logs)
	}
}

func TestPromptExecutionErrorFromSocket(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		code, status string
	}{{"", PromptError}, {emulator.NonRetryableCode, PromptNonRetryableError}} {
		srv := v1Server(t, emulator.Options{})
		srv.FailNode("ImageNoiseSampler", tc.code, "CUDA out of memory")
		res, err := runPrompt(t, v1Client(t, srv, nil), v1Workflow)
		if err != nil {
			t.Fatal(err)
		}
		e := res.Error
		if res.Status != tc.status || res.Succeeded() || e == nil || e.ExceptionType != "RuntimeError" || e.ExceptionMessage != "CUDA out of memory" ||
			e.NodeID != "2" || e.NodeType != "ImageNoiseSampler" || !strings.Contains(e.Traceback, "Traceback") {
			t.Errorf("%s: result %+v error %+v", tc.status, res, e)
		}
	}
}

func TestPromptOlderStatusSet(t *testing.T) {
	t.Parallel()
	srv := v1Server(t, emulator.Options{V1LegacyStatuses: true})
	var seen []string
	c := v1Client(t, srv, nil)
	sub, err := c.SubmitPrompt(context.Background(), SubmitPromptInput{Workflow: json.RawMessage(v1Workflow)})
	if err != nil {
		t.Fatal(err)
	}
	opts := fastWait
	opts.OnStatus = func(s string) { seen = append(seen, s) }
	res, err := c.WaitPrompt(context.Background(), sub.PromptID, nil, opts)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != PromptCompleted || !res.Succeeded() || res.OutputsComplete {
		t.Errorf("result: %+v (statuses %v)", res, seen)
	}
}

func TestPromptStatusRouteMissingSocketDecides(t *testing.T) {
	t.Parallel()
	srv := v1Server(t, emulator.Options{V1NoStatusRoute: true})
	res, err := runPrompt(t, v1Client(t, srv, nil), v1Workflow)
	if err != nil {
		t.Fatal(err)
	}
	if !res.StatusRouteMissing || !res.StatusFromSocket || res.Status != PromptSuccess || len(res.Outputs) != 2 {
		t.Errorf("result: %+v", res)
	}
}

// runPromptDroppingSocket runs v1Workflow as runPrompt does, but drops every socket connection
// as the first node starts executing, while the sampler's steps last an hour: the run goes on
// only once the wait has reconnected the socket, or given up on it (then the emulator finishes
// the job at once). Nothing depends on how fast the machine is. It returns the result and the
// socket it dialled first (closed by then).
func runPromptDroppingSocket(t *testing.T, srv *emulator.Server) (*PromptResult, *Socket) {
	t.Helper()
	res, sock, err := runPromptDroppingSocketWith(t, srv, promptDrop{})
	if err != nil {
		t.Fatal(err)
	}
	return res, sock
}

// promptDrop tunes runPromptDroppingSocketWith.
type promptDrop struct {
	drop     func(srv *emulator.Server)              // how the socket is dropped (default: DropSockets)
	onFailed func(srv *emulator.Server, attempt int) // after each reconnection that failed and is tried again
	config   func(*Config)                           // the client's configuration
	timeout  time.Duration                           // the wait's deadline (0: none)
}

func runPromptDroppingSocketWith(t *testing.T, srv *emulator.Server, p promptDrop) (*PromptResult, *Socket, error) {
	t.Helper()
	var finish sync.Once
	finishRun := func() { finish.Do(func() { go srv.CompleteJobs() }) }
	mut := []func(*Config){func(c *Config) {
		c.APIKey = v1Key
		c.Logger = logHook(func(msg string, fields map[string]any) {
			switch {
			case strings.HasPrefix(msg, "socket reconnected"):
				finishRun()
			case strings.HasPrefix(msg, "reconnecting the socket failed") && fields["trying_again"] == false:
				finishRun()
			case strings.HasPrefix(msg, "reconnecting the socket failed") && p.onFailed != nil:
				p.onFailed(srv, fields["attempt"].(int))
			}
		})
	}}
	if p.config != nil {
		mut = append(mut, p.config)
	}
	c := testClient(t, srv.URL(), mut...)
	sock, promptID := dialAndSubmit(t, c, "3c1e0d5e-5a55-4d0c-9a8e-0f0c2b7e9d41", SubmitPromptInput{Workflow: json.RawMessage(v1Workflow)})
	opts := fastWait
	opts.RedialWait = time.Millisecond
	drop := p.drop
	if drop == nil {
		drop = (*emulator.Server).DropSockets
	}
	var dropped sync.Once
	opts.OnMessage = func(m *SocketMessage) {
		if m.Type == "executing" {
			dropped.Do(func() { drop(srv) })
		}
	}
	ctx := context.Background()
	if p.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, p.timeout)
		defer cancel()
	}
	res, err := c.WaitPrompt(ctx, promptID, sock, opts)
	return res, sock, err
}

// logHook is a client Logger that hands every line to a test.
type logHook func(msg string, fields map[string]any)

func (h logHook) Debug(_ context.Context, m string, f map[string]any) { h(m, f) }
func (h logHook) Trace(_ context.Context, m string, f map[string]any) { h(m, f) }
func (h logHook) Warn(_ context.Context, m string, f map[string]any)  { h(m, f) }

// A socket that closes mid-run is reconnected: the outputs reported after that still arrive (and,
// with no status route, so does the outcome), but the outputs are marked incomplete, since the
// socket does not replay what it sent while it was closed.
func TestPromptSocketDroppedMidRunIsRedialled(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		opts emulator.Options
	}{
		{name: "status route", opts: emulator.Options{StepDuration: time.Hour}},
		{name: "no status route: the socket decides", opts: emulator.Options{StepDuration: time.Hour, V1NoStatusRoute: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := v1Server(t, tc.opts)
			res, sock := runPromptDroppingSocket(t, srv)
			if !res.Succeeded() || res.SocketOutcome != SocketSuccess || res.Redials != 1 || res.OutputsComplete {
				t.Errorf("result: %+v", res)
			}
			if len(res.Outputs) != 2 || res.Outputs[0].NodeID != "3" {
				t.Errorf("outputs reported after the reconnection: %+v", res.Outputs)
			}
			if n := srv.Requests(emulator.OpV1Socket); n != 2 {
				t.Errorf("socket connections: %d, want 2", n)
			}
			if sock.isConnected() {
				t.Error("the dropped socket still reports connected")
			}
		})
	}
}

// When the socket is refused for good (403 to the upgrade), the wait gives up on it at once and
// the status route alone decides.
func TestPromptSocketRedialGivesUp(t *testing.T) {
	t.Parallel()
	srv := v1Server(t, emulator.Options{StepDuration: time.Hour})
	srv.Inject(emulator.Fault{Op: emulator.OpV1Socket, Nth: 2, Times: 10, Status: http.StatusForbidden})
	res, _ := runPromptDroppingSocket(t, srv)
	if res.Status != PromptSuccess || res.SocketOutcome != "" || res.OutputsComplete || len(res.Outputs) != 0 {
		t.Errorf("result: %+v", res)
	}
	if res.Redials != 1 || srv.Requests(emulator.OpV1Socket) != 2 {
		t.Errorf("redials %d, socket requests %d; want 1 attempt", res.Redials, srv.Requests(emulator.OpV1Socket))
	}
}

// A reconnection refused for now (connections refused while the service restarts, 503 to the
// upgrade) is tried again, backing off, past any fixed count, while the status route is
// polled: the wait then ends on what the socket reports (with no status route, the socket alone
// decides). Refused until the deadline, the wait ends there, having tried a few times a second
// at most.
func TestPromptSocketRedialRidesOutTransientFailures(t *testing.T) {
	t.Parallel()
	const refusals = 6
	tests := []struct {
		name         string
		opts         emulator.Options
		fault        *emulator.Fault
		drop         promptDrop
		wantRedials  [2]int // at least, at most
		wantDeadline bool
	}{
		{
			name:        "503 to the upgrade six times",
			fault:       &emulator.Fault{Op: emulator.OpV1Socket, Nth: 2, Times: refusals, Status: http.StatusServiceUnavailable},
			wantRedials: [2]int{refusals + 1, refusals + 1},
		},
		{
			name:        "503 six times, no status route: the socket decides",
			opts:        emulator.Options{V1NoStatusRoute: true},
			fault:       &emulator.Fault{Op: emulator.OpV1Socket, Nth: 2, Times: refusals, Status: http.StatusBadGateway},
			wantRedials: [2]int{refusals + 1, refusals + 1},
		},
		{
			name: "connections refused (the server restarting) six times",
			drop: promptDrop{
				drop: func(srv *emulator.Server) {
					if err := srv.StopListening(); err != nil {
						panic(err)
					}
				},
				onFailed: func(srv *emulator.Server, attempt int) {
					if attempt == refusals {
						go func() { _ = srv.ResumeListening() }()
					}
				},
			},
			// the reconnection after the sixth refusal, or a later one when the listener
			// took a moment to come back
			wantRedials: [2]int{refusals + 1, refusals + 10},
		},
		{
			name:  "503 with Retry-After 1 until the deadline",
			fault: &emulator.Fault{Op: emulator.OpV1Socket, Nth: 2, Times: 1000, Status: http.StatusServiceUnavailable, Headers: map[string]string{"Retry-After": "1"}},
			drop: promptDrop{timeout: 4 * time.Second,
				config: func(c *Config) { c.RetryWaitMin, c.RetryWaitMax = 200*time.Millisecond, time.Second }},
			// one attempt at once, then one a second as Retry-After asks: never a burst
			wantRedials: [2]int{4, 5}, wantDeadline: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			opts := tt.opts
			opts.StepDuration = time.Hour
			srv := v1Server(t, opts)
			if tt.fault != nil {
				srv.Inject(*tt.fault)
			}
			res, _, err := runPromptDroppingSocketWith(t, srv, tt.drop)
			if tt.wantDeadline {
				if !errors.Is(err, context.DeadlineExceeded) {
					t.Fatalf("wait ended with %v, want its deadline", err)
				}
			} else {
				if err != nil {
					t.Fatal(err)
				}
				if !res.Succeeded() || res.SocketOutcome != SocketSuccess || len(res.Outputs) != 2 || res.OutputsComplete {
					t.Errorf("result: %+v", res)
				}
			}
			if res.Redials < tt.wantRedials[0] || res.Redials > tt.wantRedials[1] {
				t.Errorf("%d reconnection attempts, want %d to %d", res.Redials, tt.wantRedials[0], tt.wantRedials[1])
			}
			if n := srv.Requests(emulator.OpV1Socket); tt.drop.drop == nil && n != 1+res.Redials {
				t.Errorf("%d socket requests for %d reconnection attempts", n, res.Redials)
			}
			t.Logf("%d reconnection attempts; status %s, socket %q", res.Redials, res.Status, res.SocketOutcome)
		})
	}
}

// A 404 from the status route right after submission may only mean the record is not there yet:
// polling goes on, and only a 404 that persists without a socket ends the wait.
func TestPromptStatusNotFoundWithoutSocket(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		fault     emulator.Fault
		wantErr   string
		wantReads int // status reads made, 0 = not checked
		timeout   time.Duration
	}{
		{name: "record appears after two reads", fault: emulator.Fault{Op: emulator.OpV1Status, Nth: 1, Times: 2, Status: 404}},
		{name: "route missing", fault: emulator.Fault{Op: emulator.OpV1Status, Status: 404},
			wantErr: "the status route answered 404 3 times", wantReads: promptStatusMissingReads},
		// testClient's max_retries is 3: it bounds a request outside a wait only; the wait rides
		// out transient failures until its deadline, then names the last.
		{name: "a read that succeeds within its retries is waited out", fault: emulator.Fault{Op: emulator.OpV1Status, Nth: 1, Times: 3, Status: 503}},
		{name: "reads failing beyond max_retries are ridden out", fault: emulator.Fault{Op: emulator.OpV1Status, Nth: 1, Times: 10, Status: 503}},
		{name: "reads failing until the deadline end the wait then", fault: emulator.Fault{Op: emulator.OpV1Status, Status: 503},
			wantErr: "HTTP 503", timeout: 500 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := v1Server(t, emulator.Options{})
			srv.Inject(tc.fault)
			c := v1Client(t, srv, nil)
			sub, err := c.SubmitPrompt(context.Background(), SubmitPromptInput{Workflow: json.RawMessage(v1Workflow)})
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			if tc.timeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tc.timeout)
				defer cancel()
			}
			res, err := c.WaitPrompt(ctx, sub.PromptID, nil, fastWait)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || (tc.timeout > 0 && !errors.Is(err, context.DeadlineExceeded)) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
			} else if err != nil || res.Status != PromptSuccess || res.StatusRouteMissing || res.StatusFromSocket {
				t.Fatalf("result %+v, err %v", res, err)
			}
			if n := srv.Requests(emulator.OpV1Status); tc.wantReads != 0 && n != tc.wantReads {
				t.Errorf("status reads = %d, want %d", n, tc.wantReads)
			}
		})
	}
}

func TestSubmitPromptErrorBodies(t *testing.T) {
	t.Parallel()
	t.Run("200 with error", func(t *testing.T) {
		t.Parallel()
		srv := v1Server(t, emulator.Options{})
		srv.Inject(emulator.Fault{Op: emulator.OpV1Prompt, Status: 200, Body: `{"error":"no active subscription"}`, Headers: map[string]string{"X-Svc-Request-Id": "req-1"}})
		_, err := v1Client(t, srv, nil).SubmitPrompt(context.Background(), SubmitPromptInput{Workflow: json.RawMessage(v1Workflow)})
		var rej *PromptRejectedError
		if !errors.As(err, &rej) || !strings.Contains(err.Error(), "HTTP 200: no active subscription (request id req-1)") {
			t.Fatalf("err = %v", err)
		}
	})
	// A server may carry an empty error beside the prompt id: the prompt is queued, and its id
	// must reach the caller, or a running prompt would be lost.
	for _, body := range []string{
		`{"prompt_id":"p-9","number":0,"node_errors":{},"error":""}`,
		`{"prompt_id":"p-9","error":{}}`,
		`{"prompt_id":"p-9","error":null,"extra":[1]}`,
		`{"prompt_id":"p-9","node_errors":{"4":{"errors":[{"type":"x"}]}}}`,
	} {
		t.Run("200 with prompt_id "+body, func(t *testing.T) {
			t.Parallel()
			srv := v1Server(t, emulator.Options{})
			srv.Inject(emulator.Fault{Op: emulator.OpV1Prompt, Status: 200, Body: body})
			sub, err := v1Client(t, srv, nil).SubmitPrompt(context.Background(), SubmitPromptInput{Workflow: json.RawMessage(v1Workflow)})
			if err != nil || sub.PromptID != "p-9" {
				t.Fatalf("submission = %+v, err = %v", sub, err)
			}
		})
	}
	t.Run("400 with node errors", func(t *testing.T) {
		t.Parallel()
		srv := v1Server(t, emulator.Options{})
		_, err := v1Client(t, srv, nil).SubmitPrompt(context.Background(), SubmitPromptInput{Workflow: json.RawMessage(
			`{"1":{"class_type":"SaveImage","inputs":{"filename_prefix":"x"}}}`)})
		if err == nil || !strings.Contains(err.Error(), "HTTP 400 prompt_outputs_failed_validation") ||
			!strings.Contains(err.Error(), `node "1": images: required_input_missing`) {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("lost response is never resent", func(t *testing.T) {
		t.Parallel()
		srv := v1Server(t, emulator.Options{})
		srv.Inject(emulator.Fault{Op: emulator.OpV1Prompt, Drop: true, AfterHandling: true})
		_, err := v1Client(t, srv, nil).SubmitPrompt(context.Background(), SubmitPromptInput{Workflow: json.RawMessage(v1Workflow)})
		var unknown *UnknownOutcomeError
		if !errors.As(err, &unknown) || srv.Requests(emulator.OpV1Prompt) != 1 || srv.JobCount() != 1 {
			t.Fatalf("err = %v, requests %d", err, srv.Requests(emulator.OpV1Prompt))
		}
	})
}

// The websocket library quotes the URL, token included, in its transport errors: every error and
// log line must name it redacted, raw or escaped, down the whole chain of causes. A failed dial
// tells a transient failure (refused, 5xx, no answer in time) from a final one (401, 404).
func TestSocketDialErrorHidesToken(t *testing.T) {
	t.Parallel()
	srv := v1Server(t, emulator.Options{})
	unavailable := v1Server(t, emulator.Options{})
	unavailable.Inject(emulator.Fault{Op: emulator.OpV1Socket, Status: http.StatusServiceUnavailable, Headers: map[string]string{"Retry-After": "7"}})
	missing := v1Server(t, emulator.Options{V1NoSocket: true})
	silent, _ := silentListener(t)
	const token = "wrong-key/with+chars and space"
	for _, tc := range []struct {
		name, endpoint, want string
		key                  string // the API key (default: token, which the emulators refuse)
		transient            bool
		retryAfter           time.Duration
	}{
		{name: "refused by the service", endpoint: srv.URL(), want: "HTTP 401"},
		{name: "connection refused", endpoint: "http://127.0.0.1:1", want: "token=REDACTED", transient: true},
		{name: "503 to the upgrade", endpoint: unavailable.URL(), key: v1Key, want: "HTTP 503", transient: true, retryAfter: 7 * time.Second},
		{name: "no socket route", endpoint: missing.URL(), key: v1Key, want: "HTTP 404"},
		{name: "no answer within the timeout", endpoint: silent, want: "no answer to the upgrade within 200ms", transient: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			log := &recordingLogger{}
			key := cmp.Or(tc.key, token)
			c := testClient(t, tc.endpoint, func(c *Config) { c.APIKey = key; c.Logger = log; c.Timeout = 200 * time.Millisecond })
			_, err := c.DialSocket(context.Background(), "id")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want one containing %q", err, tc.want)
			}
			if transientFailure(err) != tc.transient || retryAfterOf(err) != tc.retryAfter {
				t.Errorf("transient %v, Retry-After %v; want %v, %v: %v", transientFailure(err), retryAfterOf(err), tc.transient, tc.retryAfter, err)
			}
			for cause := err; cause != nil; cause = errors.Unwrap(cause) {
				for _, leak := range []string{"wrong-key", "with%2Bchars", "with+chars", "and+space", "and%20space"} {
					if strings.Contains(cause.Error(), leak) || strings.Contains(log.all(), leak) {
						t.Errorf("token leaked (%s): %v\n%s", leak, cause, log.all())
					}
				}
			}
		})
	}
}

func TestPromptTerminalStatuses(t *testing.T) {
	t.Parallel()
	for s, want := range map[string][2]bool{
		"success": {true, true}, "completed": {true, true}, "error": {true, false}, "non_retryable_error": {true, false},
		"lost": {true, false}, "cancelled": {true, false}, "failed": {true, false},
		"submitted": {false, false}, "executing": {false, false}, "pending": {false, false}, "in_progress": {false, false},
		"some_future_state": {false, false}, "": {false, false},
	} {
		if PromptTerminal(s) != want[0] || promptSucceeded(s) != want[1] {
			t.Errorf("%q: terminal %v succeeded %v, want %v", s, PromptTerminal(s), promptSucceeded(s), want)
		}
	}
}

// A server may answer /api/view with a relative Location on its own origin: the download follows
// it (the key may go along, it is the same host) and the file arrives whole.
func TestDownloadViewRelativeRedirect(t *testing.T) {
	t.Parallel()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/view", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("filename") != "out.png" || r.Header.Get("X-API-Key") != v1Key {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		w.Header().Set("Location", "../signed/out.png?sig=abc")
		w.WriteHeader(http.StatusFound)
	})
	mux.HandleFunc("GET /signed/out.png", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("PNGDATA")) })
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	c := testClient(t, srv.URL, func(c *Config) { c.APIKey = v1Key })
	var buf bytes.Buffer
	d, err := c.DownloadView(context.Background(), ViewFile{Filename: "out.png", Type: "output"}, &buf, DownloadLimits{})
	if err != nil || buf.String() != "PNGDATA" || d.Size != 7 {
		t.Fatalf("download = %+v, %q, err %v", d, buf.String(), err)
	}
}
