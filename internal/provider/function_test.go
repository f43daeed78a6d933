package provider

import (
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
)

const testWorkflowHCL = `jsonencode({
  "1" = { class_type = "EmptyImage", inputs = { width = 8, height = 8, batch_size = 1, color = 0 } }
  "2" = { class_type = "SaveImage", inputs = { images = ["1", 0], filename_prefix = "a" } }
  "3" = { class_type = "SaveImage", inputs = { images = ["1", 0], filename_prefix = "b" } }
})`

func TestFunctions(t *testing.T) {
	requireCLIFeature(t, featureProviderFunctions)
	t.Parallel()
	tests := []struct {
		name    string
		expr    string
		want    knownvalue.Check
		wantErr string
	}{
		{
			name: "workflow_set_inputs sets literals, links and asset refs",
			expr: `jsondecode(provider::svc::workflow_set_inputs(` + testWorkflowHCL + `, {
  "1" = { width = 512, color = 255 }
  "2" = { images = ["1", 0], filename_prefix = "out" }
  "3" = { image = provider::svc::asset_ref("a1b2") }
}))`,
			want: knownvalue.ObjectPartial(map[string]knownvalue.Check{
				"1": knownvalue.ObjectPartial(map[string]knownvalue.Check{"inputs": knownvalue.ObjectExact(map[string]knownvalue.Check{
					"width": knownvalue.Int64Exact(512), "height": knownvalue.Int64Exact(8), "batch_size": knownvalue.Int64Exact(1), "color": knownvalue.Int64Exact(255),
				})}),
				"3": knownvalue.ObjectPartial(map[string]knownvalue.Check{"inputs": knownvalue.ObjectPartial(map[string]knownvalue.Check{
					"image": knownvalue.ObjectExact(map[string]knownvalue.Check{"type": knownvalue.StringExact("core/ASSET"), "id": knownvalue.StringExact("a1b2")}),
				})}),
			}),
		},
		{
			name: "workflow_set_inputs returns canonical JSON whatever the template's formatting",
			expr: "provider::svc::workflow_set_inputs(<<-EOT\n  {\n    \"1\": {\"inputs\": {\"w\": 8.0, \"h\": 1e1},\n      \"class_type\": \"EmptyImage\"}\n  }\nEOT\n, { \"1\" = { c = 1.5 } })",
			want: knownvalue.StringExact(`{"1":{"class_type":"EmptyImage","inputs":{"c":1.5,"h":10,"w":8}}}`),
		},
		{
			name:    "workflow_set_inputs refuses an unknown node",
			expr:    `provider::svc::workflow_set_inputs(` + testWorkflowHCL + `, { "9" = { width = 1 } })`,
			wantErr: `has\s+no\s+node\s+"9"`,
		},
		{
			name:    "workflow_set_inputs refuses a UI export",
			expr:    `provider::svc::workflow_set_inputs(jsonencode({ nodes = [], links = [] }), {})`,
			wantErr: `UI-format`,
		},
		{
			name: "workflow_nodes lists a class",
			expr: `provider::svc::workflow_nodes(` + testWorkflowHCL + `, "SaveImage")`,
			want: knownvalue.ListExact([]knownvalue.Check{knownvalue.StringExact("2"), knownvalue.StringExact("3")}),
		},
		{
			name: "workflow_nodes of an absent class is empty",
			expr: `provider::svc::workflow_nodes(` + testWorkflowHCL + `, "KSampler")`,
			want: knownvalue.ListSizeExact(0),
		},
		{
			name: "asset_ref builds the reference object",
			expr: `provider::svc::asset_ref("5f0c")`,
			want: knownvalue.ObjectExact(map[string]knownvalue.Check{"type": knownvalue.StringExact("core/ASSET"), "id": knownvalue.StringExact("5f0c")}),
		},
		{
			name:    "asset_ref refuses an empty id",
			expr:    `provider::svc::asset_ref("")`,
			wantErr: `must not be empty`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			checkFunctionOutput(t, tt.expr, tt.want, tt.wantErr)
		})
	}
}

// checkFunctionOutput evaluates expr as a configuration's output: it must fail matching wantErr
// when that is set, else its value must pass want.
func checkFunctionOutput(t *testing.T, expr string, want knownvalue.Check, wantErr string) {
	t.Helper()
	step := resource.TestStep{Config: `output "test" { value = ` + expr + ` }`}
	if wantErr != "" {
		step.ExpectError = regexp.MustCompile(wantErr)
	} else {
		step.ConfigStateChecks = []statecheck.StateCheck{statecheck.ExpectKnownOutputValue("test", want)}
	}
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps:                    []resource.TestStep{step},
	})
}
