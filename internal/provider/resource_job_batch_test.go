package provider

import (
	"bytes"
	"fmt"
	"image"
	"image/png"
	"math/big"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-go/tftypes"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/svc-org/terraform-provider-svc/internal/emulator"
)

const batchRes = "svc_job_batch.b"

// batchTextTemplate is a one-node template whose rows set the text saved.
const batchTextTemplate = `jsonencode({ "6" = { class_type = "SaveText", inputs = { text = "template", filename_prefix = "row" } } })`

// batchRowsHCL is n rows r0..r(n-1), each saving its own text; changed names one row whose
// text differs.
func batchRowsHCL(n int, changed string) string {
	return fmt.Sprintf(`{ for i in range(%d) : "r${i}" => { "6" = { text = "r${i}" == %q ? "changed" : "row ${i}" } } }`, n, changed)
}

func batchConfig(srv *emulator.Server, template, rows, extra string) string {
	return providerConfig(srv, "") + fmt.Sprintf(`
resource "svc_job_batch" "b" {
  workflow = %s
  rows     = %s
  %s
}
`, template, rows, extra)
}

// requestsUnchanged checks that no request of ops reached srv since the counts in before.
func requestsSince(srv *emulator.Server, op string, before *int, want int) resource.TestCheckFunc {
	return func(*terraform.State) error {
		if n := srv.Requests(op) - *before; n != want {
			return fmt.Errorf("%d requests reached %s in this step, want %d", n, op, want)
		}
		*before = srv.Requests(op)
		return nil
	}
}

// Rows change one by one: adding 10 rows to a finished batch submits 10, changing one re-runs
// it, removing one sends no cancel (it has finished), reformatting the template is no change,
// and planning the finished batch sends no request.
func TestAccJobBatch_rowsChangeOneByOne(t *testing.T) {
	t.Parallel()
	srv := newTestServer(t, emulator.Options{})
	var submits, reads int
	reformatted := `<<-EOT
    {"6": {"inputs": {"filename_prefix": "row", "text": "template"},
           "class_type": "SaveText"}}
  EOT`
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: batchConfig(srv, batchTextTemplate, batchRowsHCL(5, ""), ""),
				Check: resource.ComposeAggregateTestCheckFunc(
					requestsSince(srv, emulator.OpSubmitJob, &submits, 5),
					resource.TestCheckResourceAttr(batchRes, "succeeded", "5"),
					resource.TestCheckResourceAttr(batchRes, "failed", "0"),
					resource.TestCheckResourceAttr(batchRes, "results.r3.status", "succeeded"),
					resource.TestMatchResourceAttr(batchRes, "results.r3.id", regexp.MustCompile(`^[0-9a-f-]{36}$`)),
					resource.TestCheckResourceAttr(batchRes, "results.r3.outputs.%", "1"),
					resource.TestMatchResourceAttr(batchRes, "results.r3.outputs.6.0", regexp.MustCompile(`^[0-9a-f-]{36}$`)),
					resource.TestCheckNoResourceAttr(batchRes, "results.r3.error"),
				),
			},
			{
				Config: batchConfig(srv, batchTextTemplate, batchRowsHCL(15, ""), ""),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectKnownValue(batchRes, tfjsonPath("results", "r3", "status"), knownString("succeeded")),
					plancheck.ExpectUnknownValue(batchRes, tfjsonPath("results", "r12")),
				}},
				Check: resource.ComposeAggregateTestCheckFunc(
					requestsSince(srv, emulator.OpSubmitJob, &submits, 10),
					resource.TestCheckResourceAttr(batchRes, "succeeded", "15"),
				),
			},
			{
				Config: batchConfig(srv, batchTextTemplate, batchRowsHCL(15, "r7"), ""),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectUnknownValue(batchRes, tfjsonPath("results", "r7")),
					plancheck.ExpectKnownValue(batchRes, tfjsonPath("results", "r8", "status"), knownString("succeeded")),
				}},
				Check: requestsSince(srv, emulator.OpSubmitJob, &submits, 1),
			},
			{
				Config:   batchConfig(srv, reformatted, batchRowsHCL(15, "r7"), ""),
				PlanOnly: true, // reformatting the template is no change
			},
			{
				Config: batchConfig(srv, batchTextTemplate, batchRowsHCL(14, "r7"), ""),
				Check: resource.ComposeAggregateTestCheckFunc(
					requestsSince(srv, emulator.OpSubmitJob, &submits, 0),
					submissions(srv, emulator.OpCancelJob, 0),
					resource.TestCheckNoResourceAttr(batchRes, "results.r14.status"),
					resource.TestCheckResourceAttr(batchRes, "succeeded", "14"),
				),
			},
			{
				PreConfig: func() { reads = srv.Requests(emulator.OpGetJob) },
				Config:    batchConfig(srv, batchTextTemplate, batchRowsHCL(14, "r7"), ""),
				PlanOnly:  true,
				Check:     requestsSince(srv, emulator.OpGetJob, &reads, 0),
			},
		},
	})
	if n := srv.Requests(emulator.OpSubmitJob); n != 16 {
		t.Fatalf("%d submissions in all, want 16", n)
	}
}

