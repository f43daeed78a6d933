package provider

import (
	"fmt"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/svc-org/terraform-provider-svc/internal/emulator"
)

// Turning wait_for_completion on while the job in state still runs plans an in-place update
// that waits for the same job: outputs are planned unknown, nothing is submitted again.
func TestAccJob_waitTurnedOnWaitsForTheSameJob(t *testing.T) {
	t.Parallel()
	srv := newTestServer(t, emulator.Options{StepDuration: time.Hour}) // runs until completeWhenWaitedFor
	workflow := samplerWorkflowHCL(30)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: jobConfig(srv, workflow, `wait_for_completion = false`),
				Check:  resource.TestCheckResourceAttr("svc_job.test", "outputs.#", "0"),
			},
			{
				PreConfig: completeWhenWaitedFor(t, srv, emulator.OpGetJob, emulator.OpJobEvents),
				Config:    jobConfig(srv, workflow, `wait_for_completion = true`),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("svc_job.test", plancheck.ResourceActionUpdate),
					plancheck.ExpectUnknownValue("svc_job.test", tfjsonpath.New("outputs")),
					plancheck.ExpectUnknownValue("svc_job.test", tfjsonpath.New("status")),
				}},
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr("svc_job.test", "status", "succeeded"),
					resource.TestCheckResourceAttr("svc_job.test", "outputs.#", "1"),
					submissions(srv, emulator.OpSubmitJob, 1),
				),
			},
		},
	})
}

// The same for a queued model request: the apply waits for the same request and collects its
// result; the model ran once.
func TestAccRouterRequest_waitTurnedOnWaitsForTheSameRequest(t *testing.T) {
	t.Parallel()
	srv := newTestServer(t, emulator.Options{Router: emulator.RouterOptions{SlowDuration: time.Hour}})
	config := func(wait bool) string {
		return routerRequestConfig(srv, 2, fmt.Sprintf(`
  model               = "demo/slow"
  input               = jsonencode({ prompt = "x" })
  wait_for_completion = %v
`, wait))
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: config(false), Check: resource.TestCheckNoResourceAttr(routerRes, "result_sha256")},
			{
				PreConfig: completeWhenWaitedFor(t, srv, emulator.OpRequestStatus, emulator.OpCollectRequest),
				Config:    config(true),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(routerRes, plancheck.ResourceActionUpdate),
					plancheck.ExpectUnknownValue(routerRes, tfjsonpath.New("result_sha256")),
				}},
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr(routerRes, "status", "COMPLETED"),
					resource.TestCheckResourceAttrSet(routerRes, "result_sha256"),
					checkRuns(srv, emulator.ModelSlow, 1),
					submissions(srv, emulator.OpSubmitRequest, 1),
				),
			},
		},
	})
}

// The same for a v1 prompt, which has no idempotency key: it is followed by its id, never
// submitted again.
func TestAccPrompt_waitTurnedOnWaitsForTheSamePrompt(t *testing.T) {
	t.Parallel()
	srv := newTestServer(t, emulator.Options{Token: v1AccKey, StepDuration: time.Hour})
	workflow := samplerWorkflowHCL(30)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: promptConfig(srv, workflow, `wait_for_completion = false`)},
			{
				PreConfig: completeWhenWaitedFor(t, srv, emulator.OpV1Status, emulator.OpV1Socket),
				Config:    promptConfig(srv, workflow, `wait_for_completion = true`),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("svc_prompt.test", plancheck.ResourceActionUpdate),
					plancheck.ExpectUnknownValue("svc_prompt.test", tfjsonpath.New("status")),
				}},
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr("svc_prompt.test", "status", "success"),
					submissions(srv, emulator.OpV1Prompt, 1),
				),
			},
		},
	})
}

// Importing a job that still runs plans the same in-place wait: its outputs are unknown until
// the job ends, so nothing that uses them goes on with a partial list.
func TestAccJob_importOfARunningJobPlansTheWait(t *testing.T) {
	t.Parallel()
	srv := newTestServer(t, emulator.Options{StepDuration: 50 * time.Millisecond})
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: jobConfig(srv, slowWorkflowHCL, `wait_for_completion = false`)},
			{
				Config:             jobConfig(srv, slowWorkflowHCL, ""),
				ResourceName:       "svc_job.test",
				ImportState:        true,
				ImportStateKind:    resource.ImportBlockWithID,
				ExpectNonEmptyPlan: true,
				ImportPlanChecks: resource.ImportPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("svc_job.test", plancheck.ResourceActionUpdate),
					plancheck.ExpectUnknownValue("svc_job.test", tfjsonpath.New("outputs")),
					plancheck.ExpectUnknownValue("svc_job.test", tfjsonpath.New("status")),
				}},
			},
		},
		CheckDestroy: submissions(srv, emulator.OpSubmitJob, 1),
	})
}

// completeWhenWaitedFor is a step's PreConfig that lets every running job, prompt and model
// request of srv finish once the step has sent two more requests of ops than before it: the
// plan's refresh reads the run first (and sees it running, however slow the machine is), and the
// apply's wait is the second. The runs of these tests last an hour otherwise, so the plan checks
// never race the service's clock.
func completeWhenWaitedFor(t *testing.T, srv *emulator.Server, ops ...string) func() {
	count := func() int {
		n := 0
		for _, op := range ops {
			n += srv.Requests(op)
		}
		return n
	}
	return func() {
		base := count()
		done := make(chan struct{})
		t.Cleanup(func() { <-done })
		go func() {
			defer close(done)
			deadline := time.Now().Add(2 * time.Minute)
			for count() < base+2 && time.Now().Before(deadline) {
				time.Sleep(5 * time.Millisecond)
			}
			srv.CompleteJobs()
		}()
	}
}
