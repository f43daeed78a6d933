package client

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// What the client repeats of a hostile response is bounded: a 1 MiB request id, a 1 MiB error
// type, a 60 KiB message and thousands of node errors make an error of a few KiB, marked
// truncated, never megabytes of terminal output.
func TestEchoedResponseIsBounded(t *testing.T) {
	t.Parallel()
	huge := strings.Repeat("r", 1<<20)
	nodeErrors := map[string][]NodeError{}
	for i := range 1000 { // fits the 64 KiB the client reads of an error body, so it is decoded
		nodeErrors[fmt.Sprint(i)] = []NodeError{{Field: "seed", Reason: strings.Repeat("z", 20)}}
	}
	envelope, _ := json.Marshal(map[string]any{"error": map[string]any{
		"code": "invalid_workflow", "message": strings.Repeat("m", 8<<10), "details": map[string]any{"node_errors": nodeErrors},
	}})
	v1NodeErrors := map[string]any{}
	for i := range 2000 {
		v1NodeErrors[fmt.Sprint(i)] = map[string]any{"class_type": "KSampler", "errors": []any{map[string]any{"type": "required_input_missing", "message": strings.Repeat("q", 300)}}}
	}
	v1Body, _ := json.Marshal(map[string]any{"error": map[string]any{"type": "prompt_outputs_failed_validation", "message": strings.Repeat("m", 1<<20)}, "node_errors": v1NodeErrors})
	tests := []struct {
		name   string
		status int
		header map[string]string
		body   string
		prompt bool // submit a v1 prompt instead of a v2 job
		// resent: the answer is transient, so the submission is resent until its deadline
		// (kept short); every other answer ends it at once, however slow the machine
		resent bool
	}{
		{name: "v1 prompt rejection", status: http.StatusBadRequest, header: map[string]string{"X-Svc-Request-Id": huge}, body: string(v1Body), prompt: true},
		{"request id on a v2 error", http.StatusBadRequest, map[string]string{"X-Svc-Request-Id": huge}, `{"error":{"code":"bad","message":"no"}}`, false, false},
		{"error type on a router error", http.StatusBadRequest, map[string]string{"X-Svc-Request-Id": huge, "X-Svc-Error-Type": huge}, `{"detail":"no"}`, false, false},
		{"huge envelope", http.StatusUnprocessableEntity, map[string]string{"X-Svc-Request-Id": huge}, string(envelope), false, false},
		{"html page", http.StatusBadGateway, map[string]string{"X-Svc-Request-Id": huge}, "<html>" + strings.Repeat("bad gateway ", 10000) + "</html>", false, true},
		{"come back later until the deadline", http.StatusTooManyRequests, map[string]string{"X-Svc-Request-Id": huge, "X-Svc-Error-Type": huge, "Retry-After": "3600"}, `{"error":{"code":"queue_full","message":"full"}}`, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(status(tt.status, tt.header, tt.body))
			defer srv.Close()
			c := testClient(t, srv.URL, func(c *Config) { c.MaxRetries = 0; c.MaxRetriesSet = true })
			var err error
			if tt.prompt {
				_, err = c.SubmitPrompt(context.Background(), SubmitPromptInput{Workflow: json.RawMessage(`{}`)})
			} else {
				// A submission is resent until answered or the context ends (a 5xx's answer may be lost).
				timeout := 10 * time.Second
				if tt.resent {
					timeout = 2 * time.Second
				}
				ctx, cancel := context.WithTimeout(context.Background(), timeout)
				defer cancel()
				_, err = c.SubmitJob(ctx, SubmitJobInput{Workflow: json.RawMessage(`{}`), IdempotencyKey: "k"})
			}
			if err == nil {
				t.Fatal("no error")
			}
			msg := err.Error()
			t.Logf("the error is %d bytes", len(msg))
			if len(msg) > 8<<10 {
				t.Fatalf("the error is %d bytes long; it begins %.300q", len(msg), msg)
			}
			if !strings.Contains(msg, "truncated") && !strings.Contains(msg, "…") {
				t.Errorf("the error does not say it was cut: %.500q", msg)
			}
		})
	}
}

// A download that fails after its answer came (too long, cut short, stalled) names the request
// id capped as every other error does, not the megabyte a hostile server sent.
func TestDownloadErrorEchoIsBounded(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("X-Svc-Request-Id", strings.Repeat("r", 1<<20))
		_, _ = w.Write(make([]byte, 64))
	}))
	defer srv.Close()
	var sink strings.Builder
	_, err := testClient(t, srv.URL).DownloadTo(context.Background(), srv.URL+"/f", &sink, DownloadLimits{MaxBytes: 8})
	if err == nil {
		t.Fatal("a body over MaxBytes was accepted")
	}
	if msg := err.Error(); len(msg) > 8<<10 || !strings.Contains(msg, "truncated") {
		t.Fatalf("the error is %d bytes and does not say the request id was cut: %.300q", len(msg), msg)
	}
}

// Cutting an echo never splits a character: a long request id of two-byte characters is cut
// before the character the limit falls in, and so is a long body excerpt.
func TestEchoCutsOnCharacterBoundaries(t *testing.T) {
	t.Parallel()
	long := "a" + strings.Repeat("é", 1000) // the limits fall inside an "é"
	tests := []struct {
		name, got, wantPrefix string
	}{
		{"capped header", capEcho(long, maxEchoedHeader), "a" + strings.Repeat("é", (maxEchoedHeader-1)/2) + "…(truncated, 2001 bytes in all)"},
		{"body excerpt", excerpt([]byte(long)), "a" + strings.Repeat("é", 99) + "…"},
		{"short text unchanged", cutOnRune("é", 2), "é"},
		{"limit inside the first character", cutOnRune("é", 1), ""},
	}
	for _, tt := range tests {
		if tt.got != tt.wantPrefix {
			t.Errorf("%s: got %q, want %q", tt.name, tt.got, tt.wantPrefix)
		}
	}
}
