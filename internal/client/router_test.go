package client

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/svc-org/terraform-provider-svc/internal/emulator"
)

func routerServer(t *testing.T, opts emulator.Options) (*emulator.Server, *Client) {
	t.Helper()
	srv := emulator.New(opts)
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(func() { hs.Close(); srv.Close() })
	return srv, testClient(t, hs.URL)
}

func TestListModelsWalksEveryPage(t *testing.T) {
	srv, c := routerServer(t, emulator.Options{Router: emulator.RouterOptions{FillerModels: 45, ShortPage: 2}})
	models, err := c.ListModels(context.Background(), 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(models) != 49 {
		t.Fatalf("got %d models, want 49", len(models))
	}
	seen := map[string]bool{}
	for _, m := range models {
		if seen[m.ID] {
			t.Fatalf("model %s listed twice", m.ID)
		}
		seen[m.ID] = true
		if v := m.Billing.ChargesOnPolicyRejection; v != "yes" && v != "no" && v != "unknown" {
			t.Fatalf("%s: charges_on_policy_rejection %q not normalised", m.ID, v)
		}
	}
	if got := seen[emulator.ModelFreeform]; !got {
		t.Fatal("demo/freeform missing")
	}
	// 49 entries at 10 a page with page 2 holding 5: 10+5+10+10+10+4 = 6 pages.
	if n := srv.Requests(emulator.OpListModels); n != 6 {
		t.Fatalf("%d page requests, want 6", n)
	}
}

func TestListModelsInvalidCursorIsAnError(t *testing.T) {
	srv, c := routerServer(t, emulator.Options{})
	srv.Inject(emulator.Fault{Op: emulator.OpListModels, Nth: 1, Status: 200,
		Body: `{"data":[{"id":"demo/echo","provider":"demo","model":"echo","billing":{"charges_on_policy_rejection":"no"}}],"has_more":true,"next_cursor":"not a cursor","limit":1}`})
	_, err := c.ListModels(context.Background(), 1)
	if statusOf(err) != 400 || !HasCode(err, "invalid_input") {
		t.Fatalf("want HTTP 400 invalid_input, got %v", err)
	}
	if n := srv.Requests(emulator.OpListModels); n != 2 {
		t.Fatalf("%d page requests, want 2 (no restart)", n)
	}
}

func TestInvokeDeadlineThenReplaySameKey(t *testing.T) {
	srv, c := routerServer(t, emulator.Options{Router: emulator.RouterOptions{SlowDuration: 150 * time.Millisecond, SyncDeadline: 60 * time.Millisecond}})
	res, err := c.InvokeModel(context.Background(), InvokeInput{Model: emulator.ModelSlow, Input: json.RawMessage(`{}`), IdempotencyKey: "key-1"})
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if !strings.Contains(string(body), "slow model done") || !res.Replayed {
		t.Fatalf("body %q replayed %v", body, res.Replayed)
	}
	if n := srv.RouterRuns(emulator.ModelSlow); n != 1 {
		t.Fatalf("%d runs, want 1", n)
	}
	for _, k := range srv.RouterKeysSeen(emulator.OpInvokeModel) {
		if k != "key-1" {
			t.Fatalf("a retry carried key %q", k)
		}
	}
}

func TestRouterInvokeRetryTable(t *testing.T) {
	ok := status(200, map[string]string{"Content-Type": "application/json", "X-Svc-Request-Id": "r-ok"}, `{"ok":true}`)
	typed := func(code int, typ, retryAfter string) http.HandlerFunc {
		h := map[string]string{"X-Svc-Error-Type": typ, "X-Svc-Request-Id": "r-" + typ}
		if retryAfter != "" {
			h["Retry-After"] = retryAfter
		}
		return status(code, h, `{"detail":"x"}`)
	}
	tests := []struct {
		name     string
		first    http.HandlerFunc
		requests int
		wantErr  string
		unknown  bool
	}{
		{"409 concurrency_limit_exceeded", typed(409, "concurrency_limit_exceeded", "0"), 2, "", false},
		{"409 invalid_input", typed(409, "invalid_input", ""), 1, "HTTP 409 invalid_input", false},
		{"409 unknown type acts as internal_error", typed(409, "brand_new_type", ""), 1, "HTTP 409 brand_new_type", false},
		{"429 rate_limited", typed(429, "rate_limited", "0"), 2, "", false},
		{"429 concurrency_limit_exceeded", typed(429, "concurrency_limit_exceeded", "0"), 2, "", false},
		{"504 deadline_exceeded", typed(504, "deadline_exceeded", "0"), 2, "", false},
		{"500", typed(500, "internal_error", ""), 2, "", false},
		{"HTML 502", status(502, map[string]string{"Content-Type": "text/html", "X-Svc-Request-Id": "r-html"}, "<html><h1>502 Bad Gateway</h1></html>"), 2, "", false},
		{"no response", dropConnection, 2, "", false},
		{"422", status(422, map[string]string{"X-Svc-Error-Type": "invalid_input", "X-Svc-Request-Id": "r-422"},
			`{"detail":[{"loc":["body","steps"],"msg":"too big","type":"less_than_equal","ctx":{"le":50},"input":99}]}`), 1, "steps: too big (less_than_equal", false},
		{"400", typed(400, "invalid_input", ""), 1, "HTTP 400 invalid_input", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, c := scriptedClient(t, []http.HandlerFunc{tt.first, ok})
			res, err := c.InvokeModel(context.Background(), InvokeInput{Model: "demo/echo", Input: json.RawMessage(`{"prompt":"x"}`), IdempotencyKey: "k1"})
			if tt.wantErr == "" && err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("error %v, want %q", err, tt.wantErr)
			}
			if res != nil {
				res.Body.Close()
			}
			s.assertAttempts(t, tt.requests, "k1")
		})
	}
}

