package provider

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/config"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	"lukechampine.com/blake3"

	"github.com/svc-org/terraform-provider-svc/internal/client"
	"github.com/svc-org/terraform-provider-svc/internal/emulator"
)

func jobConfig(srv *emulator.Server, workflow, extra string) string {
	return providerConfig(srv, "") + fmt.Sprintf(`
resource "svc_job" "test" {
  workflow = %s
  %s
}
`, workflow, extra)
}

// captureID stores the job id from state into *id.
func captureID(id *string) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		rs, ok := s.RootModule().Resources["svc_job.test"]
		if !ok {
			return fmt.Errorf("svc_job.test not in state")
		}
		*id = rs.Primary.ID
		return nil
	}
}

// checkOutputHashes downloads every output by its asset id (state holds no URL: the asset record
// gives a fresh one) and checks its blake3 against the server's own hash of the asset, and
// against the state's hash, which a server computing hashes lazily (the strict mode) leaves null.
func checkOutputHashes(srv *emulator.Server, name string, want int) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		attrs := s.RootModule().Resources[name].Primary.Attributes
		if attrs["outputs.#"] != fmt.Sprint(want) {
			return fmt.Errorf("outputs.# = %s, want %d", attrs["outputs.#"], want)
		}
		c, err := client.New(client.Config{Endpoint: srv.URL()})
		if err != nil {
			return err
		}
		for i := 0; i < want; i++ {
			if _, held := attrs[fmt.Sprintf("outputs.%d.url", i)]; held {
				return fmt.Errorf("output %d: state holds a signed URL", i)
			}
			asset, err := c.GetAsset(context.Background(), attrs[fmt.Sprintf("outputs.%d.id", i)])
			if err != nil {
				return err
			}
			hash := attrs[fmt.Sprintf("outputs.%d.hash", i)]
			resp, err := http.Get(asset.URL)
			if err != nil {
				return err
			}
			body, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil {
				return err
			}
			sum := blake3.Sum256(body)
			got := fmt.Sprintf("blake3:%x", sum)
			if want := srv.AssetHash(asset.ID); got != want {
				return fmt.Errorf("output %d: bytes hash to %s, the server's hash of the asset is %s", i, got, want)
			}
			if hash == "" && os.Getenv(testServerModeEnv) != string(emulator.ModeStrict) {
				return fmt.Errorf("output %d: state has no hash, though the server gives them at once", i)
			}
			if hash != "" && got != hash {
				return fmt.Errorf("output %d: bytes hash to %s, state says %s", i, got, hash)
			}
			if !strings.HasPrefix(string(body), "\x89PNG") {
				return fmt.Errorf("output %d is not a PNG", i)
			}
		}
		return nil
	}
}

func TestAccJob_successWithOutputs(t *testing.T) {
	t.Parallel()
	srv := newTestServer(t, emulator.Options{})
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: jobConfig(srv, imageWorkflowHCL(2), "") + `
data "svc_job" "read" { id = svc_job.test.id }
`,
			Check: resource.ComposeAggregateTestCheckFunc(
				resource.TestCheckResourceAttr("svc_job.test", "status", "succeeded"),
				resource.TestMatchResourceAttr("svc_job.test", "id", regexp.MustCompile(`^[0-9a-f-]{36}$`)),
				resource.TestMatchResourceAttr("svc_job.test", "idempotency_key", regexp.MustCompile(`^[0-9a-f-]{36}$`)),
				resource.TestCheckResourceAttr("svc_job.test", "outputs.0.node_id", "3"),
				resource.TestCheckResourceAttr("svc_job.test", "outputs.0.type", "image"),
				resource.TestCheckResourceAttr("svc_job.test", "outputs.0.content_type", "image/png"),
				// State keeps what lasts, its times to the second; the run's timing is the data source's.
				resource.TestMatchResourceAttr("svc_job.test", "completed_at", regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$`)),
				resource.TestMatchResourceAttr("svc_job.test", "expires_at", regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$`)),
				resource.TestCheckNoResourceAttr("svc_job.test", "metrics.execution_ms"),
				resource.TestCheckNoResourceAttr("svc_job.test", "started_at"),
				resource.TestCheckResourceAttrSet("data.svc_job.read", "metrics.execution_ms"),
				resource.TestCheckResourceAttrSet("data.svc_job.read", "started_at"),
				resource.TestCheckResourceAttrPair("data.svc_job.read", "completed_at", "svc_job.test", "completed_at"),
				resource.TestCheckNoResourceAttr("data.svc_job.read", "progress.value"),
				resource.TestCheckNoResourceAttr("data.svc_job.read", "urls.self"),
				checkOutputHashes(srv, "svc_job.test", 2),
				resource.TestCheckResourceAttrPair("data.svc_job.read", "outputs.1.hash", "svc_job.test", "outputs.1.hash"),
				resource.TestCheckResourceAttrSet("data.svc_job.read", "outputs.1.url"), // the data source keeps its read's URLs
				func(*terraform.State) error {
					if n := srv.JobCount(); n != 1 {
						return fmt.Errorf("server has %d jobs, want 1", n)
					}
					return nil
				},
			),
		}},
	})
}

