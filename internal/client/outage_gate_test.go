package client

import (
	"net/http"
	"testing"
	"time"
)

// What the gate makes of a run of answers: only failures that say the service is down close it
// (a 429 is the service answering), and while the service is down the probes come between outageProbeMin and
// outageProbeMax apart unless the service names its own Retry-After.
func TestOutageGateTakesTheServiceForDownOnOutagesOnly(t *testing.T) {
	t.Parallel()
	const minWait, maxWait = DefaultRetryWaitMin, DefaultRetryWaitMax
	answer := func(code int, retryAfter string) *http.Response {
		resp := &http.Response{StatusCode: code, Header: http.Header{}}
		if retryAfter != "" {
			resp.Header.Set("Retry-After", retryAfter)
		}
		return resp
	}
	tests := []struct {
		name     string
		answers  []*http.Response
		wantDown bool
		// the wait before the next probe while the service is down
		wantProbe [2]time.Duration
	}{
		{name: "three 503 close it", answers: []*http.Response{answer(503, ""), answer(503, ""), answer(503, "")},
			wantDown: true, wantProbe: [2]time.Duration{outageProbeMin, outageProbeMax}},
		{name: "three 503 with Retry-After 7: the probe waits 7 s", answers: []*http.Response{answer(503, "7"), answer(503, "7"), answer(503, "7")},
			wantDown: true, wantProbe: [2]time.Duration{7 * time.Second, 7 * time.Second}},
		{name: "an answer between failures keeps it open", answers: []*http.Response{answer(503, ""), answer(502, ""), answer(200, ""), answer(504, "")}},
		{name: "429s are answers: the service is up", answers: []*http.Response{answer(429, ""), answer(429, "0"), answer(429, "30"), answer(429, "")}},
		{name: "404s are answers", answers: []*http.Response{answer(404, ""), answer(404, ""), answer(404, "")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			g := newOutageGate(minWait, maxWait)
			for _, resp := range tt.answers {
				ticket, err := awaitRelease(t.Context(), g.admit)
				if err != nil {
					t.Fatal(err)
				}
				outcome, wait := responseOutcome(resp, nil)
				g.record(ticket, outcome, wait)
			}
			wait, _, ticket := g.admit()
			if closed := wait > 0; closed != tt.wantDown {
				t.Fatalf("service down %v (hold %v, probe %v); want %v", closed, wait, ticket.probe, tt.wantDown)
			}
			if tt.wantDown && (wait < tt.wantProbe[0]-time.Second || wait > tt.wantProbe[1]) {
				t.Errorf("next probe in %v; want %v to %v", wait, tt.wantProbe[0], tt.wantProbe[1])
			}
		})
	}
}