func TestRouterInvokeExhaustedIsUnknownOutcome(t *testing.T) {
	s, c := scriptedClient(t, []http.HandlerFunc{status(502, map[string]string{"X-Svc-Request-Id": "r-html"}, "<html><body><h1>502 Bad Gateway</h1></body></html>")})
	_, err := c.InvokeModel(context.Background(), InvokeInput{Model: "demo/echo", Input: json.RawMessage(`{}`), IdempotencyKey: "k1"})
	var unknown *UnknownOutcomeError
	if !errors.As(err, &unknown) || unknown.IdempotencyKey != "k1" {
		t.Fatalf("want UnknownOutcomeError with the key, got %v", err)
	}
	for _, want := range []string{"HTTP 502", "request id r-html", "502 Bad Gateway"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	if s.count() != 4 {
		t.Fatalf("%d attempts, want 4 (max_retries 3)", s.count())
	}
}

func TestModelSchemaRevalidatesAndValidates(t *testing.T) {
	srv, c := routerServer(t, emulator.Options{})
	first, err := c.GetModelSchema(context.Background(), emulator.ModelEcho)
	if err != nil {
		t.Fatal(err)
	}
	second, err := c.GetModelSchema(context.Background(), emulator.ModelEcho)
	if err != nil {
		t.Fatal(err)
	}
	if !second.Revalidated || second.ETag != first.ETag || srv.RouterSchemaNotModified() != 1 {
		t.Fatalf("second read: revalidated=%v etag %q vs %q, 304s=%d", second.Revalidated, second.ETag, first.ETag, srv.RouterSchemaNotModified())
	}
	if !first.InputSchemaAuthored || len(first.OutputMediaTypes) != 1 || first.OutputMediaTypes[0] != "application/json" {
		t.Fatalf("schema facts: %+v", first)
	}
	got, err := second.ValidateInput([]byte(`{"steps": 99, "extra": true}`))
	if err != nil {
		t.Fatal(err)
	}
	var text []string
	for _, v := range got {
		text = append(text, v.Path+": "+v.Message)
	}
	joined := strings.Join(text, "\n")
	for _, want := range []string{"prompt", "steps", "extra"} {
		if !strings.Contains(joined, want) {
			t.Errorf("violations %q do not name %s", joined, want)
		}
	}
	if ok, _ := second.ValidateInput([]byte(`{"prompt":"hi","steps":3}`)); len(ok) != 0 {
		t.Fatalf("valid input rejected: %v", ok)
	}
	free, err := c.GetModelSchema(context.Background(), emulator.ModelFreeform)
	if err != nil {
		t.Fatal(err)
	}
	if free.InputSchemaAuthored {
		t.Fatal("freeform schema reported as authored")
	}
}

func TestValidateModelID(t *testing.T) {
	for id, ok := range map[string]bool{
		"demo/echo": true, "black-forest-labs/flux-1.1-pro": true, "Demo/echo": false, "demo": false,
		"demo/echo/x": false, "demo/": false, "/echo": false, "demo/ec ho": false,
		strings.Repeat("a", 65) + "/m": false, "p/" + strings.Repeat("m", 129): false,
	} {
		if err := ValidateModelID(id); (err == nil) != ok {
			t.Errorf("ValidateModelID(%q) = %v, want ok=%v", id, err, ok)
		}
	}
}

func TestQueuedSubmitWaitCollectCancel(t *testing.T) {
	srv, c := routerServer(t, emulator.Options{Router: emulator.RouterOptions{SlowDuration: time.Minute}})
	ctx := context.Background()
	q, err := c.SubmitModelRequest(ctx, InvokeInput{Model: emulator.ModelPixel, Input: json.RawMessage(`{"size":4}`), IdempotencyKey: "k-pixel"})
	if err != nil {
		t.Fatal(err)
	}
	again, err := c.SubmitModelRequest(ctx, InvokeInput{Model: emulator.ModelPixel, Input: json.RawMessage(`{"size":4}`), IdempotencyKey: "k-pixel"})
	if err != nil || !again.Replayed || again.RequestID != q.RequestID {
		t.Fatalf("replay: %+v, %v", again, err)
	}
	final, res, err := c.AwaitModelResult(ctx, q, RouterWaitOptions{PollMin: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if final.Status != RouterCompleted || res.ContentType != "image/png" || !strings.HasPrefix(string(body), "\x89PNG") {
		t.Fatalf("final %+v content type %q", final, res.ContentType)
	}

	slow, err := c.SubmitModelRequest(ctx, InvokeInput{Model: emulator.ModelSlow, Input: json.RawMessage(`{}`), IdempotencyKey: "k-slow"})
	if err != nil {
		t.Fatal(err)
	}
	out, err := c.CancelModelRequest(ctx, slow)
	if err != nil || out.Status != "CANCELLATION_REQUESTED" || out.HTTPCode != 202 {
		t.Fatalf("cancel: %+v %v", out, err)
	}
	if !srv.WaitRouterRequest(slow.RequestID, 5*time.Second) {
		t.Fatal("cancelled run did not complete")
	}
	out, err = c.CancelModelRequest(ctx, slow)
	if err != nil || out.Status != "ALREADY_COMPLETED" || out.HTTPCode != 409 {
		t.Fatalf("second cancel: %+v %v", out, err)
	}
	st, err := c.ModelRequestStatus(ctx, slow)
	if err != nil || !st.Failed() || st.ErrorType != "cancelled" {
		t.Fatalf("status after cancel: %+v %v", st, err)
	}
}

func TestRouterAuthAndConcurrencyLimit(t *testing.T) {
	srv, c := routerServer(t, emulator.Options{Token: "k-secret", Router: emulator.RouterOptions{ConcurrencyLimit: 1, SlowDuration: time.Minute}})
	ctx := context.Background()
	if h := srv.LastRequestHeader(emulator.OpListModels); h != nil {
		t.Fatal("no request yet")
	}
	if _, err := c.listModelsPage(ctx, "", 0); err != nil {
		t.Fatalf("X-API-Key refused: %v", err)
	}
	if got := srv.LastRequestHeader(emulator.OpListModels).Get("X-API-Key"); got != "k-secret" {
		t.Fatalf("X-API-Key = %q", got)
	}
	if _, err := c.SubmitModelRequest(ctx, InvokeInput{Model: emulator.ModelSlow, Input: json.RawMessage(`{}`), IdempotencyKey: "a"}); err != nil {
		t.Fatal(err)
	}
	_, err := c.SubmitModelRequest(ctx, InvokeInput{Model: emulator.ModelSlow, Input: json.RawMessage(`{"n":2}`), IdempotencyKey: "b"})
	var apiErr *APIError
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 429 || apiErr.Code != "concurrency_limit_exceeded" {
		t.Fatalf("want 429 concurrency_limit_exceeded, got %v", err)
	}
	if apiErr.Header.Get("X-Committed-Spend-Remaining") == "" {
		t.Fatal("429 without spend headers")
	}
	if n := srv.Requests(emulator.OpSubmitRequest); n != 5 {
		t.Fatalf("%d submissions, want 1 + 4 (the 429 retried max_retries times)", n)
	}
	bad := testClient(t, c.routerEndpoint.String(), func(cfg *Config) { cfg.APIKey = "wrong" })
	if _, err := bad.listModelsPage(ctx, "", 0); statusOf(err) != 401 {
		t.Fatalf("wrong key: %v", err)
	}
}

// The router fixes the cancel outcomes but not the cancel body's fields: a server may answer with another body, or none, and the outcome must still be read.
func TestCancelModelRequestReadsTheOutcomeWhateverTheBody(t *testing.T) {
	for _, tc := range []struct {
		name, contentType, body string
		status                  int
		want                    string
	}{
		{"assumed body", "application/json", `{"request_id":"r","status":"CANCELLATION_REQUESTED"}`, 202, RouterCancelRequested},
		{"empty 202", "", "", 202, RouterCancelRequested},
		{"other field names", "application/json", `{"id":"r","state":"CANCELLATION_REQUESTED","extra":1}`, 202, RouterCancelRequested},
		{"plain text 409", "text/plain", "already completed", 409, RouterCancelAlreadyDone},
		{"empty 409", "", "", 409, RouterCancelAlreadyDone},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Method != http.MethodPut {
					t.Errorf("method %s, want PUT", r.Method)
				}
				if tc.contentType != "" {
					w.Header().Set("Content-Type", tc.contentType)
				}
				w.WriteHeader(tc.status)
				_, _ = io.WriteString(w, tc.body)
			}))
			defer hs.Close()
			out, err := testClient(t, hs.URL).CancelModelRequest(context.Background(), &QueueRequest{RequestID: "r1", CancelURL: hs.URL + "/c"})
			if err != nil {
				t.Fatal(err)
			}
			if out.Status != tc.want || out.HTTPCode != tc.status {
				t.Fatalf("got %+v, want status %s and HTTP %d", out, tc.want, tc.status)
			}
		})
	}
}