// A 422 invalid_workflow names each rejected node with its class, taken from the submitted workflow.
func TestAccJob_validationErrorNamesNodes(t *testing.T) {
	t.Parallel()
	srv := newTestServer(t, emulator.Options{})
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: jobConfig(srv, `jsonencode({
    "1" = { class_type = "EmptyImage", inputs = { width = 8, height = 8, batch_size = 1, color = 0 } }
    "2" = { class_type = "ImageInvert", inputs = {} }
    "3" = { class_type = "SaveImage", inputs = { images = ["2", 0], filename_prefix = "x" } }
  })`, "validate = false # let the service judge it"),
			ExpectError: regexp.MustCompile(`(?s)HTTP 422 invalid_workflow.*node "2" \(ImageInvert\): image: required_input_missing`), // the class comes from the submitted workflow
		}},
		CheckDestroy: func(*terraform.State) error {
			if n := srv.JobCount(); n != 0 {
				return fmt.Errorf("server has %d jobs, want none", n)
			}
			return nil
		},
	})
}

func TestAccJob_planTimeWorkflowChecks(t *testing.T) {
	t.Parallel()
	srv := newTestServer(t, emulator.Options{})
	tests := []struct {
		name     string
		workflow string
		want     string
	}{
		{name: "UI format", workflow: `jsonencode({ last_node_id = 3, nodes = [{ id = 1, type = "EmptyImage" }], links = [] })`, want: `UI-format workflow export`},
		{name: "not an object", workflow: `jsonencode(["EmptyImage"])`, want: `must be a JSON object`},
		{name: "invalid JSON", workflow: `"{\n  \"1\": {\n    \"class_type\": x\n  }\n}"`, want: `invalid JSON at line 3, column 19`},
		{name: "node without class_type", workflow: `jsonencode({ "1" = { inputs = {} } })`, want: `node "1" has no class_type`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resource.Test(t, resource.TestCase{
				ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
				Steps: []resource.TestStep{{
					Config:      jobConfig(srv, tt.workflow, ""),
					PlanOnly:    true,
					ExpectError: regexp.MustCompile(tt.want),
				}},
			})
		})
	}
	if n := srv.Requests(emulator.OpSubmitJob); n != 0 {
		t.Fatalf("%d submissions reached the server; plan-time errors must send nothing", n)
	}
}

func TestAccJob_queueFullThenSuccess(t *testing.T) {
	t.Parallel()
	srv := newTestServer(t, emulator.Options{})
	srv.Inject(emulator.Fault{Op: emulator.OpSubmitJob, Nth: 1, Times: 2, Status: 429,
		Headers: map[string]string{"Retry-After": "0"}, Body: `{"error":{"code":"queue_full","message":"queue is full"}}`})
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: jobConfig(srv, imageWorkflowHCL(1), ""),
			Check: resource.ComposeAggregateTestCheckFunc(
				resource.TestCheckResourceAttr("svc_job.test", "status", "succeeded"),
				func(s *terraform.State) error {
					key := s.RootModule().Resources["svc_job.test"].Primary.Attributes["idempotency_key"]
					if got := srv.LastRequestHeader(emulator.OpSubmitJob).Get("Idempotency-Key"); got != key {
						return fmt.Errorf("last attempt carried key %q, state holds %q", got, key)
					}
					if n := srv.Requests(emulator.OpSubmitJob); n != 3 {
						return fmt.Errorf("%d submit attempts, want 3 (two 429s, then success)", n)
					}
					if n := srv.JobCount(); n != 1 {
						return fmt.Errorf("server has %d jobs, want 1", n)
					}
					return nil
				},
			),
		}},
	})
}

