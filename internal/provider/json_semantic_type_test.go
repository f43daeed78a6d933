package provider

import (
	"context"
	"fmt"
	"image/color"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"

	"github.com/svc-org/terraform-provider-svc/internal/emulator"
)

func TestJSONEquivalent(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{`{"a":1,"b":[1,2]}`, "{\n  \"b\": [1.0, 2e0],\n  \"a\": 1\n}", true},
		{`{"a":1}`, `{"a":2}`, false},
		{`{"a":1}`, `{"a":"1"}`, false},
		{`{"a":1}`, `not json`, false},
	} {
		got, diags := newJSONSemanticValue(tc.a).StringSemanticEquals(context.Background(), newJSONSemanticValue(tc.b))
		if diags.HasError() || got != tc.want {
			t.Errorf("%s vs %s: %v %v, want %v", tc.a, tc.b, got, diags, tc.want)
		}
	}
	if jsonEquivalent(basetypes.NewStringNull(), basetypes.NewStringNull()) {
		t.Error("two nulls are not equivalent documents (a null is planned as it is)")
	}
}

// Reformatting a JSON argument (indentation, key order, number spelling) plans nothing and
// sends nothing, for every resource whose JSON decides a submission; a real change still does.
func TestAccJSONArguments_reformattingIsNoChange(t *testing.T) {
	t.Parallel()
	jobWorkflow := imageWorkflowHCL(1)
	mask := filepath.Join(t.TempDir(), "mask.png")
	writePNG(t, mask, color.NRGBA{A: 128})
	jobReformatted := `<<-EOT
    {
      "3": {"inputs": {"filename_prefix": "acc", "images": ["2", 0e0]}, "class_type": "SaveImage"},
      "2": {"class_type": "ImageInvert", "inputs": {"image": ["1", 0.0]}},
      "1": {
        "inputs": {"color": 1.6711680e7, "batch_size": 1.0, "height": 8, "width": 8},
        "class_type": "EmptyImage"
      }
    }
  EOT`
	tests := []struct {
		name, address, submitOp string
		server                  func(*testing.T) *emulator.Server
		config                  func(srv *emulator.Server, json string) string
		original, reformatted   string
		changed                 string
		changeAction            plancheck.ResourceActionType
	}{
		{
			name: "svc_job.workflow", address: "svc_job.test", submitOp: emulator.OpSubmitJob,
			server:   func(t *testing.T) *emulator.Server { return newTestServer(t, emulator.Options{}) },
			config:   func(srv *emulator.Server, wf string) string { return jobConfig(srv, wf, "") },
			original: jobWorkflow, reformatted: jobReformatted, changed: imageWorkflowHCL(2),
			changeAction: plancheck.ResourceActionReplace,
		},
		{
			name: "svc_prompt.workflow", address: "svc_prompt.test", submitOp: emulator.OpV1Prompt,
			server:   func(t *testing.T) *emulator.Server { return newTestServer(t, emulator.Options{Token: v1AccKey}) },
			config:   func(srv *emulator.Server, wf string) string { return promptConfig(srv, wf, "") },
			original: jobWorkflow, reformatted: jobReformatted, changed: imageWorkflowHCL(2),
			changeAction: plancheck.ResourceActionReplace,
		},
		{
			name: "svc_router_request.input", address: routerRes, submitOp: emulator.OpSubmitRequest,
			server: func(t *testing.T) *emulator.Server { return newTestServer(t, emulator.Options{}) },
			config: func(srv *emulator.Server, in string) string {
				return routerRequestConfig(srv, 2, fmt.Sprintf("model = \"demo/echo\"\ninput = %s\n", in))
			},
			original:     `jsonencode({ prompt = "hello", steps = 3 })`,
			reformatted:  "<<-EOT\n    {\n      \"steps\": 3.0,\n      \"prompt\": \"hello\"\n    }\n  EOT",
			changed:      `jsonencode({ prompt = "hello", steps = 4 })`,
			changeAction: plancheck.ResourceActionReplace,
		},
		{
			name: "svc_registry_node_translation.data", address: "svc_registry_node_translation.test", submitOp: emulator.OpRegistryTranslations,
			server: func(t *testing.T) *emulator.Server {
				srv := newRegistryServer(t)
				srv.SetNodePublisher("n1", "acme")
				return srv
			},
			config:       func(srv *emulator.Server, data string) string { return translationConfig(srv, "n1", data) },
			original:     `jsonencode({ fr = { title = "Bonjour" }, de = { title = "Hallo" } })`,
			reformatted:  "<<-EOT\n    {\n      \"fr\": {\"title\": \"Bonjour\"},\n      \"de\": {\n        \"title\": \"Hallo\"\n      }\n    }\n  EOT",
			changed:      `jsonencode({ fr = { title = "Salut" }, de = { title = "Hallo" } })`,
			changeAction: plancheck.ResourceActionUpdate,
		},
		{
			name: "svc_upload.original_ref", address: "svc_upload.mask", submitOp: emulator.OpV1UploadMask,
			server: func(t *testing.T) *emulator.Server { return newTestServer(t, emulator.Options{Token: v1AccKey}) },
			config: func(srv *emulator.Server, ref string) string {
				return providerConfig(srv, fmt.Sprintf("api_key = %q", v1AccKey)) + fmt.Sprintf(`
resource "svc_upload" "mask" {
  source       = %q
  kind         = "mask"
  original_ref = %s
}
`, mask, ref)
			},
			original:     `jsonencode({ filename = "cat.png", subfolder = "", type = "input" })`,
			reformatted:  "<<-EOT\n    {\n      \"type\": \"input\",\n      \"subfolder\": \"\",\n      \"filename\": \"cat.png\"\n    }\n  EOT",
			changed:      `jsonencode({ filename = "dog.png", subfolder = "", type = "input" })`,
			changeAction: plancheck.ResourceActionReplace,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := tt.server(t)
			resource.Test(t, resource.TestCase{
				ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
				Steps: []resource.TestStep{
					{Config: tt.config(srv, tt.original), Check: submissions(srv, tt.submitOp, 1)},
					{
						Config: tt.config(srv, tt.reformatted),
						ConfigPlanChecks: resource.ConfigPlanChecks{
							PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
						},
						Check: submissions(srv, tt.submitOp, 1),
					},
					{
						Config: tt.config(srv, tt.changed),
						ConfigPlanChecks: resource.ConfigPlanChecks{
							PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction(tt.address, tt.changeAction)},
						},
						Check: submissions(srv, tt.submitOp, 2),
					},
				},
			})
		})
	}
}

// Malformed JSON is reported by line and column, once, without the document echoed back.
func TestAccJSONArguments_malformedNamesLineAndColumn(t *testing.T) {
	t.Parallel()
	srv := newTestServer(t, emulator.Options{})
	malformed := "<<-EOT\n    {\n      \"1\": {\"class_type\": \"SECRET_MARKER\", \"inputs\": {},}\n    }\n  EOT"
	for name, config := range map[string]string{
		"svc_job.workflow":         jobConfig(srv, malformed, ""),
		"svc_router_request.input": routerRequestConfig(srv, 2, "model = \"demo/echo\"\ninput = "+malformed+"\n"),
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			resource.Test(t, resource.TestCase{
				ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
				Steps: []resource.TestStep{{
					Config:   config,
					PlanOnly: true,
					// One error, and no other after it (no "Er" follows).
					ExpectError: regexp.MustCompile(`(?s)Error: Invalid JSON(?:[^E]|E[^r])*invalid JSON at line 2, column 53(?:[^E]|E[^r])*$`),
				}},
			})
		})
	}
}