// A failed row leaves the batch untainted (a warning, not an error), is counted, and
// rerun_failed re-runs that row alone.
func TestAccJobBatch_failedRowRerunsAlone(t *testing.T) {
	t.Parallel()
	srv := newTestServer(t, emulator.Options{})
	template := `jsonencode({
    "1" = { class_type = "LoadImage", inputs = { image = "good.png" } }
    "2" = { class_type = "SaveImage", inputs = { images = ["1", 0], filename_prefix = "row" } }
  })`
	srv.PutAsset("good.png", "image/png", tinyPNG(t))
	srv.PutAsset("bad.png", "image/png", []byte("not a png"))
	rows := `{ a = {}, b = { "1" = { image = "bad.png" } }, c = { "2" = { filename_prefix = "c" } } }`
	var submits int
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: batchConfig(srv, template, rows, ""),
				Check: resource.ComposeAggregateTestCheckFunc(
					requestsSince(srv, emulator.OpSubmitJob, &submits, 3),
					resource.TestCheckResourceAttr(batchRes, "succeeded", "2"),
					resource.TestCheckResourceAttr(batchRes, "failed", "1"),
					resource.TestCheckResourceAttr(batchRes, "results.b.status", "failed"),
					resource.TestMatchResourceAttr(batchRes, "results.b.error", regexp.MustCompile(`^\w+: .+ \(node "1", LoadImage\)$`)),
					resource.TestCheckResourceAttr(batchRes, "results.b.outputs.%", "0"),
				),
			},
			{
				Config:   batchConfig(srv, template, rows, ""),
				PlanOnly: true, // not tainted: nothing to do
			},
			{
				Config: batchConfig(srv, template, rows, "rerun_failed = true"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(batchRes, plancheck.ResourceActionUpdate),
					plancheck.ExpectUnknownValue(batchRes, tfjsonPath("results", "b")),
					plancheck.ExpectKnownValue(batchRes, tfjsonPath("results", "a", "status"), knownString("succeeded")),
				}},
				Check: requestsSince(srv, emulator.OpSubmitJob, &submits, 1),
				// The row fails again, and while rerun_failed stays on it is planned again.
				ExpectNonEmptyPlan: true,
			},
			{
				Config: batchConfig(srv, template, rows, ""),
				Check:  requestsSince(srv, emulator.OpSubmitJob, &submits, 0),
			},
		},
	})
}