// The job is created, then the answer is lost: a 500, a reset connection, or no answer before
// the timeout and its grace. The provider resends only under the same key (exactly one job exists) and says
// what to do.
func TestAccJob_unknownOutcomes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		fault emulator.Fault
		extra string
		cause string
		// submissions the server sees: the first, and a resend under the same key
		submissions int
	}{
		// A lost answer is resent under the same key; the service refuses the resend as a reuse.
		{name: "500 after create", fault: emulator.Fault{Status: 500, Body: `{"error":{"code":"upstream_error","message":"upstream timed out"}}`}, cause: `idempotency_key_reuse`, submissions: 2},
		{name: "connection reset after create", fault: emulator.Fault{Drop: true}, cause: `idempotency_key_reuse`, submissions: 2},
		// No answer before the timeout and the answer's grace after it (submitGrace).
		{name: "timeout after create", fault: emulator.Fault{Delay: time.Second + submitGrace + 500*time.Millisecond, Status: 201}, extra: `timeouts = { create = "1s" }`, cause: `deadline\s+exceeded`, submissions: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := newTestServer(t, emulator.Options{})
			f := tt.fault
			f.Op, f.Nth, f.AfterHandling = emulator.OpSubmitJob, 1, true
			srv.Inject(f)
			resource.Test(t, resource.TestCase{
				ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
				Steps: []resource.TestStep{{
					Config: jobConfig(srv, imageWorkflowHCL(1), `idempotency_key = "6a0b7c1e-0000-4000-8000-000000000001"
  `+tt.extra),
					ExpectError: regexp.MustCompile(`(?s)a\s+job\s+may\s+exist.*Idempotency-Key: 6a0b7c1e-0000-4000-8000-000000000001.*(` + tt.cause + `).*terraform\s+import`),
				}},
			})
			if n, m := srv.JobCount(), srv.Requests(emulator.OpSubmitJob); n != 1 || m != tt.submissions {
				t.Fatalf("server has %d jobs after %d submissions; want 1 job after %d", n, m, tt.submissions)
			}
		})
	}
}

// A submission on the wire when the create timeout ends is given the answer's grace: its job's
// id, answered then, reaches state (the wait, out of time, fails), and the next apply after
// untaint follows that job rather than submit again.
func TestAccJob_answerWithinTheGraceAfterTheTimeoutKeepsTheJob(t *testing.T) {
	t.Parallel()
	srv := newTestServer(t, emulator.Options{})
	srv.Inject(emulator.Fault{Op: emulator.OpSubmitJob, Nth: 1, Delay: 1500 * time.Millisecond})
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: jobConfig(srv, imageWorkflowHCL(1), `timeouts = { create = "1s" }`),
			// Not "Job submission unanswered": the job is named, and its wait is what ran out.
			ExpectError: regexp.MustCompile(`(?s)Job did not finish.*while\s+job\s+[0-9a-f-]{36}\s+was\s+queued.*its\s+id\s+is\s+saved\s+in\s+state`),
		}},
	})
	if n, m := srv.JobCount(), srv.Requests(emulator.OpSubmitJob); n != 1 || m != 1 {
		t.Fatalf("server has %d jobs after %d submissions; want 1 job after 1", n, m)
	}
}

func TestAccJob_failedNodeTaints(t *testing.T) {
	t.Parallel()
	srv := newTestServer(t, emulator.Options{})
	srv.FailNode("ImageInvert", "node_execution_error", "CUDA out of memory")
	var firstID string
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config:      jobConfig(srv, imageWorkflowHCL(1), ""),
				ExpectError: regexp.MustCompile(`(?s)Job [0-9a-f-]{36} failed.*Node "2" \(ImageInvert\) raised node_execution_error: CUDA out of memory.*Traceback`),
			},
			{
				// The failed job's id was kept (tainted): the next plan replaces it.
				PreConfig: func() {
					ids := srv.JobIDs()
					if len(ids) == 1 {
						firstID = ids[0]
					}
					srv.ClearNodeFailures()
				},
				Config: jobConfig(srv, imageWorkflowHCL(1), ""),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("svc_job.test", plancheck.ResourceActionReplace),
				}},
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr("svc_job.test", "status", "succeeded"),
					func(s *terraform.State) error {
						if firstID == "" || s.RootModule().Resources["svc_job.test"].Primary.ID == firstID {
							return fmt.Errorf("want a new job replacing the failed one %q", firstID)
						}
						return nil
					},
				),
			},
		},
	})
}

