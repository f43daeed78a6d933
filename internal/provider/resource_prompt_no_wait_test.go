package provider

import (
	"net/http"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/svc-org/terraform-provider-svc/internal/emulator"
)

// With wait_for_completion = false the status is read once after submitting, so the next refresh
// shows no change. A status route that answers 404 leaves it empty; one that fails otherwise is a
// warning (the prompt id is in state), and the next refresh fills it in.
func TestAccPrompt_noWaitReadsStatusOnce(t *testing.T) {
	t.Parallel()
	// The prompt stays queued for the whole test, so its status does not move between reads.
	opts := emulator.Options{Token: v1AccKey, QueueDelay: time.Hour}
	tests := []struct {
		name         string
		fault        *emulator.Fault
		afterApply   resource.TestCheckFunc
		afterRefresh resource.TestCheckFunc
		applyReads   int // status reads made by the apply itself
	}{
		{name: "status set after apply",
			afterApply:   resource.TestCheckResourceAttr("svc_prompt.test", "status", "queued_waiting"),
			afterRefresh: resource.TestCheckResourceAttr("svc_prompt.test", "status", "queued_waiting"), applyReads: 1},
		{name: "404 from the status route leaves status empty", fault: &emulator.Fault{Op: emulator.OpV1Status, Status: http.StatusNotFound},
			afterApply:   resource.TestCheckNoResourceAttr("svc_prompt.test", "status"),
			afterRefresh: resource.TestCheckNoResourceAttr("svc_prompt.test", "status"), applyReads: 1},
		// max_retries = 2 in providerConfig: three 503s end the apply's read; the refresh's succeeds.
		{name: "a failed status read is a warning; the refresh fills status in",
			fault:        &emulator.Fault{Op: emulator.OpV1Status, Nth: 1, Times: 3, Status: http.StatusServiceUnavailable},
			afterApply:   resource.TestCheckNoResourceAttr("svc_prompt.test", "status"),
			afterRefresh: resource.TestCheckResourceAttr("svc_prompt.test", "status", "queued_waiting"), applyReads: 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := newTestServer(t, opts)
			if tc.fault != nil {
				srv.Inject(*tc.fault)
			}
			reads := 0
			resource.Test(t, resource.TestCase{
				ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
				Steps: []resource.TestStep{
					{
						Config: promptConfig(srv, samplerWorkflowHCL(1), "wait_for_completion = false"),
						Check: resource.ComposeAggregateTestCheckFunc(
							resource.TestCheckResourceAttrSet("svc_prompt.test", "id"),
							tc.afterApply,
							func(*terraform.State) error { reads = srv.Requests(emulator.OpV1Status); return nil },
						),
						ConfigPlanChecks: resource.ConfigPlanChecks{PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
					},
					{
						// A refresh: status is as the apply left it, or, after a failed read, now known.
						RefreshState: true,
						Check:        tc.afterRefresh,
					},
				},
			})
			if reads != tc.applyReads {
				t.Errorf("status reads during apply = %d, want %d", reads, tc.applyReads)
			}
		})
	}
}
