package provider

import (
	"context"
	"errors"
	"slices"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// resumeWaitPlan reports whether this plan is an in-place update of a resource in state (not
// a create, a destroy or a replacement): the only kind of plan that can resume a wait.
func resumeWaitPlan(req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) bool {
	return !req.State.Raw.IsNull() && !req.Plan.Raw.IsNull() && len(resp.RequiresReplace) == 0
}

// readResumeWaitPlan reads the prior state and the plan of M when this plan is one that can
// resume a wait (resumeWaitPlan); ok is false when it is not, or when either could not be read.
func readResumeWaitPlan[M any](ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) (state, plan M, ok bool) {
	if !resumeWaitPlan(req, resp) {
		return state, plan, false
	}
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	return state, plan, !resp.Diagnostics.HasError()
}

// planRecordUnknown marks every service-record attribute in fields unknown, except those named
// in keep. An in-place update that waits for a running job or request plans this way so that
// Terraform shows "known after apply" and every resource that uses those values waits for the
// update instead of going on with what the service said while it ran.
func planRecordUnknown(ctx context.Context, plan *tfsdk.Plan, fields []computedField, keep ...string) diag.Diagnostics {
	var diags diag.Diagnostics
	for _, f := range fields {
		if slices.Contains(keep, f.name) {
			continue
		}
		v, err := unknownOf(ctx, f.attrType())
		if err != nil {
			diags.AddError("Planning the wait failed", err.Error())
			continue
		}
		diags.Append(plan.SetAttribute(ctx, path.Root(f.name), v)...)
	}
	return diags
}

func unknownOf(ctx context.Context, t attr.Type) (attr.Value, error) {
	return t.ValueFromTerraform(ctx, tftypes.NewValue(t.TerraformType(ctx), tftypes.UnknownValue))
}

// waitInterrupted reports whether a wait ended because Terraform was interrupted (Ctrl-C), not
// because the create timeout passed: Terraform cancels the operation's context when it stops.
func waitInterrupted(ctx context.Context, err error) bool {
	if errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	return errors.Is(err, context.Canceled) || errors.Is(ctx.Err(), context.Canceled)
}
