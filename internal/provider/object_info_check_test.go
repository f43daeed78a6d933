package provider

import (
	"fmt"
	"reflect"
	"regexp"
	"strings"
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
  "Model": {"input": {"required": {"ckpt": ["COMBO", {"options": ["x.safetensors"]}]}}, "output": ["MODEL", "CLIP"]},
  "Text":  {"input": {"required": {"text": ["STRING", {"multiline": true}], "clip": ["CLIP"]},
                      "optional": {"seed": ["INT", {"default": 0}]}, "hidden": {"unique_id": "UNIQUE_ID"}}, "output": ["STRING"]},
  "Save":  {"input": {"required": {"images": ["IMAGE,STRING"], "filename_prefix": ["STRING", {}]}}, "output": [], "output_node": true},
  "Steps": {"input": {"required": {"steps": ["INT", {"min": 1}], "cfg": ["FLOAT"], "any": ["*"], "pick": [["a", "b"]]},
                      "optional": {"image": ["IMAGE"]}}, "output": ["IMAGE"]},
  "Odd":   {"input": {"required": {}}}
}`

func TestCheckWorkflowNodes(t *testing.T) {
	t.Parallel()
	info, err := client.ParseObjectInfo([]byte(checkInfo))
	if err != nil {
		t.Fatal(err)
	}
	defs, err := workflow.ParseClassDefs([]byte(checkInfo))
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
			"1": {"class_type": "Text", "inputs": {"text": "hi", "clip": ["3", 1]}},
			"2": {"class_type": "Save", "inputs": {"images": ["1", 0], "filename_prefix": "x"}},
			"3": {"class_type": "Model", "inputs": {"ckpt": "x.safetensors"}}}`, map[string][]string{}},
		{"missing input of a node an output depends on", `{
			"1": {"class_type": "Model", "inputs": {}},
			"2": {"class_type": "Text", "inputs": {"text": "hi", "clip": ["1", 1]}},
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
		{"links and input types the engine would refuse, named", `{
			"1": {"class_type": "Model", "inputs": {"ckpt": "x.safetensors"}},
			"2": {"class_type": "Steps", "inputs": {"steps": "twenty", "cfg": "many", "any": ["1", 0], "pick": "c", "image": ["1", 0]}},
			"3": {"class_type": "Save", "inputs": {"images": ["7", 0], "filename_prefix": "x"}},
			"4": {"class_type": "Save", "inputs": {"images": ["2", 3], "filename_prefix": "x"}},
			"5": {"class_type": "Save", "inputs": {"images": ["3", 0], "filename_prefix": "x"}}}`, map[string][]string{
			"2": {
				`input "cfg" expects FLOAT (a number), but is the string "many"`,
				`input "image" expects IMAGE, but links to output 0 of node "1" (Model), which is MODEL`,
				`input "steps" expects INT (a number), but is the string "twenty"`,
			},
			"3": {`input "images" links to node "7", which the workflow does not have (its nodes: "1", "2", "3", "4", "5")`},
			"4": {`input "images" links to output 3 of node "2" (Steps), which has 1 output (0: IMAGE)`},
			"5": {`input "images" links to output 0 of node "3" (Save), which has no outputs`},
		}},
		// What the engine reads as a number, links into "*" and choice inputs, negative indexes (the
		// engine counts from the end), a class that does not list its outputs, an undeclared input,
		// and a node no output uses: none is refused.
		{"what the engine would accept", `{
			"1": {"class_type": "Odd", "inputs": {}},
			"2": {"class_type": "Steps", "inputs": {"steps": " 1_000 ", "cfg": "1e-3", "any": ["1", 5], "pick": ["1", 0], "image": ["5", -1], "extra": ["9", 0]}},
			"3": {"class_type": "Save", "inputs": {"images": ["2", 0], "filename_prefix": "x"}},
			"4": {"class_type": "Steps", "inputs": {"steps": "never run", "cfg": 1, "any": 1, "pick": "a"}},
			"5": {"class_type": "Steps", "inputs": {"steps": 1, "cfg": 1, "any": 1, "pick": "a"}}}`, map[string][]string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, err := workflow.Parse([]byte(tt.workflow))
			if err != nil {
				t.Fatal(err)
			}
			if got := checkWorkflowNodes(info, defs, g); !reflect.DeepEqual(got, tt.want) {
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

// A link to a node that does not exist, to an output its class does not have, or a string where
// the class wants a number fails the plan, naming node, class, input, what was given and what
// was expected; nothing is sent.
func TestAccJob_validateLinksAndTypes(t *testing.T) {
	t.Parallel()
	srv := newTestServer(t, emulator.Options{Token: v1AccKey})
	tests := []struct{ name, image, steps, images, want string }{
		{"link to a missing node", `["1", 0]`, `1`, `["7", 0]`,
			`Workflow node "3" would be rejected.*Node "3" (SaveImage): input "images" links to node "7", which the workflow does not have (its nodes: "1", "2", "3")`},
		{"output index beyond the class's outputs", `["1", 1]`, `1`, `["2", 0]`,
			`Workflow node "2" would be rejected.*Node "2" (ImageNoiseSampler): input "image" links to output 1 of node "1" (EmptyImage), which has 1 output (0: IMAGE)`},
		{"a string where the class wants a number", `["1", 0]`, `"twenty"`, `["2", 0]`,
			`Workflow node "2" would be rejected.*Node "2" (ImageNoiseSampler): input "steps" expects INT (a number), but is the string "twenty"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			workflow := fmt.Sprintf(`jsonencode({
    "1" = { class_type = "EmptyImage", inputs = { width = 8, height = 8, batch_size = 1, color = 0 } }
    "2" = { class_type = "ImageNoiseSampler", inputs = { image = %s, seed = 1, steps = %s, denoise = 1.0 } }
    "3" = { class_type = "SaveImage", inputs = { images = %s, filename_prefix = "x" } }
  })`, tt.image, tt.steps, tt.images)
			config := providerConfig(srv, fmt.Sprintf("api_key = %q", v1AccKey)) +
				fmt.Sprintf("resource \"svc_job\" \"test\" {\n  workflow = %s\n}\n", workflow)
			resource.Test(t, resource.TestCase{
				ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
				Steps: []resource.TestStep{{Config: config, PlanOnly: true,
					ExpectError: regexp.MustCompile(`(?s)` + wrapped(quoteParts(tt.want)))}},
			})
		})
	}
	t.Cleanup(func() {
		if n := srv.Requests(emulator.OpSubmitJob); n != 0 {
			t.Errorf("%d jobs submitted by plans", n)
		}
	})
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

// quoteParts quotes the regular expression's metacharacters in want, except in ".*", which joins
// parts that may be far apart.
func quoteParts(want string) string {
	parts := strings.Split(want, ".*")
	for i, p := range parts {
		parts[i] = regexp.QuoteMeta(p)
	}
	return strings.Join(parts, ".*")
}
