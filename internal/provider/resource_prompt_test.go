package provider

import (
	"fmt"
	"image/color"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/metrics"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/svc-org/terraform-provider-svc/internal/client"
	"github.com/svc-org/terraform-provider-svc/internal/emulator"
)

func init() {
	// Poll fast: the reference server finishes prompts in milliseconds.
	promptWait = client.PromptWaitOptions{PollInterval: 10 * time.Millisecond, PollIntervalSocket: 50 * time.Millisecond, SocketGrace: 5 * time.Second}
}

const v1AccKey = "v1-acc-key-0123456789"

func promptConfig(srv *emulator.Server, workflow, extra string) string {
	return providerConfig(srv, fmt.Sprintf("api_key = %q\n  partner_api_key = \"partner-default-key\"", v1AccKey)) + fmt.Sprintf(`
resource "svc_prompt" "test" {
  workflow = %s
  %s
}
`, workflow, extra)
}

// promptID reads the prompt id of svc_prompt.test.
func promptID(s *terraform.State) string {
	return s.RootModule().Resources["svc_prompt.test"].Primary.ID
}

func TestAccPrompt_uploadAndRun(t *testing.T) {
	t.Parallel()
	srv := newTestServer(t, emulator.Options{Token: v1AccKey})
	img := filepath.Join(t.TempDir(), "input.png")
	writePNG(t, img, color.NRGBA{B: 255, A: 255})
	cfg := providerConfig(srv, fmt.Sprintf("api_key = %q\n  partner_api_key = \"partner-default-key\"", v1AccKey)) + fmt.Sprintf(`
resource "svc_upload" "input" {
  source = %q
}

resource "svc_prompt" "test" {
  workflow = jsonencode({
    "1" = { class_type = "LoadImage", inputs = { image = svc_upload.input.name } }
    "2" = { class_type = "ImageFlip", inputs = { image = ["1", 0], flip_method = "x-axis: vertically" } }
    "3" = { class_type = "SaveImage", inputs = { images = ["2", 0], filename_prefix = "flipped" } }
  })
}
`, img)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: cfg,
			Check: resource.ComposeAggregateTestCheckFunc(
				resource.TestCheckResourceAttr("svc_prompt.test", "status", "success"),
				resource.TestCheckResourceAttr("svc_prompt.test", "outputs.#", "1"),
				resource.TestCheckResourceAttr("svc_prompt.test", "outputs.0.node_id", "3"),
				resource.TestCheckResourceAttr("svc_prompt.test", "outputs.0.kind", "image"),
				resource.TestCheckResourceAttr("svc_prompt.test", "outputs.0.type", "output"),
				resource.TestCheckResourceAttr("svc_prompt.test", "outputs.0.subfolder", ""),
				resource.TestMatchResourceAttr("svc_prompt.test", "outputs.0.filename", regexp.MustCompile(`^flipped_00001_\.png$`)),
				resource.TestCheckResourceAttr("svc_prompt.test", "outputs_complete", "true"),
				resource.TestCheckResourceAttr("svc_prompt.test", "interrupted", "false"),
				resource.TestCheckNoResourceAttr("svc_prompt.test", "error"),
				resource.TestCheckNoResourceAttr("svc_prompt.test", "partner_api_key_wo"),
				func(s *terraform.State) error {
					if got := srv.JobExtraData(promptID(s))["api_key_svc_org"]; got != "partner-default-key" {
						return fmt.Errorf("extra_data.api_key_svc_org = %v", got)
					}
					if h := srv.LastRequestHeader(emulator.OpV1Prompt); h.Get("X-Api-Key") != v1AccKey || h.Get("Authorization") != "" {
						return fmt.Errorf("prompt credentials: %v", h)
					}
					return nil
				},
			),
		}},
	})
}

func TestAccPrompt_executionError(t *testing.T) {
	t.Parallel()
	srv := newTestServer(t, emulator.Options{Token: v1AccKey})
	srv.FailNode("ImageInvert", "", "CUDA out of memory")
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config:      promptConfig(srv, imageWorkflowHCL(1), ""),
			ExpectError: regexp.MustCompile(`(?s)Prompt error.*failed \(status error\).*Node "2" \(ImageInvert\) raised RuntimeError: CUDA out of memory.*Traceback`),
		}},
	})
}