func TestAccJob_cancelOnDestroy(t *testing.T) {
	t.Parallel()
	srv := newTestServer(t, emulator.Options{StepDuration: 20 * time.Millisecond})
	var id string
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: jobConfig(srv, slowWorkflowHCL, "wait_for_completion = false"),
			Check: resource.ComposeAggregateTestCheckFunc(
				captureID(&id),
				resource.TestCheckResourceAttrWith("svc_job.test", "status", func(v string) error {
					if v != "queued" && v != "running" {
						return fmt.Errorf("status %q, want queued or running", v)
					}
					return nil
				}),
			),
		}},
		CheckDestroy: func(*terraform.State) error {
			if st, _ := srv.JobStatus(id); st != "canceled" {
				return fmt.Errorf("job %s is %q after destroy, want canceled", id, st)
			}
			return nil
		},
	})
}

// Expiry is decided from expires_at, without a request: past it, a finished job is kept as state
// holds it (an expired job is not drift), whatever the service would now answer (the job
// expired, purged with 404 or 410), and rerun_on_expiry removes it so that the apply runs it
// again. The refresh and the plan send nothing to the service.
func TestAccJob_expiry(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		extra       string
		purge       bool
		gone        bool // the service would answer 410 Gone for the purged job, not 404
		wantReplace bool
	}{
		{name: "expired status keeps state", extra: ""},
		{name: "404 after expires_at keeps state", extra: "", purge: true},
		{name: "410 after expires_at keeps state", extra: "", purge: true, gone: true},
		{name: "rerun_on_expiry runs it again", extra: "rerun_on_expiry = true", wantReplace: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			// The server and the provider share a clock that the test moves past expires_at.
			clk := &testClock{}
			srv := newTestServer(t, emulator.Options{Now: clk.Now})
			var id string
			var expiresAt time.Time
			var requestsBefore, jobReadsBefore int
			expire := func() {
				clk.AdvancePast(expiresAt)
				if tt.purge {
					srv.PurgeJob(id)
					if tt.gone { // reads through the self link and by id would both answer 410
						srv.Inject(emulator.Fault{Op: emulator.OpGetJob, Status: http.StatusGone, Body: `{"error":{"code":"gone","message":"job retention ended"}}`})
					}
				}
				requestsBefore, jobReadsBefore = srv.TotalRequests(), srv.Requests(emulator.OpGetJob)
			}
			second := resource.TestStep{PreConfig: expire, Config: jobConfig(srv, imageWorkflowHCL(1), tt.extra)}
			if tt.wantReplace {
				second.ConfigPlanChecks.PreApply = []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("svc_job.test", plancheck.ResourceActionCreate),
					// The job is not read; the plan of its replacement checks the workflow (object_info).
					expectNoRequestSince{srv, &jobReadsBefore, emulator.OpGetJob},
				}
				second.Check = func(s *terraform.State) error {
					if s.RootModule().Resources["svc_job.test"].Primary.ID == id {
						return fmt.Errorf("the expired job %s was not replaced", id)
					}
					return nil
				}
			} else {
				second.ConfigPlanChecks.PreApply = []plancheck.PlanCheck{plancheck.ExpectEmptyPlan(), expectNoRequestSince{srv, &requestsBefore, ""}}
				second.Check = resource.ComposeAggregateTestCheckFunc(
					func(*terraform.State) error {
						if n := srv.TotalRequests() - requestsBefore; n != 0 {
							return fmt.Errorf("the refresh and apply after expiry sent %d requests about job %s; want none", n, id)
						}
						return nil
					},
					resource.TestCheckResourceAttrPtr("svc_job.test", "id", &id),
					resource.TestCheckResourceAttr("svc_job.test", "status", "succeeded"),
					resource.TestCheckResourceAttr("svc_job.test", "outputs.#", "1"),
				)
			}
			resource.Test(t, resource.TestCase{
				ProtoV6ProviderFactories: clk.factories(),
				Steps: []resource.TestStep{
					{Config: jobConfig(srv, imageWorkflowHCL(1), tt.extra), Check: resource.ComposeAggregateTestCheckFunc(
						captureID(&id),
						resource.TestCheckResourceAttrWith("svc_job.test", "expires_at", func(v string) (err error) {
							expiresAt, err = time.Parse(time.RFC3339Nano, v)
							return err
						}),
					)},
					second,
				},
			})
		})
	}
}

// expectNoRequestSince is a plan check that fails when the server received any request since
// *before was counted (requests for op only, when op is set).
type expectNoRequestSince struct {
	srv    *emulator.Server
	before *int
	op     string
}

