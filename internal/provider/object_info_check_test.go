package provider

import (
	"fmt"
	"reflect"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/svc-org/terraform-provider-svc/internal/client"
	"github.com/svc-org/terraform-provider-svc/internal/emulator"
	"github.com/svc-org/terraform-provider-svc/internal/workflow"
)

// checkInfo is an object_info document in the shapes independent servers use: a type name with
// options, a list of choices, COMBO with options, optional and hidden inputs.
const checkInfo = `{
  "Load":  {"input": {"required": {"image": [["a.png", "b.png"], {"image_upload": true}]}}, "output": ["IMAGE"], "output_node": false},
  "Model": {"input": {"required": {"ckpt": ["COMBO", {"options": ["x.safetensors"]}]}}, "output": ["MODEL"]},
  "Text":  {"input": {"required": {"text": ["STRING", {"multiline": true}], "clip": ["CLIP"]},
                      "optional": {"seed": ["INT", {"default": 0}]}, "hidden": {"unique_id": "UNIQUE_ID"}}, "output": ["STRING"]},
  "Save":  {"input": {"required": {"images": ["IMAGE"], "filename_prefix": ["STRING", {}]}}, "output": [], "output_node": true}
}`

func TestCheckWorkflowNodes(t *testing.T) {
	t.Parallel()
	info, err := client.ParseObjectInfo([]byte(checkInfo))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		workflow string
		want     map[string][]string
	}{
		{"links, choices, widget values, _meta, extra inputs", `{
			"1": {"class_type": "Load", "inputs": {"image": "not-listed.png", "upload": "image"}, "_meta": {"title": "in"}},
			"2": {"class_type": "Save", "inputs": {"images": ["1", 0], "filename_prefix": 7, "unknown_extra": true}}}`, map[string][]string{}},
		{"optional and hidden inputs may be left out", `{
			"1": {"class_type": "Text", "inputs": {"text": "hi", "clip": ["3", 0]}},
			"2": {"class_type": "Save", "inputs": {"images": ["1", 0], "filename_prefix": "x"}},
			"3": {"class_type": "Model", "inputs": {"ckpt": "x.safetensors"}}}`, map[string][]string{}},
		{"missing input of a node an output depends on", `{
			"1": {"class_type": "Model", "inputs": {}},
			"2": {"class_type": "Text", "inputs": {"text": "hi", "clip": ["1", 0]}},
			"3": {"class_type": "Save", "inputs": {"images": ["2", 0]}}}`, map[string][]string{
			"1": {`required input "ckpt" of Model is missing`},
			"3": {`required input "filename_prefix" of Save is missing`},
		}},
		// The engine checks inputs only on output nodes and what they depend on: a node no output
		// uses is never run, so its missing inputs do not stop the prompt.
		{"missing input of a node no output uses", `{
			"1": {"class_type": "Model", "inputs": {}},
			"2": {"class_type": "Load", "inputs": {"image": "a.png"}},
			"3": {"class_type": "Save", "inputs": {"images": ["2", 0], "filename_prefix": "x"}}}`, map[string][]string{}},
		// An unknown class is refused wherever it is: the engine looks every class up first.
		{"unknown class anywhere", `{
			"1": {"class_type": "Nope", "inputs": {}},
			"2": {"class_type": "Load", "inputs": {"image": "a.png"}},
			"3": {"class_type": "Save", "inputs": {"images": ["2", 0], "filename_prefix": "x"}}}`, map[string][]string{
			"1": {`unknown node class "Nope" (the service's object_info does not list it)`},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, err := workflow.Parse([]byte(tt.workflow))
			if err != nil {
				t.Fatal(err)
			}
			if got := checkWorkflowNodes(info, g); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("problems = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestAccJob_validateThroughObjectInfo(t *testing.T) {
	t.Parallel()
	srv := newTestServer(t, emulator.Options{Token: v1AccKey})
	missing := `jsonencode({
    "1" = { class_type = "EmptyImage", inputs = { width = 8, height = 8, batch_size = 1, color = 0 } }
    "2" = { class_type = "ImageInvert", inputs = {} }
    "3" = { class_type = "SaveImage", inputs = { images = ["2", 0], filename_prefix = "x" } }
  })`
	cfg := func(extra string) string {
		return providerConfig(srv, fmt.Sprintf("api_key = %q", v1AccKey)) + fmt.Sprintf("resource \"svc_job\" \"test\" {\n  workflow = %s\n  %s\n}\n", missing, extra)
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			// On by default: the plan fails before anything is sent.
			{Config: cfg(""), PlanOnly: true, ExpectError: regexp.MustCompile(`(?s)Workflow node "2" would be rejected.*required input "image" of ImageInvert is missing`)},
			// Off: it plans, and the service judges at submit.
			{Config: cfg("validate = false"), PlanOnly: true, ExpectNonEmptyPlan: true},
		},
	})
	if n := srv.Requests(emulator.OpSubmitJob); n != 0 {
		t.Errorf("%d jobs submitted by plans", n)
	}
}

// svc_job submits through the v2 interface: a surface without the v1 object_info route skips the
// check (a warning) instead of failing the plan.
func TestAccJob_validateSkippedWithoutObjectInfoRoute(t *testing.T) {
	t.Parallel()
	srv := newTestServer(t, emulator.Options{})
	srv.Inject(emulator.Fault{Op: emulator.OpV1ObjectInfo, Status: 404, Body: "404 page not found", ContentType: "text/plain; charset=utf-8"})
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: jobConfig(srv, imageWorkflowHCL(1), ""),
			Check:  resource.TestCheckResourceAttr("svc_job.test", "status", "succeeded"),
		}},
	})
	if srv.Requests(emulator.OpV1ObjectInfo) == 0 {
		t.Fatal("object_info was not asked: the check did not run")
	}
}
