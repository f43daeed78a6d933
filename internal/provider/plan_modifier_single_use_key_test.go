package provider

import (
	"fmt"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/svc-org/terraform-provider-svc/internal/emulator"
)

// A workflow change that replaces a job whose configured idempotency_key stays the same is
// refused at plan time, saying what to do, with nothing sent; changing the key, or removing it,
// lets the replacement go.
func TestAccJob_replacementReusingKeyRefusedAtPlan(t *testing.T) {
	t.Parallel()
	srv := newTestServer(t, emulator.Options{})
	var firstID string
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: jobConfig(srv, samplerWorkflowHCL(1), `idempotency_key = "render-1"`),
				Check:  resource.ComposeAggregateTestCheckFunc(captureID(&firstID), submissions(srv, emulator.OpSubmitJob, 1)),
			},
			{
				// Only the formatting differs: no replacement, nothing refused.
				Config: jobConfig(srv, `jsonencode(jsondecode(`+samplerWorkflowHCL(1)+`))`, `idempotency_key = "render-1"`),
				Check:  submissions(srv, emulator.OpSubmitJob, 1),
			},
			{
				Config: jobConfig(srv, samplerWorkflowHCL(2), `idempotency_key = "render-1"`),
				ExpectError: regexp.MustCompile(`(?s)` + wrapped(`Replacing this job would reuse its idempotency_key.*`+
					`The workflow changed, so svc_job must be replaced: the job in state \([0-9a-f-]{36}\) would be destroyed and `+
					`the new workflow submitted with idempotency_key "render-1". The service accepts a key only once.*`+
					`give idempotency_key a new value.*remove idempotency_key.*Nothing was sent.`)),
			},
			{
				Config: jobConfig(srv, samplerWorkflowHCL(2), `idempotency_key = "render-2"`),
				Check: resource.ComposeAggregateTestCheckFunc(
					submissions(srv, emulator.OpSubmitJob, 2),
					resource.TestCheckResourceAttr("svc_job.test", "status", "succeeded"),
				),
			},
			{
				Config: jobConfig(srv, samplerWorkflowHCL(3), ``),
				Check: resource.ComposeAggregateTestCheckFunc(
					submissions(srv, emulator.OpSubmitJob, 3),
					resource.TestCheckResourceAttr("svc_job.test", "status", "succeeded"),
					func(s *terraform.State) error {
						if key := s.RootModule().Resources["svc_job.test"].Primary.Attributes["idempotency_key"]; key == "render-2" || key == "" {
							return fmt.Errorf("the replacing job's key is %q, want a new one", key)
						}
						return nil
					},
				),
			},
		},
	})
}
