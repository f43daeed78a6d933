package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
)

// jsonKeepEquivalentState plans the value in state when the configured JSON means the same
// (only whitespace, key order or number spelling differ). Terraform accepts a planned value
// that differs from the configuration only when it is the prior state's value and the two are
// equivalent, so the plan is then empty: nothing is replaced and nothing is sent. It must come
// before any RequiresReplace modifier, which then sees no change.
func jsonKeepEquivalentState() planmodifier.String { return jsonKeepEquivalentStateModifier{} }

type jsonKeepEquivalentStateModifier struct{}

func (jsonKeepEquivalentStateModifier) Description(context.Context) string {
	return "A JSON document that differs from state only in whitespace, key order or number spelling is no change."
}

func (m jsonKeepEquivalentStateModifier) MarkdownDescription(ctx context.Context) string {
	return m.Description(ctx)
}

func (jsonKeepEquivalentStateModifier) PlanModifyString(_ context.Context, req planmodifier.StringRequest, resp *planmodifier.StringResponse) {
	if jsonEquivalent(req.ConfigValue, req.StateValue) {
		resp.PlanValue = req.StateValue
	}
}
