package provider

import (
	"context"
	"encoding/json"

	"github.com/hashicorp/terraform-plugin-framework/schema/validator"

	"github.com/svc-org/terraform-provider-svc/internal/workflow"
)

// apiWorkflowValidator rejects, at plan time, anything the service would refuse as a workflow
// before running it: invalid JSON, a non-object, a UI-format export, nodes without class_type.
type apiWorkflowValidator struct{}

func (apiWorkflowValidator) Description(context.Context) string {
	return "must be an API-format workflow: a JSON object of node id to {class_type, inputs}"
}

func (v apiWorkflowValidator) MarkdownDescription(ctx context.Context) string {
	return v.Description(ctx)
}

func (apiWorkflowValidator) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() || !json.Valid([]byte(req.ConfigValue.ValueString())) {
		return // invalid JSON is reported by the attribute's type, with its line and column
	}
	if _, err := workflow.Parse([]byte(req.ConfigValue.ValueString())); err != nil {
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid workflow", err.Error())
	}
}
