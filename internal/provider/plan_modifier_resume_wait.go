package provider

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
)

// resumeWaitPlan reports whether this plan is an in-place update of a resource in state (not
// a create, a destroy or a replacement): the only kind of plan that can resume a wait. replacing
// names the attributes whose change replaces the resource. The framework runs a resource's
// ModifyPlan before it adds the attribute plan modifiers' replacements to the response, so they
// are told here from the values: each of these attributes keeps the state's value in the plan
// unless it really changes (a JSON one through its formatting too), and replaces the resource
// when state holds a value for it and the plan another.
func resumeWaitPlan(req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse, replacing ...string) bool {
	if req.State.Raw.IsNull() || req.Plan.Raw.IsNull() || len(resp.RequiresReplace) > 0 {
		return false
	}
	held, okState := objectAttrs(req.State.Raw)
	planned, okPlan := objectAttrs(req.Plan.Raw)
	if !okState || !okPlan {
		return false
	}
	for _, name := range replacing {
		if !held[name].IsNull() && !held[name].Equal(planned[name]) {
			return false
		}
	}
	return true
}

// readResumeWaitPlan reads the prior state and the plan of M when this plan is one that can
// resume a wait (resumeWaitPlan); ok is false when it is not, or when either could not be read.
func readResumeWaitPlan[M any](ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse, replacing ...string) (state, plan M, ok bool) {
	if !resumeWaitPlan(req, resp, replacing...) {
		return state, plan, false
	}
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	return state, plan, !resp.Diagnostics.HasError()
}

// planRecordUnknown marks every service-record attribute in record (name to type) unknown,
// except those named in keep. An in-place update that waits for a running job or request plans
// this way so that Terraform shows "known after apply" and every resource that uses those values
// waits for the update instead of going on with what the service said while it ran.
func planRecordUnknown(ctx context.Context, plan *tfsdk.Plan, record map[string]attr.Type, keep ...string) diag.Diagnostics {
	var diags diag.Diagnostics
	for name, t := range record {
		if slices.Contains(keep, name) {
			continue
		}
		v, err := unknownOf(t)
		if err != nil {
			diags.AddError("Planning the wait failed", err.Error())
			continue
		}
		diags.Append(plan.SetAttribute(ctx, path.Root(name), v)...)
	}
	return diags
}

// unknownOf is the unknown value of t, one of the types a service record uses.
func unknownOf(t attr.Type) (attr.Value, error) {
	switch t := t.(type) {
	case basetypes.StringType:
		return types.StringUnknown(), nil
	case basetypes.Int64Type:
		return types.Int64Unknown(), nil
	case basetypes.Float64Type:
		return types.Float64Unknown(), nil
	case basetypes.BoolType:
		return types.BoolUnknown(), nil
	case basetypes.ListType:
		return types.ListUnknown(t.ElemType), nil
	case basetypes.MapType:
		return types.MapUnknown(t.ElemType), nil
	case basetypes.ObjectType:
		return types.ObjectUnknown(t.AttrTypes), nil
	}
	return nil, fmt.Errorf("no unknown value of %T", t)
}

// waitInterrupted reports whether a wait ended because Terraform was interrupted (Ctrl-C), not
// because the create timeout passed: Terraform cancels the operation's context when it stops.
func waitInterrupted(ctx context.Context, err error) bool {
	if errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	return errors.Is(err, context.Canceled) || errors.Is(ctx.Err(), context.Canceled)
}