func (e expectNoRequestSince) CheckPlan(_ context.Context, _ plancheck.CheckPlanRequest, resp *plancheck.CheckPlanResponse) {
	if n := e.count() - *e.before; n != 0 {
		resp.Error = fmt.Errorf("the refresh and plan sent %d requests (%s); want none", n, cmp.Or(e.op, "any route"))
	}
}

func (e expectNoRequestSince) count() int {
	if e.op != "" {
		return e.srv.Requests(e.op)
	}
	return e.srv.TotalRequests()
}

func TestAccJob_importByID(t *testing.T) {
	t.Parallel()
	srv := newTestServer(t, emulator.Options{})
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: jobConfig(srv, imageWorkflowHCL(1), "")},
			{
				ResourceName:      "svc_job.test",
				ImportState:       true,
				ImportStateVerify: true,
				// Neither is in the job record: the workflow comes from configuration and the
				// key was only ever sent as a header.
				ImportStateVerifyIgnore: []string{"workflow", "idempotency_key"},
			},
			{
				ResourceName: "svc_job.test", ImportState: true, ImportStateId: "../../etc",
				ExpectError: regexp.MustCompile(`Import svc_job by job id \(a UUID\)`),
			},
		},
	})
}

func TestAccJob_importBlockAdoptsWorkflowInPlace(t *testing.T) {
	t.Parallel()
	srv := newTestServer(t, emulator.Options{})
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: jobConfig(srv, imageWorkflowHCL(1), "")},
			{
				// The job record does not carry the workflow, so the import plan adopts the
				// configured one: an in-place update that sends nothing, never a replacement
				// that would run the job again.
				Config:             jobConfig(srv, imageWorkflowHCL(1), ""),
				ResourceName:       "svc_job.test",
				ImportState:        true,
				ImportStateKind:    resource.ImportBlockWithID,
				ExpectNonEmptyPlan: true,
				ImportPlanChecks: resource.ImportPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("svc_job.test", plancheck.ResourceActionUpdate),
				}},
			},
		},
		CheckDestroy: func(*terraform.State) error {
			if n := srv.Requests(emulator.OpSubmitJob); n != 1 {
				return fmt.Errorf("%d submissions, want 1", n)
			}
			return nil
		},
	})
}

func TestAccJob_mountPrefixAndLinks(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		absolute bool
	}{
		{name: "host-relative links", absolute: false},
		{name: "absolute links", absolute: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := newTestServer(t, emulator.Options{MountPrefix: "/deployment/dep-1", AbsoluteLinks: tt.absolute, LogsLink: true})
			resource.Test(t, resource.TestCase{
				ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
				Steps: []resource.TestStep{{
					Config: jobConfig(srv, imageWorkflowHCL(1), "") + `
data "svc_job" "read" { id = svc_job.test.id }
`,
					Check: resource.ComposeAggregateTestCheckFunc(
						resource.TestCheckResourceAttr("svc_job.test", "status", "succeeded"),
						// An ended job's record keeps only its logs link.
						resource.TestCheckNoResourceAttr("data.svc_job.read", "urls.self"),
						resource.TestMatchResourceAttr("data.svc_job.read", "urls.logs", regexp.MustCompile(`^http://127\.0\.0\.1:\d+/deployment/dep-1/`)),
						checkOutputHashes(srv, "svc_job.test", 1),
					),
				}},
			})
		})
	}
}

// A service that builds absolute links from a public base URL ("localhost" while the endpoint
// names 127.0.0.1) names its own paths on another spelling of its host. The links are followed on
// the origin the user configured, so the job is waited for (events included), refreshed and
// canceled there, and the credentials never leave that origin.
func TestAccJob_linksOnAnotherHostAreRebased(t *testing.T) {
	t.Parallel()
	srv := newTestServer(t, emulator.Options{AbsoluteLinks: true, LinkHost: "localhost", MountPrefix: "/deployment/dep-2", StepDuration: 20 * time.Millisecond})
	var id string
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: jobConfig(srv, imageWorkflowHCL(1), ""),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr("svc_job.test", "status", "succeeded"),
					checkOutputHashes(srv, "svc_job.test", 1),
					func(*terraform.State) error {
						if srv.Requests(emulator.OpJobEvents) == 0 {
							return errors.New("the events link was not followed")
						}
						return nil
					},
				),
			},
			{Config: jobConfig(srv, imageWorkflowHCL(1), ""), PlanOnly: true},
			// A job still running: its record's links, rebased.
			{Config: jobConfig(srv, slowWorkflowHCL, "wait_for_completion = false") + `
data "svc_job" "read" { id = svc_job.test.id }
`, Check: resource.ComposeAggregateTestCheckFunc(captureID(&id),
				resource.TestMatchResourceAttr("data.svc_job.read", "urls.self", regexp.MustCompile(`^http://127\.0\.0\.1:\d+/deployment/dep-2/api/v2/jobs/[0-9a-f-]{36}$`)),
				resource.TestMatchResourceAttr("data.svc_job.read", "urls.cancel", regexp.MustCompile(`^http://127\.0\.0\.1:\d+/deployment/dep-2/api/v2/jobs/[0-9a-f-]{36}/cancel$`)),
			)},
		},
		CheckDestroy: func(*terraform.State) error {
			if st, _ := srv.JobStatus(id); st != "canceled" {
				return fmt.Errorf("job %s is %q after destroy, want canceled through the rebased cancel link", id, st)
			}
			return nil
		},
	})
}