// A submission whose answer was lost is resent under its own key only; the service refuses that
// as a reuse, so the row is reported with its key, kept in state as unknown, and never resent
// under a new key: the next plan is empty and the server saw one job per row (and one resend).
func TestAccJobBatch_unknownOutcomeNotResent(t *testing.T) {
	t.Parallel()
	srv := newTestServer(t, emulator.Options{})
	srv.Inject(emulator.Fault{Op: emulator.OpSubmitJob, Nth: 2, AfterHandling: true, Status: 500, Body: `{"detail":"upstream hiccup"}`})
	config := batchConfig(srv, batchTextTemplate, batchRowsHCL(3, ""), "max_in_flight = 1")
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: config,
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr(batchRes, "results.r1.status", "unknown"),
					resource.TestMatchResourceAttr(batchRes, "results.r1.error", regexp.MustCompile(`\[Idempotency-Key [0-9a-f-]{36}\]$`)),
					resource.TestCheckNoResourceAttr(batchRes, "results.r1.id"),
					resource.TestCheckResourceAttr(batchRes, "failed", "1"),
					resource.TestCheckResourceAttr(batchRes, "succeeded", "2"),
				),
			},
			{Config: config, PlanOnly: true},
		},
	})
	if n, jobs := srv.Requests(emulator.OpSubmitJob), srv.JobCount(); n != 4 || jobs != 3 {
		t.Fatalf("%d submissions and %d jobs on the server, want 4 (one resend under its key) and 3", n, jobs)
	}
}

// A row naming a node the template lacks is an error at plan time naming the row; nothing is sent.
func TestAccJobBatch_badRowAtPlan(t *testing.T) {
	t.Parallel()
	srv := newTestServer(t, emulator.Options{})
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config:      batchConfig(srv, batchTextTemplate, `{ ok = {}, typo = { "66" = { text = "x" } } }`, ""),
			ExpectError: regexp.MustCompile(`(?s)rows\["typo"\].*no node "66"`),
		}},
	})
	if n := srv.Requests(emulator.OpSubmitJob); n != 0 {
		t.Fatalf("%d submissions, want 0", n)
	}
}

// The rows an apply submits are checked at plan time against the service's node classes, in a
// new batch and in rows added to a finished one: a misspelled input (which the engine would
// ignore), a string where a number is wanted and a link to a node the workflow lacks are each
// an error naming node, class and rows, and nothing is sent. validate = false submits anyway.
func TestAccJobBatch_rowsCheckedAgainstNodeClassesAtPlan(t *testing.T) {
	t.Parallel()
	srv := newTestServer(t, emulator.Options{})
	const template = `jsonencode({
    "1" = { class_type = "EmptyImage", inputs = { width = 8, height = 8, batch_size = 1, color = 0 } }
    "2" = { class_type = "ImageNoiseSampler", inputs = { image = ["1", 0], seed = 0, steps = 1, denoise = 0.5 } }
    "3" = { class_type = "SaveImage", inputs = { images = ["2", 0], filename_prefix = "row" } }
  })`
	const good = `ok1 = { "2" = { seed = 1 } }, ok2 = { "2" = { seed = 2 } }`
	const bad = `, sede = { "2" = { sede = 3 } }, many = { "2" = { steps = "many" } }, link = { "2" = { image = ["9", 0] } }`
	// One error per problem, in node and problem order, each naming the rows that have it
	// (Terraform wraps the text: any space may be a line break).
	var fragments []string
	for _, f := range []string{
		`Node "2" (ImageNoiseSampler): input "image" links to node "9"`, `in rows["link"]`,
		`Node "2" (ImageNoiseSampler): input "sede" is not one of ImageNoiseSampler's (image, seed, steps, denoise), in rows["sede"]`,
		`Node "2" (ImageNoiseSampler): input "steps" expects INT (a number), but is the string "many", in rows["many"]`,
	} {
		fragments = append(fragments, wrapped(regexp.QuoteMeta(f)))
	}
	wantErrors := regexp.MustCompile(`(?s)` + strings.Join(fragments, ".*"))
	var submits int
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: batchConfig(srv, template, "{ "+good+bad+" }", ""), ExpectError: wantErrors},
			{
				Config: batchConfig(srv, template, "{ "+good+" }", ""),
				Check:  requestsSince(srv, emulator.OpSubmitJob, &submits, 2),
			},
			{Config: batchConfig(srv, template, "{ "+good+bad+" }", ""), ExpectError: wantErrors},
			{
				Config: batchConfig(srv, template, "{ "+good+bad+" }", "validate = false"),
				Check: resource.ComposeAggregateTestCheckFunc(
					requestsSince(srv, emulator.OpSubmitJob, &submits, 3),
					resource.TestCheckResourceAttr(batchRes, "results.sede.status", "succeeded"),
				),
			},
		},
	})
}

