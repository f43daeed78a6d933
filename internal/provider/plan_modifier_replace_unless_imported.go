package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
)

// replaceUnlessImported replaces the resource when what it submitted (a workflow, a model input)
// really changes, but not when state holds no value for it: after import the service's record
// cannot tell what was submitted, and adopting the configured value must not run it again.
// Formatting-only changes of JSON never reach it: the semantic JSON type keeps them out of the plan.
func replaceUnlessImported(description string) planmodifier.String {
	return stringplanmodifier.RequiresReplaceIf(stateHoldsValue, description, description)
}

func stateHoldsValue(_ context.Context, req planmodifier.StringRequest, resp *stringplanmodifier.RequiresReplaceIfFuncResponse) {
	resp.RequiresReplace = !req.StateValue.IsNull()
}