func TestAccJob_htmlErrorBody(t *testing.T) {
	t.Parallel()
	srv := newTestServer(t, emulator.Options{})
	srv.Inject(emulator.Fault{Op: emulator.OpSubmitJob, Nth: 1, Status: 403, ContentType: "text/html",
		Headers: map[string]string{"X-Svc-Request-Id": "req-html-403"},
		Body:    "<html><head><title>403 Forbidden</title></head><body><h1>Forbidden</h1><p>edge proxy</p></body></html>"})
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config:      jobConfig(srv, imageWorkflowHCL(1), ""),
			ExpectError: regexp.MustCompile(`(?s)HTTP 403: Forbidden \(request id req-html-403\).*403 Forbidden Forbidden edge proxy`),
		}},
	})
}

func TestAccJob_noCredentialsInStateOrLogs(t *testing.T) {
	requireCLIFeature(t, featureWriteOnly, featureEphemeralVariables)
	// Not parallel: it sets the process-wide log environment.
	const apiKey, partnerKey = "svc-api-key-0123456789", "partner-key-9876543210"
	logPath := traceLogFile(t)
	// Secrets come the way users should pass them: the api key from the environment, the
	// partner key through an ephemeral variable into a write-only attribute.
	t.Setenv("SVC_API_KEY", apiKey)
	// A job of about 1.5 s, so that progress is seen (and logged) while it runs: on a server
	// whose progress moves, hence the generous mode pinned.
	srv := newTestServer(t, emulator.Options{Mode: emulator.ModeGenerous, Token: apiKey, StepDuration: 100 * time.Millisecond})
	var id, stateJSON string
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			ConfigVariables: config.Variables{"partner_key": config.StringVariable(partnerKey)},
			Config: providerConfig(srv, "") + fmt.Sprintf(`
variable "partner_key" {
  type      = string
  sensitive = true
  ephemeral = true
}

resource "svc_job" "test" {
  workflow           = %s
  partner_api_key_wo = var.partner_key
}
`, samplerWorkflowHCL(15)),
			Check: resource.ComposeAggregateTestCheckFunc(
				captureID(&id),
				resource.TestCheckNoResourceAttr("svc_job.test", "partner_api_key_wo"),
				captureStateJSON(&stateJSON),
			),
		}},
	})
	// The secrets were really used...
	if got := srv.LastRequestHeader(emulator.OpSubmitJob).Get("Authorization"); got != "Bearer "+apiKey {
		t.Fatalf("the server did not receive the api key (Authorization %q)", got)
	}
	if got := srv.JobExtraData(id)["api_key_svc_org"]; got != partnerKey {
		t.Fatalf("the partner key did not reach the job's extra_data (got %v)", got)
	}
	// ...and appear nowhere else.
	logs, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(logs), "job submitted") {
		t.Fatalf("the trace log does not hold the provider's lines; the check below would prove nothing")
	}
	// Progress is logged with the node, its class and the sampler step while the job runs.
	if !regexp.MustCompile(`job running:.*class=ImageNoiseSampler`).Match(logs) ||
		!regexp.MustCompile(`job running:.*step=\d+/15`).Match(logs) {
		t.Errorf("the log has no progress line naming the class and step")
	}
	assertSecretsAbsent(t, stateJSON, logs, apiKey, partnerKey)
}