func TestBatchRowInputs_formattingIsNoChange(t *testing.T) {
	t.Parallel()
	a, err := batchRowInputs(`{"6":{"class_type":"SaveText","inputs":{"text":"t","n":1}}}`, rowsValue(map[string]string{"x": "1.0"}))
	if err != nil {
		t.Fatal(err)
	}
	b, err := batchRowInputs("{ \"6\" : { \"inputs\": {\"n\": 1e0, \"text\": \"t\"}, \"class_type\": \"SaveText\" } }", rowsValue(map[string]string{"x": "1"}))
	if err != nil {
		t.Fatal(err)
	}
	if a[0].hash != b[0].hash || !strings.Contains(string(a[0].workflow), `"n":1`) {
		t.Fatalf("hashes differ: %s %s (%s / %s)", a[0].hash, b[0].hash, a[0].workflow, b[0].workflow)
	}
}

func tfjsonPath(first string, rest ...string) tfjsonpath.Path {
	p := tfjsonpath.New(first)
	for _, k := range rest {
		p = p.AtMapKey(k)
	}
	return p
}

func knownString(s string) knownvalue.Check { return knownvalue.StringExact(s) }

// tinyPNG is a valid 1x1 PNG.
func tinyPNG(t *testing.T) []byte {
	t.Helper()
	var b bytes.Buffer
	img := image.NewNRGBA(image.Rect(0, 0, 1, 1))
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// rowsValue is a rows value of one row per key, each setting node 6's input n to the number
// spelled as given.
func rowsValue(rows map[string]string) tftypes.Value {
	rowType := tftypes.Object{AttributeTypes: map[string]tftypes.Type{"6": tftypes.Object{AttributeTypes: map[string]tftypes.Type{"n": tftypes.Number}}}}
	attrTypes, values := map[string]tftypes.Type{}, map[string]tftypes.Value{}
	for key, n := range rows {
		f, _, err := big.ParseFloat(n, 10, 512, big.ToNearestEven)
		if err != nil {
			panic(err)
		}
		attrTypes[key] = rowType
		values[key] = tftypes.NewValue(rowType, map[string]tftypes.Value{
			"6": tftypes.NewValue(rowType.AttributeTypes["6"], map[string]tftypes.Value{"n": tftypes.NewValue(tftypes.Number, f)}),
		})
	}
	return tftypes.NewValue(tftypes.Object{AttributeTypes: attrTypes}, values)
}

// Removing a row whose job still runs cancels that job (one cancel) and forgets the row; the
// other rows send nothing.
func TestAccJobBatch_removedRunningRowIsCanceled(t *testing.T) {
	t.Parallel()
	// Generous mode: the first step's 2 s create timeout must see the short rows end, which
	// takes the event stream; on a server without one the polling schedule may read them later.
	// What this test is about, the cancel of a removed running row, is the same on both.
	srv := newTestServer(t, emulator.Options{Mode: emulator.ModeGenerous, Workers: 4, StepDuration: 50 * time.Millisecond})
	rows := func(slow bool) string {
		r := `{ a = { "2" = { steps = 1 } }, b = { "2" = { steps = 1 } }`
		if slow {
			r += `, slow = { "2" = { steps = 10000 } }`
		}
		return r + " }"
	}
	var submits, cancels int
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				// A short create timeout leaves the slow row running: a warning, not an error.
				Config: batchConfig(srv, batchSamplerTemplate(1), rows(true), `timeouts = { create = "2s" }`),
				Check: resource.ComposeAggregateTestCheckFunc(
					requestsSince(srv, emulator.OpSubmitJob, &submits, 3),
					resource.TestCheckResourceAttr(batchRes, "results.slow.status", "running"),
					resource.TestCheckResourceAttr(batchRes, "results.a.status", "succeeded"),
				),
				ExpectNonEmptyPlan: true, // the running row is waited for by the next apply
			},
			{
				Config: batchConfig(srv, batchSamplerTemplate(1), rows(false), ""),
				Check: resource.ComposeAggregateTestCheckFunc(
					requestsSince(srv, emulator.OpSubmitJob, &submits, 0),
					requestsSince(srv, emulator.OpCancelJob, &cancels, 1),
					resource.TestCheckNoResourceAttr(batchRes, "results.slow.status"),
					resource.TestCheckResourceAttr(batchRes, "succeeded", "2"),
				),
			},
		},
	})
}