// A router may send the queue links only on submission, answer
// a collect with 202 and no body or Retry-After, and return plain text: the wait goes on with
// the links already held.
func TestAwaitModelResultWithSparseStatusAnswers(t *testing.T) {
	const id = "0b0c8f2e-0000-4000-8000-0000000000b2"
	var statusReads, collects int
	mux := http.NewServeMux()
	var base string
	mux.HandleFunc("POST /v2/models/acme/m/requests", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		_, _ = io.WriteString(w, `{"request_id":"`+id+`","status":"IN_QUEUE","status_url":"`+base+`/q/`+id+`/status",`+
			`"response_url":"`+base+`/q/`+id+`","cancel_url":"`+base+`/q/`+id+`/cancel","unknown_field":true}`)
	})
	mux.HandleFunc("GET /q/"+id+"/status", func(w http.ResponseWriter, _ *http.Request) {
		statusReads++
		status := "IN_PROGRESS"
		if statusReads > 1 {
			status = RouterCompleted
		}
		_, _ = io.WriteString(w, `{"request_id":"`+id+`","status":"`+status+`"}`)
	})
	mux.HandleFunc("GET /q/"+id, func(w http.ResponseWriter, _ *http.Request) {
		collects++
		if collects == 1 {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		w.Header().Set("Content-Type", "text/plain")
		_, _ = io.WriteString(w, "done")
	})
	hs := httptest.NewServer(mux)
	defer hs.Close()
	base = hs.URL
	c := testClient(t, hs.URL, func(cfg *Config) { cfg.RouterEndpoint = hs.URL })

	ctx := context.Background()
	q, err := c.SubmitModelRequest(ctx, InvokeInput{Model: "acme/m", Input: json.RawMessage(`{}`), IdempotencyKey: "k"})
	if err != nil {
		t.Fatal(err)
	}
	final, res, err := c.AwaitModelResult(ctx, q, RouterWaitOptions{PollMin: time.Millisecond, PollMax: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if string(body) != "done" || statusReads != 2 || collects != 2 {
		t.Fatalf("body %q after %d status reads and %d collects", body, statusReads, collects)
	}
	if final.CancelURL != q.CancelURL || final.ResponseURL != q.ResponseURL {
		t.Fatalf("links lost: %+v", final)
	}
}

// The router names the x-svc-input-schema-authored flag but not where it sits; a document
// without it is unauthored, so the router, not the provider, decides.
func TestParseModelSchemaAuthoredFlag(t *testing.T) {
	op := func(flag string) string {
		return `{"/v2/models/acme/m":{"post":{` + flag + `"requestBody":{"content":{"application/json":{"schema":{"type":"object"}}}}}}}`
	}
	for _, tc := range []struct {
		name, doc string
		want      bool
	}{
		{"root", `{"x-svc-input-schema-authored":true,"paths":` + op("") + `}`, true},
		{"info", `{"info":{"title":"m","x-svc-input-schema-authored":true},"paths":` + op("") + `}`, true},
		{"operation", `{"paths":` + op(`"x-svc-input-schema-authored":true,`) + `}`, true},
		{"root false wins over operation", `{"x-svc-input-schema-authored":false,"paths":` + op(`"x-svc-input-schema-authored":true,`) + `}`, false},
		{"absent", `{"info":{"title":"m"},"paths":` + op("") + `}`, false},
		{"authored without a request body", `{"x-svc-input-schema-authored":true,"paths":{}}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ms, err := parseModelSchema("acme/m", json.RawMessage(tc.doc))
			if err != nil {
				t.Fatal(err)
			}
			if ms.InputSchemaAuthored != tc.want {
				t.Fatalf("InputSchemaAuthored = %v, want %v", ms.InputSchemaAuthored, tc.want)
			}
		})
	}
}
