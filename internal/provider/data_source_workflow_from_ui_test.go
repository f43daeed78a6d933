package provider

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/svc-org/terraform-provider-svc/internal/emulator"
)

// editorExampleAPI is what examples/from-editor/workflow.json converts to on the reference server.
const editorExampleAPI = `{"1":{"_meta":{"title":"Canvas"},"class_type":"EmptyImage","inputs":{"batch_size":2,"color":2003199,"height":64,"width":96}},` +
	`"10:1":{"_meta":{"title":"ImageNoiseSampler"},"class_type":"ImageNoiseSampler","inputs":{"denoise":0.6,"image":["1",0],"seed":1234,"steps":6}},` +
	`"10:3":{"_meta":{"title":"Mirror"},"class_type":"ImageFlip","inputs":{"flip_method":"y-axis: horizontally","image":["10:1",0]}},` +
	`"11":{"_meta":{"title":"ImageInvert"},"class_type":"ImageInvert","inputs":{"image":["10:3",0]}},` +
	`"12":{"_meta":{"title":"SaveImage"},"class_type":"SaveImage","inputs":{"filename_prefix":"from-editor","images":["11",0]}}}`

// editorExampleVariants returns the example's export compacted, and again indented with its keys
// in another order: the same workflow as an editor or a formatter might write it.
func editorExampleVariants(t *testing.T) (compact, reformatted string) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "examples", "from-editor", "workflow.json"))
	if err != nil {
		t.Fatal(err)
	}
	var c bytes.Buffer
	if err := json.Compact(&c, raw); err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatal(err)
	}
	sorted, err := json.MarshalIndent(v, "", "    ") // sorted keys, other indentation
	if err != nil {
		t.Fatal(err)
	}
	return c.String(), string(sorted)
}

// The example converts on the reference server and runs as a job; the same export reformatted
// converts to the same string, so the next plan is empty and nothing runs again.
func TestAccWorkflowFromUIDataSource_reformattedExportIsNoChange(t *testing.T) {
	skipUnlessAcc(t)
	t.Parallel()
	srv := newTestServer(t, emulator.Options{})
	compact, reformatted := editorExampleVariants(t)
	config := func(export string) string {
		return providerConfig(srv, "") + fmt.Sprintf(`
data "svc_workflow_from_ui" "editor" {
  ui_workflow = %q
}

resource "svc_job" "render" {
  workflow = data.svc_workflow_from_ui.editor.api_workflow
}
`, export)
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: config(compact),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr("data.svc_workflow_from_ui.editor", "api_workflow", editorExampleAPI),
					resource.TestCheckResourceAttr("svc_job.render", "status", "succeeded"),
					resource.TestCheckResourceAttr("svc_job.render", "outputs.#", "2"),
				),
			},
			{
				Config:           config(reformatted),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr("data.svc_workflow_from_ui.editor", "api_workflow", editorExampleAPI),
					func(*terraform.State) error {
						if n := srv.JobCount(); n != 1 {
							return fmt.Errorf("%d jobs on the server, want 1: the reformatted export ran again", n)
						}
						return nil
					},
				),
			},
		},
	})
}

// A conversion that does not fit is refused at plan, naming the node; a UI export given to
// svc_job or svc_prompt is refused with the way to convert it.
func TestAccWorkflowFromUI_refusals(t *testing.T) {
	skipUnlessAcc(t)
	t.Parallel()
	srv := newTestServer(t, emulator.Options{Token: v1AccKey})
	// A cleanup, not a check after the loop: the parallel subtests run after this function returns.
	t.Cleanup(func() {
		if n := srv.JobCount(); n != 0 {
			t.Errorf("%d jobs submitted", n)
		}
	})
	const export = `{"nodes":[{"id":5,"type":"ImageNoiseSampler","mode":0,"title":"Noise","inputs":[],"outputs":[],"widgets_values":[1,20,0.5]}],"links":[]}`
	tests := []struct {
		name, config, wantErr string
	}{
		{"a widget count that does not fit", `
data "svc_workflow_from_ui" "bad" {
  ui_workflow = ` + fmt.Sprintf("%q", export) + `
}`, `node\s+5\s+\(ImageNoiseSampler,\s+titled\s+"Noise"\):\s+widgets_values\s+has\s+3\s+values`},
		{"an unknown class", `
data "svc_workflow_from_ui" "bad" {
  ui_workflow = jsonencode({ nodes = [{ id = 8, type = "NotInstalled", mode = 0 }], links = [] })
}`, `node\s+8\s+\(NotInstalled\):\s+unknown\s+class`},
		{"svc_job given a UI export", `
resource "svc_job" "ui" {
  workflow = ` + fmt.Sprintf("%q", export) + `
}`, `UI-format(.|\n)*svc_workflow_from_ui(.|\n)*provider::svc::workflow_from_ui`},
		{"svc_prompt given a UI export", `
resource "svc_prompt" "ui" {
  workflow = ` + fmt.Sprintf("%q", export) + `
}`, `UI-format(.|\n)*svc_workflow_from_ui(.|\n)*provider::svc::workflow_from_ui`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			resource.Test(t, resource.TestCase{
				ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
				Steps: []resource.TestStep{{
					Config:      providerConfig(srv, fmt.Sprintf("api_key = %q", v1AccKey)) + tt.config,
					ExpectError: regexp.MustCompile(tt.wantErr),
				}},
			})
		})
	}
}

// When object_info cannot be read, the data source says so with the service's answer (status,
// code, request id) and points to the offline function.
func TestAccWorkflowFromUIDataSource_objectInfoFails(t *testing.T) {
	skipUnlessAcc(t)
	t.Parallel()
	srv := newTestServer(t, emulator.Options{})
	srv.Inject(emulator.Fault{Op: emulator.OpV1ObjectInfo, Status: 403,
		Body: `{"error":{"code":"forbidden","message":"no"}}`, Headers: map[string]string{"X-Svc-Request-Id": "req-oi-1"}})
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: providerConfig(srv, "") + `
data "svc_workflow_from_ui" "editor" {
  ui_workflow = jsonencode({ nodes = [], links = [] })
}`,
			ExpectError: regexp.MustCompile(`Reading object info failed(.|\n)*workflow_from_ui(.|\n)*403(.|\n)*req-oi-1`),
		}},
	})
}
