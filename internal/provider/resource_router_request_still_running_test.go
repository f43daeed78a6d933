package provider

import (
	"fmt"
	"regexp"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/svc-org/terraform-provider-svc/internal/emulator"
)

// The router's answers that say the run under the key goes on (504 deadline_exceeded with
// Retry-After, 409 concurrency_limit_exceeded) are resent with the same key until the create
// timeout, far beyond max_retries (1 here): giving up early would leave a re-apply to start a
// second, billable run under a new key.
func TestAccRouterRequest_stillRunningOutlastsMaxRetries(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		opts    emulator.Options
		fault   *emulator.Fault
		mode    string
		model   string
		minSeen int
		op      string
		input   string
	}{
		{
			// The router stops waiting after 10 ms; the run takes 1.2 s: 504s until it is done.
			// Every wait has the backoff floor (250 ms) whatever Retry-After says, so that is
			// about five attempts, and at least three (one more than max_retries 1 allows) even
			// when a loaded machine stretches each wait to 500 ms. The generous mode is pinned:
			// the strict one's Retry-After of 1 s would let the run end before the second wait.
			name: "sync 504 deadline_exceeded", mode: "sync", model: emulator.ModelSlow, op: emulator.OpInvokeModel, minSeen: 3,
			input: `{ note = "takes a while" }`,
			opts: emulator.Options{Mode: emulator.ModeGenerous,
				Router: emulator.RouterOptions{SlowDuration: 1200 * time.Millisecond, SyncDeadline: 10 * time.Millisecond}},
		},
		{
			// The submission is accepted, but the next three answers say the original call still runs.
			name: "queued 409 concurrency_limit_exceeded", mode: "queued", model: emulator.ModelEcho, op: emulator.OpSubmitRequest, minSeen: 4,
			input: `{ prompt = "hello" }`,
			fault: &emulator.Fault{Op: emulator.OpSubmitRequest, Nth: 1, Times: 3, AfterHandling: true, Status: 409,
				Headers: map[string]string{"X-Svc-Error-Type": "concurrency_limit_exceeded", "Retry-After": "0"},
				Body:    `{"detail":"the original call for this key still runs"}`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := newTestServer(t, tt.opts)
			if tt.fault != nil {
				srv.Inject(*tt.fault)
			}
			resource.Test(t, resource.TestCase{
				ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
				Steps: []resource.TestStep{{
					Config: routerRequestConfig(srv, 1, fmt.Sprintf(`
  model = %q
  mode  = %q
  input = jsonencode(%s)
`, tt.model, tt.mode, tt.input)),
					Check: resource.ComposeAggregateTestCheckFunc(
						resource.TestCheckResourceAttr(routerRes, "status", "COMPLETED"),
						checkRuns(srv, tt.model, 1),
						func(s *terraform.State) error {
							seen := srv.RouterKeysSeen(tt.op)
							if len(seen) < tt.minSeen {
								return fmt.Errorf("%d attempts, want at least %d (beyond max_retries 1)", len(seen), tt.minSeen)
							}
							return checkKeysSeen(srv, tt.op, len(seen))(s)
						},
					),
				}},
			})
		})
	}
}

// When the create timeout ends the wait on a run that goes on, the error names the key and
// says how to collect; applying again with that key collects the same run.
func TestAccRouterRequest_stillRunningAtTheTimeoutNamesTheKey(t *testing.T) {
	t.Parallel()
	srv := newTestServer(t, emulator.Options{Router: emulator.RouterOptions{SlowDuration: 2 * time.Second, SyncDeadline: 10 * time.Millisecond}})
	body := `
  model           = "demo/slow"
  mode            = "sync"
  input           = jsonencode({ note = "takes a while" })
  idempotency_key = "still-running-key"
`
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: routerRequestConfig(srv, 1, body+`  timeouts = { create = "300ms" }
`),
				ExpectError: regexp.MustCompile(`(?s)still\s+running.*Idempotency-Key: still-running-key.*HTTP\s+504\s+deadline_exceeded.*` +
					`set\s+idempotency_key\s+=\s+"still-running-key".*apply\s+again`),
			},
			{
				Config: routerRequestConfig(srv, 1, body),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr(routerRes, "status", "COMPLETED"),
					resource.TestCheckResourceAttr(routerRes, "result", "slow model done\n"),
					checkRuns(srv, emulator.ModelSlow, 1),
				),
			},
		},
	})
}