func TestAccPrompt_nonRetryableError(t *testing.T) {
	t.Parallel()
	srv := newTestServer(t, emulator.Options{Token: v1AccKey})
	srv.FailNode("ImageInvert", emulator.NonRetryableCode, "bad input")
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config:      promptConfig(srv, imageWorkflowHCL(1), ""),
			ExpectError: regexp.MustCompile(`(?s)non_retryable_error:\s+the\s+service\s+says\s+retrying\s+will\s+not\s+help`),
		}},
	})
}

// Engines differ in how they report a prompt's end: the older status set, or no status route
// at all (the socket's terminal message decides). Either way the prompt ends with its outputs.
func TestAccPrompt_engineStatusVariants(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		opts       emulator.Options
		batch      int
		wantStatus string
	}{
		{"olderStatusSet", emulator.Options{Token: v1AccKey, V1LegacyStatuses: true}, 2, "completed"},
		{"statusRouteMissing", emulator.Options{Token: v1AccKey, V1NoStatusRoute: true}, 1, "success"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := newTestServer(t, tt.opts)
			resource.Test(t, resource.TestCase{
				ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
				Steps: []resource.TestStep{{
					Config: promptConfig(srv, imageWorkflowHCL(tt.batch), ""),
					Check: resource.ComposeAggregateTestCheckFunc(
						resource.TestCheckResourceAttr("svc_prompt.test", "status", tt.wantStatus),
						resource.TestCheckResourceAttr("svc_prompt.test", "outputs.#", fmt.Sprint(tt.batch)),
					),
				}},
			})
		})
	}
}

func TestAccPrompt_bodyWithError(t *testing.T) {
	t.Parallel()
	srv := newTestServer(t, emulator.Options{Token: v1AccKey})
	srv.Inject(emulator.Fault{Op: emulator.OpV1Prompt, Status: 200, Body: `{"error":"no active subscription"}`,
		Headers: map[string]string{"X-Svc-Request-Id": "req-v1-err"}})
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config:      promptConfig(srv, imageWorkflowHCL(1), ""),
			ExpectError: regexp.MustCompile(`(?s)refused the prompt.*HTTP 200: no active subscription \(request id req-v1-err\)`),
		}},
	})
}

// Import adopts a prompt by id: the status is read back, and the next apply takes the workflow
// from the configuration in place, without running it again.
func TestAccPrompt_importAndUpdateInPlace(t *testing.T) {
	t.Parallel()
	srv := newTestServer(t, emulator.Options{Token: v1AccKey})
	cfg := promptConfig(srv, imageWorkflowHCL(1), "")
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: cfg},
			{Config: cfg, ResourceName: "svc_prompt.test", ImportState: true, ImportStateVerify: true,
				// Outputs are reported on the socket while the prompt runs; the workflow is not read back.
				ImportStateVerifyIgnore: []string{"workflow", "outputs", "outputs_complete"}},
			// Destroying only forgets the prompt (v1 has no cancel); import it back for real.
			{Config: providerConfig(srv, fmt.Sprintf("api_key = %q", v1AccKey))},
			{Config: cfg, ResourceName: "svc_prompt.test", ImportState: true, ImportStatePersist: true,
				ImportStateIdFunc: func(*terraform.State) (string, error) { return srv.JobIDs()[0], nil }},
			{Config: cfg, ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction("svc_prompt.test", plancheck.ResourceActionUpdate)}},
				Check: resource.TestCheckResourceAttr("svc_prompt.test", "status", "success")},
			// A provider-side setting changes in place, every computed value kept.
			{Config: promptConfig(srv, imageWorkflowHCL(1), "validate = false"), ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction("svc_prompt.test", plancheck.ResourceActionUpdate),
				plancheck.ExpectKnownValue("svc_prompt.test", tfjsonpath.New("outputs_complete"), knownvalue.Bool(false))}}},
			{Config: promptConfig(srv, imageWorkflowHCL(1), "validate = false"), PlanOnly: true},
		},
	})
	if n := srv.Requests(emulator.OpV1Prompt); n != 1 {
		t.Errorf("%d prompts submitted, want 1", n)
	}
}

