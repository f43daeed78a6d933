package provider

import (
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
)

// fromUITestObjectInfo is a small object_info document in the engine's shape.
const fromUITestObjectInfo = `jsonencode({
  Sampler = {
    input       = { required = { image = ["IMAGE"], seed = ["INT", { control_after_generate = true }], steps = ["INT", {}] } }
    input_order = { required = ["image", "seed", "steps"] }
    output      = ["IMAGE"]
  }
  Source = { input = { required = {} }, output = ["IMAGE"], display_name = "Image source" }
})`

// fromUITestExport has a source, a sampler (its seed followed by the control value) and a note.
const fromUITestExport = `jsonencode({
  nodes = [
    { id = 1, type = "Source", mode = 0, inputs = [], outputs = [{ name = "IMAGE", type = "IMAGE", links = [1] }], widgets_values = [] },
    { id = 2, type = "Sampler", mode = 0, title = "Noise", inputs = [{ name = "image", type = "IMAGE", link = 1 }], outputs = [], widgets_values = [%s] },
    { id = 3, type = "Note", mode = 0, inputs = [], outputs = [], widgets_values = ["hi"] },
  ]
  links = [[1, 1, 0, 2, 0, "IMAGE"]]
})`

func TestWorkflowFromUIFunction(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		expr    string
		want    string
		wantErr string
	}{
		{
			name: "converts offline to canonical JSON",
			expr: `provider::svc::workflow_from_ui(` + fmt.Sprintf(fromUITestExport, `42, "randomize", 8`) + `, ` + fromUITestObjectInfo + `)`,
			want: `{"1":{"_meta":{"title":"Image source"},"class_type":"Source","inputs":{}},` +
				`"2":{"_meta":{"title":"Noise"},"class_type":"Sampler","inputs":{"image":["1",0],"seed":42,"steps":8}}}`,
		},
		{
			name:    "refuses a widget count that does not match, naming the node",
			expr:    `provider::svc::workflow_from_ui(` + fmt.Sprintf(fromUITestExport, `42, 8`) + `, ` + fromUITestObjectInfo + `)`,
			wantErr: `node\s+2\s+\(Sampler,\s+titled\s+"Noise"\):\s+widgets_values\s+has\s+2\s+values`,
		},
		{
			name:    "refuses an object_info that is not an object",
			expr:    `provider::svc::workflow_from_ui(` + fmt.Sprintf(fromUITestExport, `42, "fixed", 8`) + `, "[]")`,
			wantErr: `object_info\s+is\s+not\s+a\s+JSON\s+object`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			checkFunctionOutput(t, tt.expr, knownvalue.StringExact(tt.want), tt.wantErr)
		})
	}
}
