package provider

import (
	"context"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// A resumed wait for a prompt plans every attribute the wait may change unknown, outputs_omitted
// included: a wait that connects late sees another list of outputs than the one in state, so a
// value kept from state would not be the one applied.
func TestPlanPromptResume_plansTheWholeRecordUnknown(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var sresp resource.SchemaResponse
	NewPromptResource().Schema(ctx, resource.SchemaRequest{}, &sresp)
	state := tfsdk.State{Schema: sresp.Schema, Raw: tftypes.NewValue(sresp.Schema.Type().TerraformType(ctx), nil)}
	for name, v := range map[string]any{
		"id": "p-1", "status": "running", "wait_for_completion": true, "outputs_omitted": int64(3),
		"outputs_complete": false, "interrupted": false,
	} {
		if d := state.SetAttribute(ctx, path.Root(name), v); d.HasError() {
			t.Fatalf("state %s: %v", name, d)
		}
	}
	req := resource.ModifyPlanRequest{State: state, Plan: tfsdk.Plan(state)}
	resp := resource.ModifyPlanResponse{Plan: tfsdk.Plan(state)}
	planPromptResume(ctx, req, &resp)
	if resp.Diagnostics.HasError() {
		t.Fatalf("diagnostics: %v", resp.Diagnostics)
	}
	for _, name := range []string{"status", "outputs", "outputs_omitted", "outputs_complete", "error", "interrupted"} {
		raw, err := resp.Plan.Raw.ApplyTerraform5AttributePathStep(tftypes.AttributeName(name))
		if err != nil {
			t.Fatalf("plan %s: %v", name, err)
		}
		if raw.(tftypes.Value).IsKnown() {
			t.Errorf("%s planned %v, want unknown", name, raw)
		}
	}
}

// promptRecordAttrTypes names every attribute of promptRecordAttributes, in the schema's types.
func TestPromptRecordAttrTypes_matchTheSchema(t *testing.T) {
	t.Parallel()
	attrs := promptRecordAttributes()
	if len(attrs) != len(promptRecordAttrTypes) {
		t.Fatalf("%d record attributes, %d types", len(attrs), len(promptRecordAttrTypes))
	}
	for name, a := range attrs {
		if got, want := promptRecordAttrTypes[name], a.GetType(); got == nil || !got.Equal(want) {
			t.Errorf("%s: type %v, schema %v", name, got, want)
		}
	}
}
