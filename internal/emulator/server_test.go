package emulator

import (
	"net/http"
	"testing"
	"time"
)

// Options.Latency holds every request before the server sees it: an answer, an outage's 503 and
// a submission alike take at least that long.
func TestLatencyHoldsEveryRequest(t *testing.T) {
	t.Parallel()
	const latency = 40 * time.Millisecond
	tests := []struct {
		name         string
		latency      time.Duration
		outage       bool
		method, path string
		body         any
		wantStatus   int
	}{
		{name: "a read", latency: latency, method: "GET", path: "/api/v2/jobs/00000000-0000-0000-0000-000000000000", wantStatus: http.StatusNotFound},
		{name: "a submission", latency: latency, method: "POST", path: "/api/v2/jobs", body: map[string]any{"workflow": textWorkflow("x")}, wantStatus: http.StatusCreated},
		{name: "an outage's answer", latency: latency, outage: true, method: "GET", path: "/api/v2/jobs/00000000-0000-0000-0000-000000000000", wantStatus: http.StatusServiceUnavailable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, Options{Latency: tt.latency})
			if tt.outage {
				h.s.Outage(time.Now(), time.Hour, 1)
			}
			start := time.Now()
			resp, body := h.do(tt.method, tt.path, tt.body, nil)
			took := time.Since(start)
			if resp.StatusCode != tt.wantStatus {
				t.Fatalf("%d: %s; want %d", resp.StatusCode, body, tt.wantStatus)
			}
			if took < tt.latency {
				t.Errorf("answered in %v; want at least %v", took, tt.latency)
			}
		})
	}
}