// The API key comes from another resource, so it is unknown when the provider is configured
// for the plan; the plan must still work, and the apply use the key.
func TestAccJob_providerConfigUnknownAtPlan(t *testing.T) {
	t.Parallel()
	const key = "key-from-another-resource-123"
	srv := newTestServer(t, emulator.Options{Token: key})
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: fmt.Sprintf(`
resource "terraform_data" "key" {
  input = %q
}
`, key) + providerConfig(srv, "api_key = terraform_data.key.output") + fmt.Sprintf(`
resource "svc_job" "test" {
  workflow = %s
}
`, imageWorkflowHCL(1)),
			Check: resource.ComposeAggregateTestCheckFunc(
				resource.TestCheckResourceAttr("svc_job.test", "status", "succeeded"),
				func(*terraform.State) error {
					if got := srv.LastRequestHeader(emulator.OpSubmitJob).Get("Authorization"); got != "Bearer "+key {
						return fmt.Errorf("the submission carried Authorization %q", got)
					}
					return nil
				},
			),
		}},
	})
}

// A job not finished that vanished before its expires_at is gone, not expired: it leaves state
// with a warning and the next apply submits the workflow again. (A finished job is not read
// again before it expires: TestAccJob_finishedJobsAreNotReadAgain.)
func TestAccJob_notFoundBeforeExpiryIsRemoved(t *testing.T) {
	t.Parallel()
	srv := newTestServer(t, emulator.Options{Retention: time.Hour, QueueDelay: time.Hour})
	config := jobConfig(srv, imageWorkflowHCL(1), "wait_for_completion = false")
	var id string
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: config, Check: captureID(&id)},
			{
				PreConfig: func() { srv.PurgeJob(id) },
				Config:    config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("svc_job.test", plancheck.ResourceActionCreate),
				}},
				Check: func(s *terraform.State) error {
					if s.RootModule().Resources["svc_job.test"].Primary.ID == id || srv.JobCount() != 2 {
						return fmt.Errorf("want a second job replacing the vanished %s (server has %d)", id, srv.JobCount())
					}
					return nil
				},
			},
		},
	})
}

// A finished job is settled for good: planning and destroying finished jobs send no request at
// all, counted at the server, on a server that computes hashes lazily (null in state), signs URLs
// for seconds (all expired by the plan) and signs them anew on every read, and with
// rerun_on_expiry set (expiry is decided from expires_at, without a request).
func TestAccJob_finishedJobsAreNotReadAgain(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		opts  emulator.Options
		extra string
	}{
		{name: "finished with hashes", opts: emulator.Options{Retention: time.Hour}},
		{name: "hash not computed yet", opts: emulator.Options{Retention: time.Hour, LazyHashes: true}},
		{name: "hashes null, URLs expired and signed anew on each read",
			opts: emulator.Options{Retention: time.Hour, LazyHashes: true, URLTTL: 3 * time.Second, ResignOnRead: true}},
		{name: "rerun_on_expiry before expiry", opts: emulator.Options{Retention: time.Hour}, extra: "rerun_on_expiry = true"},
		{name: "several jobs", opts: emulator.Options{Retention: time.Hour, LazyHashes: true, URLTTL: 3 * time.Second},
			extra: "count = 3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			clk := &testClock{}
			tt.opts.Now = clk.Now
			srv := newTestServer(t, tt.opts)
			config := jobConfig(srv, imageWorkflowHCL(1), tt.extra)
			var requestsAfterApply int
			resource.Test(t, resource.TestCase{
				ProtoV6ProviderFactories: clk.factories(),
				Steps: []resource.TestStep{
					{Config: config, Check: func(*terraform.State) error {
						// Every signed URL the service gave has expired by the plan, the job has not.
						clk.Advance(10 * time.Minute)
						requestsAfterApply = srv.TotalRequests()
						return nil
					}},
					{Config: config, PlanOnly: true},
					{Config: config, ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
						plancheck.ExpectEmptyPlan(), expectNoRequestSince{srv, &requestsAfterApply, ""},
					}}},
				},
				CheckDestroy: func(*terraform.State) error {
					if n := srv.TotalRequests() - requestsAfterApply; n != 0 {
						return fmt.Errorf("plans and destroy of finished jobs sent %d requests; want none", n)
					}
					return nil
				},
			})
		})
	}
}

