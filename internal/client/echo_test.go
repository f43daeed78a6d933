package client

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// What the client repeats of a hostile response is bounded: a 1 MiB request id, a 1 MiB error
// type, a 60 KiB message and thousands of node errors make an error of a few KiB, marked
// truncated, never megabytes of terminal output.
func TestEchoedResponseIsBounded(t *testing.T) {
	t.Parallel()
	huge := strings.Repeat("r", 1<<20)
	nodeErrors := map[string][]NodeError{}
	for i := range 5000 {
		nodeErrors[fmt.Sprint(i)] = []NodeError{{Field: "seed", Reason: strings.Repeat("z", 500)}}
	}
	envelope, _ := json.Marshal(map[string]any{"error": map[string]any{
		"code": "invalid_workflow", "message": strings.Repeat("m", 60<<10), "details": map[string]any{"node_errors": nodeErrors},
	}})
	tests := []struct {
		name   string
		status int
		header map[string]string
		body   string
	}{
		{"request id on a v2 error", http.StatusBadRequest, map[string]string{"X-Svc-Request-Id": huge}, `{"error":{"code":"bad","message":"no"}}`},
		{"error type on a router error", http.StatusBadRequest, map[string]string{"X-Svc-Request-Id": huge, "X-Svc-Error-Type": huge}, `{"detail":"no"}`},
		{"huge envelope", http.StatusUnprocessableEntity, map[string]string{"X-Svc-Request-Id": huge}, string(envelope)},
		{"html page", http.StatusBadGateway, map[string]string{"X-Svc-Request-Id": huge}, "<html>" + strings.Repeat("bad gateway ", 10000) + "</html>"},
		{"come back later until the deadline", http.StatusTooManyRequests, map[string]string{"X-Svc-Request-Id": huge, "X-Svc-Error-Type": huge, "Retry-After": "3600"}, `{"error":{"code":"queue_full","message":"full"}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(status(tt.status, tt.header, tt.body))
			defer srv.Close()
			_, err := testClient(t, srv.URL, func(c *Config) { c.MaxRetries = 0; c.MaxRetriesSet = true }).
				SubmitJob(context.Background(), SubmitJobInput{Workflow: json.RawMessage(`{}`), IdempotencyKey: "k"})
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