// `terraform destroy -refresh=false`, which the docs offer to halve a finished batch's destroy,
// still cancels a row that runs: Delete works from the rows state holds, refreshed or not.
func TestAccJobBatch_destroyWithoutRefreshCancelsRunningRow(t *testing.T) {
	skipUnlessAcc(t)
	t.Parallel()
	// Generous mode, as in TestAccJobBatch_removedRunningRowIsCanceled: the short rows must be
	// seen to end within the create timeout.
	srv := newTestServer(t, emulator.Options{Mode: emulator.ModeGenerous, Workers: 4, StepDuration: 50 * time.Millisecond})
	tf := newTerraformCLI(t, "")
	cfg := batchConfig(srv, batchSamplerTemplate(1), `{ a = { "2" = { steps = 1 } }, slow = { "2" = { steps = 10000 } } }`,
		`timeouts = { create = "2s" }`)
	if err := os.WriteFile(filepath.Join(tf.dir, "main.tf"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	tf.run("apply", "-auto-approve", "-input=false", "-no-color") // the slow row is left running: a warning
	if state := tf.run("show", "-no-color"); !strings.Contains(state, `"running"`) {
		t.Fatalf("the slow row does not run after the apply:\n%s", state)
	}
	reads, cancels := srv.Requests(emulator.OpGetJob), srv.Requests(emulator.OpCancelJob)
	tf.run("destroy", "-refresh=false", "-auto-approve", "-input=false", "-no-color")
	if n := srv.Requests(emulator.OpCancelJob) - cancels; n != 1 {
		t.Errorf("%d cancels, want 1 (the running row's)", n)
	}
	if n := srv.Requests(emulator.OpGetJob) - reads; n < 1 {
		t.Errorf("%d reads: the running row's job was not read before its cancel", n)
	}
	if state := tf.run("show", "-no-color"); strings.Contains(state, "svc_job_batch") {
		t.Errorf("the batch is still in state:\n%s", state)
	}
}

// output_dir: every output is downloaded to <dir>/<row>/<name> and verified; a file deleted
// on disk is drift, downloaded again by asset id without running the row again.
func TestAccJobBatch_outputDir(t *testing.T) {
	t.Parallel()
	srv := newTestServer(t, emulator.Options{})
	dir := t.TempDir()
	config := batchConfig(srv, batchTextTemplate, batchRowsHCL(3, ""), fmt.Sprintf("output_dir = %q", dir))
	var submits, assets int
	fileOf := func(row string) string {
		matches, _ := filepath.Glob(filepath.Join(dir, row, "*"))
		if len(matches) != 1 {
			t.Fatalf("row %s: files %v, want one", row, matches)
		}
		return matches[0]
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: config,
				Check: resource.ComposeAggregateTestCheckFunc(
					requestsSince(srv, emulator.OpSubmitJob, &submits, 3),
					requestsSince(srv, emulator.OpGetAsset, &assets, 3),
					func(*terraform.State) error {
						b, err := os.ReadFile(fileOf("r1"))
						if err != nil || string(b) != "row 1" {
							return fmt.Errorf("r1's file holds %q, want %q: %w", b, "row 1", err)
						}
						return os.Remove(fileOf("r2"))
					},
				),
				ExpectNonEmptyPlan: true, // r2's file was just removed
			},
			{
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectUnknownValue(batchRes, tfjsonPath("results", "r2")),
					plancheck.ExpectKnownValue(batchRes, tfjsonPath("results", "r1", "status"), knownString("succeeded")),
				}},
				Check: resource.ComposeAggregateTestCheckFunc(
					requestsSince(srv, emulator.OpSubmitJob, &submits, 0),
					requestsSince(srv, emulator.OpGetAsset, &assets, 1),
					func(*terraform.State) error { _ = fileOf("r2"); return nil },
				),
			},
		},
	})
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("after destroy, output_dir holds %d entries", len(entries))
	}
}
