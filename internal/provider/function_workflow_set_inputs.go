package provider

import (
	"context"
	"fmt"
	"math/big"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/function"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"

	"github.com/svc-org/terraform-provider-svc/internal/canonicaljson"
	"github.com/svc-org/terraform-provider-svc/internal/workflow"
)

var _ function.Function = workflowSetInputsFunction{}

// NewWorkflowSetInputsFunction returns provider::svc::workflow_set_inputs.
func NewWorkflowSetInputsFunction() function.Function { return workflowSetInputsFunction{} }

type workflowSetInputsFunction struct{}

func (workflowSetInputsFunction) Metadata(_ context.Context, _ function.MetadataRequest, resp *function.MetadataResponse) {
	resp.Name = "workflow_set_inputs"
}

func (workflowSetInputsFunction) Definition(_ context.Context, _ function.DefinitionRequest, resp *function.DefinitionResponse) {
	resp.Definition = function.Definition{
		Summary: "Set inputs of nodes in an API-format workflow",
		MarkdownDescription: "Returns the workflow JSON with `workflow[node].inputs[name] = value` for every entry of " +
			"`patches`, keeping everything else. The result is canonical JSON (keys sorted, no whitespace, each number " +
			"spelled one way: `1.0` and `1e0` become `1`), so reformatting the template changes nothing downstream. A patch for a node the workflow lacks is an error, so a misspelt " +
			"node id fails at plan time instead of being ignored by the service.",
		Parameters: []function.Parameter{
			function.StringParameter{Name: "workflow", MarkdownDescription: "API-format workflow JSON (e.g. `file(\"workflow_api.json\")`)."},
			function.DynamicParameter{Name: "patches", MarkdownDescription: "Object of node id to an object of input name to value: `{ \"6\" = { text = \"a cat\" } }`. Values may be strings, numbers, booleans, links (`[\"4\", 0]`) or objects such as `provider::svc::asset_ref(id)`."},
		},
		Return: function.StringReturn{},
	}
}

func (workflowSetInputsFunction) Run(ctx context.Context, req function.RunRequest, resp *function.RunResponse) {
	var wf string
	var patches types.Dynamic
	resp.Error = function.ConcatFuncErrors(req.Arguments.Get(ctx, &wf, &patches))
	if resp.Error != nil {
		return
	}
	raw, err := toGo(patches.UnderlyingValue())
	if err != nil {
		resp.Error = function.NewArgumentFuncError(1, err.Error())
		return
	}
	byNode, ok := raw.(map[string]any)
	if !ok {
		resp.Error = function.NewArgumentFuncError(1, "patches must be an object of node id to an object of inputs")
		return
	}
	typed := make(map[string]map[string]any, len(byNode))
	for id, v := range byNode {
		inputs, ok := v.(map[string]any)
		if !ok {
			resp.Error = function.NewArgumentFuncError(1, fmt.Sprintf("patches[%q] must be an object of input name to value", id))
			return
		}
		typed[id] = inputs
	}
	out, err := workflow.SetInputs([]byte(wf), typed)
	if err == nil {
		// Canonical output: reformatting the template (indentation, key order, 1 vs 1.0)
		// yields the same string, so nothing that uses it plans a change.
		out, err = canonicaljson.Canonical(out)
	}
	if err != nil {
		resp.Error = function.NewFuncError(err.Error())
		return
	}
	resp.Error = function.ConcatFuncErrors(resp.Result.Set(ctx, string(out)))
}

// toGo converts a Terraform value into plain Go values that encode to the equivalent JSON.
func toGo(v attr.Value) (any, error) {
	if v == nil || v.IsNull() {
		return nil, nil
	}
	if v.IsUnknown() {
		return nil, fmt.Errorf("value is not known yet")
	}
	switch v := v.(type) {
	case basetypes.DynamicValue:
		return toGo(v.UnderlyingValue())
	case basetypes.StringValue:
		return v.ValueString(), nil
	case basetypes.BoolValue:
		return v.ValueBool(), nil
	case basetypes.NumberValue:
		return jsonNumber(v.ValueBigFloat()), nil
	case basetypes.Int64Value:
		return v.ValueInt64(), nil
	case basetypes.Float64Value:
		return v.ValueFloat64(), nil
	case basetypes.ListValue:
		return listToGo(v.Elements())
	case basetypes.TupleValue:
		return listToGo(v.Elements())
	case basetypes.SetValue:
		return listToGo(v.Elements())
	case basetypes.MapValue:
		return mapToGo(v.Elements())
	case basetypes.ObjectValue:
		return mapToGo(v.Attributes())
	}
	return nil, fmt.Errorf("unsupported value type %s", v.Type(context.Background()))
}

// jsonNumber keeps integers integral (so 512 stays 512, not 5.12e+02).
func jsonNumber(f *big.Float) any {
	if f.IsInt() {
		if i, acc := f.Int64(); acc == big.Exact {
			return i
		}
	}
	x, _ := f.Float64()
	return x
}

func listToGo(elems []attr.Value) (any, error) {
	out := make([]any, 0, len(elems))
	for _, e := range elems {
		g, err := toGo(e)
		if err != nil {
			return nil, err
		}
		out = append(out, g)
	}
	return out, nil
}

func mapToGo(elems map[string]attr.Value) (any, error) {
	out := make(map[string]any, len(elems))
	for k, e := range elems {
		g, err := toGo(e)
		if err != nil {
			return nil, err
		}
		out[k] = g
	}
	return out, nil
}
