package provider

import (
	"net/http"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/svc-org/terraform-provider-svc/internal/emulator"
)

// A 429 or 503 with Retry-After is the service declining the prompt for now: it is resent, and
// when it is still the last answer the error says nothing runs. A 503 without Retry-After may
// have queued the prompt: it is not resent and is reported as an unknown outcome.
func TestAccPrompt_submissionDeclinedOrUnknown(t *testing.T) {
	t.Parallel()
	retryAfter := func(v string) map[string]string {
		return map[string]string{"Retry-After": v, "X-Svc-Request-Id": "req-busy"}
	}
	tests := []struct {
		name     string
		fault    emulator.Fault
		wantErr  string // empty: the apply succeeds
		requests int
	}{
		{name: "503 with Retry-After, then accepted", fault: emulator.Fault{Nth: 1, Status: http.StatusServiceUnavailable, Headers: retryAfter("0")},
			requests: 2},
		{name: "429 with Retry-After until max_retries", fault: emulator.Fault{Status: http.StatusTooManyRequests, Headers: retryAfter("0")},
			wantErr: `(?s)did not take the prompt; nothing runs.*HTTP 429.*req-busy`, requests: 3},
		{name: "503 with a Retry-After above the cap", fault: emulator.Fault{Status: http.StatusServiceUnavailable, Headers: retryAfter("3600")},
			wantErr: `(?s)did not take the prompt; nothing runs.*HTTP 503.*req-busy.*stopped\s+retrying`, requests: 1},
		{name: "503 without Retry-After", fault: emulator.Fault{Status: http.StatusServiceUnavailable},
			wantErr: `(?s)may\s+or\s+may\s+not\s+be\s+running.*HTTP 503`, requests: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := newTestServer(t, emulator.Options{Token: v1AccKey})
			tc.fault.Op = emulator.OpV1Prompt
			srv.Inject(tc.fault)
			step := resource.TestStep{Config: promptConfig(srv, samplerWorkflowHCL(1), "wait_for_completion = false")}
			if tc.wantErr != "" {
				step.ExpectError = regexp.MustCompile(tc.wantErr)
			} else {
				step.Check = resource.TestCheckResourceAttrSet("svc_prompt.test", "id")
			}
			resource.Test(t, resource.TestCase{ProtoV6ProviderFactories: testAccProtoV6ProviderFactories, Steps: []resource.TestStep{step}})
			if got := srv.Requests(emulator.OpV1Prompt); got != tc.requests {
				t.Errorf("submissions = %d, want %d", got, tc.requests)
			}
		})
	}
}
