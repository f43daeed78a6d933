package workflow

import (
	"strings"
	"testing"
)

// The widget positions a class gives its widgets_values: widgets in input order, with the values
// the editor stores after some of them.
func TestWidgetLayout(t *testing.T) {
	t.Parallel()
	defs, err := ParseClassDefs([]byte(`{
	  "Flags": {"input": {"required": {
	    "a": ["INT", {"control_after_generate": "randomize"}],
	    "b": ["INT", {"control_after_generate": false}],
	    "seed": ["INT", {"control_after_generate": false}],
	    "noise_seed": ["INT", {}],
	    "c": ["INT", {"control_after_generate": null}],
	    "model": ["MODEL"],
	    "hidden_socket": ["STRING", {"forceInput": true}],
	    "pick": ["COMBO", {"options": ["x"], "control_after_generate": true}],
	    "file": [["x.png"], {"image_upload": true}],
	    "on": ["BOOLEAN"]
	  }, "optional": {"f": ["FLOAT", {}]}}},
	  "Ordered": {"input": {"required": {"z": ["INT"], "y": ["STRING"]}, "optional": {"x": ["FLOAT"]}},
	              "input_order": {"required": ["y", "z"], "optional": ["x"]}},
	  "BadOrder": {"input": {"required": {"z": ["INT"]}}, "input_order": {"required": ["z", "q"]}},
	  "BadOptions": {"input": {"required": {"z": ["INT", {"forceInput": "yes"}]}}}
	}`))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct{ class, want, wantErr string }{
		{class: "Flags", want: "a, control_after_generate, b, seed, noise_seed, control_after_generate, c, pick, control_after_generate, control_filter_list, file, on, upload, f"},
		{class: "Ordered", want: "y, z, x"},
		{class: "BadOrder", wantErr: `input_order names "q", which is not an input`},
		{class: "BadOptions", wantErr: `input "z" has unreadable options`},
	}
	for _, tt := range tests {
		def := defs[tt.class]
		if tt.wantErr != "" {
			if def.Err == nil || !strings.Contains(def.Err.Error(), tt.wantErr) {
				t.Errorf("%s: Err = %v, want %q", tt.class, def.Err, tt.wantErr)
			}
			continue
		}
		if def.Err != nil {
			t.Fatalf("%s: %v", tt.class, def.Err)
		}
		if got := describeLayout(widgetLayout(def)); got != tt.want {
			t.Errorf("%s: layout [%s], want [%s]", tt.class, got, tt.want)
		}
	}
}
