package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/function"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/svc-org/terraform-provider-svc/internal/workflow"
)

var _ function.Function = workflowNodesFunction{}

// NewWorkflowNodesFunction returns provider::svc::workflow_nodes.
func NewWorkflowNodesFunction() function.Function { return workflowNodesFunction{} }

type workflowNodesFunction struct{}

func (workflowNodesFunction) Metadata(_ context.Context, _ function.MetadataRequest, resp *function.MetadataResponse) {
	resp.Name = "workflow_nodes"
}

func (workflowNodesFunction) Definition(_ context.Context, _ function.DefinitionRequest, resp *function.DefinitionResponse) {
	resp.Definition = function.Definition{
		Summary:             "Node ids of a class in an API-format workflow",
		MarkdownDescription: "Returns the ids of the workflow's nodes whose `class_type` is `class_type`, sorted; an empty list when there are none.",
		Parameters: []function.Parameter{
			function.StringParameter{Name: "workflow", MarkdownDescription: "API-format workflow JSON."},
			function.StringParameter{Name: "class_type", MarkdownDescription: "Node class, e.g. `SaveImage`."},
		},
		Return: function.ListReturn{ElementType: types.StringType},
	}
}

func (workflowNodesFunction) Run(ctx context.Context, req function.RunRequest, resp *function.RunResponse) {
	var wf, class string
	resp.Error = function.ConcatFuncErrors(req.Arguments.Get(ctx, &wf, &class))
	if resp.Error != nil {
		return
	}
	g, err := workflow.Parse([]byte(wf))
	if err != nil {
		resp.Error = function.NewArgumentFuncError(0, err.Error())
		return
	}
	ids := g.NodeIDs(class)
	if ids == nil {
		ids = []string{}
	}
	resp.Error = function.ConcatFuncErrors(resp.Result.Set(ctx, ids))
}
