package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/function"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/svc-org/terraform-provider-svc/internal/workflow"
)

var _ function.Function = assetRefFunction{}

// NewAssetRefFunction returns provider::svc::asset_ref.
func NewAssetRefFunction() function.Function { return assetRefFunction{} }

type assetRefFunction struct{}

var assetRefAttrTypes = map[string]attr.Type{"type": types.StringType, "id": types.StringType}

func (assetRefFunction) Metadata(_ context.Context, _ function.MetadataRequest, resp *function.MetadataResponse) {
	resp.Name = "asset_ref"
}

func (assetRefFunction) Definition(_ context.Context, _ function.DefinitionRequest, resp *function.DefinitionResponse) {
	resp.Definition = function.Definition{
		Summary: "An asset reference for a workflow input",
		MarkdownDescription: "Returns `{ type = \"core/ASSET\", id = id }`, the value a workflow input takes to consume " +
			"an asset, such as an earlier job's output (`svc_job.x.outputs[0].id`). The service checks at submission " +
			"that the asset exists and is yours (`422 missing_asset` otherwise).",
		Parameters: []function.Parameter{
			function.StringParameter{Name: "id", MarkdownDescription: "Asset id, e.g. a job output's `id`."},
		},
		Return: function.ObjectReturn{AttributeTypes: assetRefAttrTypes},
	}
}

func (assetRefFunction) Run(ctx context.Context, req function.RunRequest, resp *function.RunResponse) {
	var id string
	resp.Error = function.ConcatFuncErrors(req.Arguments.Get(ctx, &id))
	if resp.Error != nil {
		return
	}
	if id == "" {
		resp.Error = function.NewArgumentFuncError(0, "the asset id must not be empty")
		return
	}
	ref := workflow.AssetRef(id)
	obj, diags := types.ObjectValue(assetRefAttrTypes, map[string]attr.Value{
		"type": types.StringValue(ref["type"]), "id": types.StringValue(ref["id"]),
	})
	if diags.HasError() {
		resp.Error = function.FuncErrorFromDiags(ctx, diags)
		return
	}
	resp.Error = function.ConcatFuncErrors(resp.Result.Set(ctx, obj))
}
