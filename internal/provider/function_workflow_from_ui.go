package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/function"

	"github.com/svc-org/terraform-provider-svc/internal/workflow"
)

var _ function.Function = workflowFromUIFunction{}

// NewWorkflowFromUIFunction returns provider::svc::workflow_from_ui.
func NewWorkflowFromUIFunction() function.Function { return workflowFromUIFunction{} }

type workflowFromUIFunction struct{}

func (workflowFromUIFunction) Metadata(_ context.Context, _ function.MetadataRequest, resp *function.MetadataResponse) {
	resp.Name = "workflow_from_ui"
}

func (workflowFromUIFunction) Definition(_ context.Context, _ function.DefinitionRequest, resp *function.DefinitionResponse) {
	resp.Definition = function.Definition{
		Summary: "Convert an editor (UI-format) export to an API-format workflow, offline",
		MarkdownDescription: "Converts a workflow saved by the graphical editor into the API format, with the node " +
			"classes given as an object_info document (`data.svc_object_info.<name>.json`, or a saved copy of " +
			"`GET /api/object_info`). It asks the service nothing, so it works at plan time.\n\n" +
			"The data source `svc_workflow_from_ui` does the same with the service's own object_info; its page says " +
			"how a workflow is converted ([svc_workflow_from_ui](../data-sources/workflow_from_ui.md)).",
		Parameters: []function.Parameter{
			function.StringParameter{Name: "ui_workflow", MarkdownDescription: "The editor's export, as JSON."},
			function.StringParameter{Name: "object_info", MarkdownDescription: "The node classes: an object_info document, as JSON."},
		},
		Return: function.StringReturn{},
	}
}

func (workflowFromUIFunction) Run(ctx context.Context, req function.RunRequest, resp *function.RunResponse) {
	var ui, objectInfo string
	resp.Error = function.ConcatFuncErrors(req.Arguments.Get(ctx, &ui, &objectInfo))
	if resp.Error != nil {
		return
	}
	defs, err := workflow.ParseClassDefs([]byte(objectInfo))
	if err != nil {
		resp.Error = function.NewArgumentFuncError(1, err.Error())
		return
	}
	api, err := defs.FromUI([]byte(ui))
	if err != nil {
		resp.Error = function.NewArgumentFuncError(0, err.Error())
		return
	}
	resp.Error = function.ConcatFuncErrors(resp.Result.Set(ctx, string(api)))
}