// A service that echoes a write-only credential back in an error must not put it in the
// diagnostic.
func TestAccJob_writeOnlyCredentialsRedactedFromErrors(t *testing.T) {
	requireCLIFeature(t, featureWriteOnly)
	t.Parallel()
	tests := []struct{ attr, value string }{
		{"partner_api_key_wo", "wo-partner-key-13579"},
		{"partner_auth_token_wo", "wo-session-token-24680"},
	}
	for _, tt := range tests {
		t.Run(tt.attr, func(t *testing.T) {
			t.Parallel()
			srv := newTestServer(t, emulator.Options{})
			srv.Inject(emulator.Fault{Op: emulator.OpSubmitJob, Status: 422,
				Body: `{"error":{"code":"invalid_request","message":"credential ` + tt.value + ` was refused"}}`})
			resource.Test(t, resource.TestCase{
				ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
				Steps: []resource.TestStep{{
					Config:      jobConfig(srv, imageWorkflowHCL(1), fmt.Sprintf("%s = %q", tt.attr, tt.value)),
					ExpectError: regexp.MustCompile(`invalid_request: credential \(redacted\)\s+was\s+refused`),
				}},
			})
		})
	}
}

// Changing a provider-side setting of a finished job (cancel_on_destroy, rerun_on_expiry,
// wait_for_completion, timeouts) updates it in place: the plan shows the job's record as known
// (nothing to fetch), the apply sends nothing to the service, and the job keeps its id and outputs.
func TestAccJob_settingsUpdateInPlaceWithoutResubmitting(t *testing.T) {
	t.Parallel()
	srv := newTestServer(t, emulator.Options{})
	var id string
	keptAsItWas := func(settings string) resource.TestStep {
		return resource.TestStep{
			Config: jobConfig(srv, imageWorkflowHCL(1), settings),
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction("svc_job.test", plancheck.ResourceActionUpdate),
				plancheck.ExpectKnownValue("svc_job.test", tfjsonpath.New("status"), knownvalue.StringExact("succeeded")),
				plancheck.ExpectKnownValue("svc_job.test", tfjsonpath.New("id"), knownvalue.NotNull()),
			}},
			Check: resource.ComposeAggregateTestCheckFunc(
				resource.TestCheckResourceAttrPtr("svc_job.test", "id", &id),
				resource.TestCheckResourceAttr("svc_job.test", "status", "succeeded"),
				resource.TestCheckResourceAttr("svc_job.test", "outputs.#", "1"),
				submissions(srv, emulator.OpSubmitJob, 1),
				submissions(srv, emulator.OpCancelJob, 0),
			),
		}
	}
	changed := keptAsItWas("cancel_on_destroy = false\n  rerun_on_expiry = true")
	changed.Check = resource.ComposeAggregateTestCheckFunc(changed.Check,
		resource.TestCheckResourceAttr("svc_job.test", "cancel_on_destroy", "false"),
		resource.TestCheckResourceAttr("svc_job.test", "rerun_on_expiry", "true"))
	waitOff := keptAsItWas("cancel_on_destroy = false\n  rerun_on_expiry = true\n  wait_for_completion = false\n  timeouts = { delete = \"1m\" }")
	waitOff.Check = resource.ComposeAggregateTestCheckFunc(waitOff.Check,
		resource.TestCheckResourceAttr("svc_job.test", "wait_for_completion", "false"),
		resource.TestCheckResourceAttr("svc_job.test", "timeouts.delete", "1m"))
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: jobConfig(srv, imageWorkflowHCL(1), ""),
				Check:  resource.ComposeAggregateTestCheckFunc(captureID(&id), submissions(srv, emulator.OpSubmitJob, 1)),
			},
			changed,
			waitOff,
		},
	})
}

// A job carries its identity, kept by the refresh of the finished job (answered without the
// framework, from the bytes Terraform sent); an import block with it adopts the job, taking the
// workflow from configuration in place: one submission, no cancel.
func TestAccJob_identity(t *testing.T) {
	requireCLIFeature(t, featureResourceIdentity)
	t.Parallel()
	srv := newTestServer(t, emulator.Options{})
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: identityImport{
			address:      "svc_job.test",
			config:       jobConfig(srv, imageWorkflowHCL(1), ""),
			bare:         providerConfig(srv, ""),
			names:        []string{"id"},
			importAction: plancheck.ResourceActionUpdate,
			badIdentity:  map[string]string{"id": `"../../etc"`},
		}.steps(),
	})
	if n, c := srv.Requests(emulator.OpSubmitJob), srv.Requests(emulator.OpCancelJob); n != 1 || c != 0 {
		t.Fatalf("%d submissions and %d cancels, want 1 and 0", n, c)
	}
}