// The write-only partner key is a secret like the provider's: a service that echoes it in an
// error must not put it in the diagnostic.
func TestAccPrompt_writeOnlyKeyRedactedFromErrors(t *testing.T) {
	requireCLIFeature(t, featureWriteOnly)
	t.Parallel()
	srv := newTestServer(t, emulator.Options{Token: v1AccKey})
	srv.Inject(emulator.Fault{Op: emulator.OpV1Prompt, Status: 400,
		Body: `{"error":{"type":"invalid_partner_key","message":"partner key wo-partner-key-987 was refused"},"node_errors":{}}`})
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config:      promptConfig(srv, imageWorkflowHCL(1), `partner_api_key_wo = "wo-partner-key-987"`),
			ExpectError: regexp.MustCompile(`invalid_partner_key: partner key \(redacted\)\s+was\s+refused`),
		}},
	})
	if got := srv.JobCount(); got != 0 {
		t.Errorf("%d prompts ran", got)
	}
}

func TestAccPrompt_planTimeValidation(t *testing.T) {
	if os.Getenv(resource.EnvTfAcc) == "" {
		// Its subtests skip then, and the counts below would hold nothing they ran.
		t.Skipf("acceptance test: set %s", resource.EnvTfAcc)
	}
	t.Parallel()
	srv := newTestServer(t, emulator.Options{Token: v1AccKey})
	for _, tc := range []struct {
		name, workflow, want string
	}{
		{"missing required input", `jsonencode({
    "1" = { class_type = "EmptyImage", inputs = { width = 8, height = 8, batch_size = 1, color = 0 } }
    "3" = { class_type = "SaveImage", inputs = { filename_prefix = "x" } }
  })`, `(?s)Workflow node "3" would be rejected.*required input "images" of SaveImage is missing`},
		{"unknown class", `jsonencode({
    "1" = { class_type = "NoSuchNode", inputs = {} }
    "2" = { class_type = "SaveImage", inputs = { images = ["1", 0], filename_prefix = "x" } }
  })`, `(?s)Workflow node "1" would be rejected.*unknown node class "NoSuchNode"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resource.Test(t, resource.TestCase{
				ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
				Steps: []resource.TestStep{{
					Config:      promptConfig(srv, tc.workflow, ""),
					PlanOnly:    true,
					ExpectError: regexp.MustCompile(tc.want),
				}},
			})
		})
	}
	t.Run("links and choices are accepted", func(t *testing.T) {
		resource.Test(t, resource.TestCase{
			ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
			Steps: []resource.TestStep{{
				Config: promptConfig(srv, `jsonencode({
    "1" = { class_type = "EmptyImage", inputs = { width = 8, height = 8, batch_size = 1, color = 0 } }
    "2" = { class_type = "ImageFlip", inputs = { image = ["1", 0], flip_method = "x-axis: vertically" } }
    "3" = { class_type = "SaveImage", inputs = { images = ["2", 0], filename_prefix = "x" } }
  })`, ""),
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
			}},
		})
	})
	t.Run("validate = false skips the check", func(t *testing.T) {
		resource.Test(t, resource.TestCase{
			ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
			Steps: []resource.TestStep{{
				Config: promptConfig(srv, `jsonencode({
    "3" = { class_type = "SaveImage", inputs = { filename_prefix = "x" } }
  })`, "validate = false"),
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
			}},
		})
	})
	if n := srv.Requests(emulator.OpV1Prompt); n != 0 {
		t.Errorf("%d prompts submitted by plans", n)
	}
	if n := srv.Requests(emulator.OpV1ObjectInfo); n == 0 {
		t.Error("object_info was never read")
	}
}

// A server that subscribes a new socket a little after the handshake would miss a fast
// prompt's messages if the provider submitted at once; it waits for the server's greeting.
func TestAccPrompt_slowSocketSubscription(t *testing.T) {
	t.Parallel()
	srv := newTestServer(t, emulator.Options{Token: v1AccKey, V1SocketSubscribeDelay: 300 * time.Millisecond})
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: promptConfig(srv, imageWorkflowHCL(1), ""),
			Check: resource.ComposeAggregateTestCheckFunc(
				resource.TestCheckResourceAttr("svc_prompt.test", "outputs.#", "1"),
				resource.TestCheckResourceAttr("svc_prompt.test", "outputs_complete", "true"),
			),
		}},
	})
}

// A socket that floods executed messages (50,000 here, half repeating one file) leaves at most
// client.MaxPromptOutputs outputs in state, the repeated file once, and the provider's heap under
// 256 MiB.
func TestAccPrompt_executedFloodIsBounded(t *testing.T) {
	srv := newTestServer(t, emulator.Options{Token: v1AccKey, V1ExecutedFlood: 50000})
	runtime.GC() // what earlier tests left is not this test's
	peak := watchPeakHeap(t)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: promptConfig(srv, imageWorkflowHCL(2), ""),
			Check: resource.ComposeAggregateTestCheckFunc(
				resource.TestCheckResourceAttr("svc_prompt.test", "status", "success"),
				resource.TestCheckResourceAttr("svc_prompt.test", "outputs.#", fmt.Sprint(client.MaxPromptOutputs)),
			),
		}},
	})
	rss := peak()
	t.Logf("peak heap: %d MiB", rss>>20)
	if rss >= 256<<20 {
		t.Errorf("peak heap %d MiB; want under 256 MiB", rss>>20)
	}
}

// watchPeakHeap samples the Go heap this process holds in live and not yet swept objects until
// the returned function is called, and returns the highest value seen in bytes. The provider
// runs in this process. The heap, not the resident set, is what the provider's own allocations
// grow: the resident set of a test binary also holds the race detector's shadow memory and what
// earlier tests left to the runtime, which made the figure depend on how the suite was run.
func watchPeakHeap(t *testing.T) func() uint64 {
	t.Helper()
	stop, done := make(chan struct{}), make(chan uint64)
	go func() {
		var peak uint64
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			peak = max(peak, heapObjectBytes())
			select {
			case <-stop:
				done <- peak
				return
			case <-tick.C:
			}
		}
	}()
	return func() uint64 { close(stop); return <-done }
}

func heapObjectBytes() uint64 {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(sample)
	if sample[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return sample[0].Value.Uint64()
}

// svc_prompt's outputs and error objects have the attributes, and types, of their models and of
// the attribute types their values are built with.
func TestPromptRecordNestedObjectsAgree(t *testing.T) {
	t.Parallel()
	res := protocolAttributes(t, protocolSchemas(t).ResourceSchemas["svc_prompt"])
	for _, tt := range []struct {
		attribute  string
		modelNames []string
		types      map[string]attr.Type
	}{
		{"outputs", tfsdkNames(promptOutputModel{}), promptOutputAttrTypes},
		{"error", tfsdkNames(promptErrorModel{}), promptErrorAttrTypes},
	} {
		nested := nestedAttributes(t, res[tt.attribute])
		assertSameNames(t, tt.attribute+" model", tt.modelNames, sortedKeys(tt.types))
		assertSameNames(t, tt.attribute+" schema", sortedKeys(nested), sortedKeys(tt.types))
		for name, want := range tt.types {
			if a := nested[name]; a != nil && !a.Type.Equal(want.TerraformType(t.Context())) {
				t.Errorf("%s.%s: type %v, want %v", tt.attribute, name, a.Type, want)
			}
		}
	}
}

// A prompt carries its identity; an import block with it adopts the prompt, taking the workflow
// from configuration in place, and nothing is submitted but the first.
func TestAccPrompt_identity(t *testing.T) {
	requireCLIFeature(t, featureResourceIdentity)
	t.Parallel()
	srv := newTestServer(t, emulator.Options{Token: v1AccKey})
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: identityImport{
			address:      "svc_prompt.test",
			config:       promptConfig(srv, imageWorkflowHCL(1), ""),
			bare:         providerConfig(srv, fmt.Sprintf("api_key = %q", v1AccKey)),
			names:        promptIdentity,
			importAction: plancheck.ResourceActionUpdate,
			badIdentity:  map[string]string{"id": `" "`},
		}.steps(),
	})
	if n := srv.Requests(emulator.OpV1Prompt); n != 1 {
		t.Errorf("%d prompts submitted, want 1", n)
	}
}
