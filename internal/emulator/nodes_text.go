package emulator

import "context"

// Text classes whose inputs are sockets only (forceInput), as many of the engine's string nodes
// have: the editor shows no widget for them, so an export stores no value for them.
func init() {
	registerNode(&nodeClass{
		Name: "JoinText", Category: "utils/string",
		Inputs: []inputSpec{
			{Name: "text_a", Type: typeString, Required: true, ForceInput: true},
			{Name: "separator", Type: typeString, Required: true, Default: " "},
			{Name: "text_b", Type: typeString, Required: true, ForceInput: true},
		},
		Outputs: []string{typeString}, OutputNames: []string{"STRING"},
		run: func(_ context.Context, _ *nodeRun, in map[string]any) ([]any, error) {
			return []any{asString(in["text_a"]) + asString(in["separator"]) + asString(in["text_b"])}, nil
		},
	})
}
