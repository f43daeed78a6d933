package provider

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/hashicorp/terraform-plugin-framework/schema/validator"

	"github.com/svc-org/terraform-provider-svc/internal/workflow"
)

// apiWorkflowValidator rejects, at plan time, anything the service would refuse as a workflow
// before running it: invalid JSON, a non-object, a UI-format export (saying how to convert it),
// nodes without class_type.
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
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid workflow", describeWorkflowError(err))
	}
}

// uiConversionHint tells a user holding an editor (UI-format) export how to run it: the provider
// converts it, with the service's node classes or offline.
const uiConversionHint = "To run an editor export as it is, convert it with this provider: the data source " +
	"`svc_workflow_from_ui` (`ui_workflow = file(\"workflow.json\")`, then use its `api_workflow`), or, offline " +
	"and at plan time, the function `provider::svc::workflow_from_ui(file(\"workflow.json\"), data.svc_object_info.all.json)`."

// describeWorkflowError is a workflow parse error, with the way to convert a UI-format export.
func describeWorkflowError(err error) string {
	if errors.Is(err, workflow.ErrUIFormat) {
		return err.Error() + ".\n\n" + uiConversionHint
	}
	return err.Error()
}
