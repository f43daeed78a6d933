package emulator

import (
	"context"
	"errors"
)

// RaiseError is the built-in node class that fails every time it runs. Its inputs are valid,
// so the job is accepted and starts; the failure happens at run time, after the nodes before
// it ran, and the job ends failed with node_execution_error and an engine-style traceback.
// It is an output node so that a workflow may end on it; its optional image input lets it sit
// after real work.
const raiseErrorClass = "RaiseError"

func init() {
	registerNode(&nodeClass{
		Name: raiseErrorClass, Category: "utils/debug", Output: true,
		Inputs: []inputSpec{
			{Name: "message", Type: typeString, Required: true, Default: "this node always fails"},
			{Name: "image", Type: typeImage, Required: false},
		},
		run: func(_ context.Context, _ *nodeRun, in map[string]any) ([]any, error) {
			return nil, errors.New(asString(in["message"]))
		},
	})
}
