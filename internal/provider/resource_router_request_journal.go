package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// journalKindRouter is svc_router_request's kind of journal entry.
const journalKindRouter = "svc_router_request"

// beginJournaled sets plan's idempotency key, once, before the first attempt (an unset key is
// "known after apply": Terraform 1.11 cannot carry a random plan-time value into apply), through
// the journal: the configured key, or the
// key of a request an earlier run sent for the same call (model, input, mode and configured key)
// and never got into state, or a new one, journaled before it leaves. The router answers a key
// it has seen from the run it started (a replay, never a second charge), so an adopted key is
// simply resent. A journal that cannot be used is an error in diags (ok false): nothing is sent.
func (r *routerRequestResource) beginJournaled(_ context.Context, plan *routerRequestModel, diags *diag.Diagnostics) (journaled, bool) {
	configured := ""
	if !plan.IdempotencyKey.IsUnknown() && !plan.IdempotencyKey.IsNull() {
		configured = plan.IdempotencyKey.ValueString()
	}
	digest := submissionDigest(journalKindRouter, plan.Model.ValueString(), plan.Input.ValueString(), plan.Mode.ValueString(), configured)
	sub, err := r.data.journal.begin(journalKindRouter, digest, configured)
	if err != nil {
		diags.AddError("Journal of submissions cannot be used", journalError(err))
		return sub, false
	}
	plan.IdempotencyKey = types.StringValue(sub.key)
	if sub.adopted {
		diags.AddWarning("Model request adopted from the journal",
			"Idempotency-Key "+sub.key+" was sent for this same call by an earlier apply that ended before saving it in "+
				"state. This apply sends it again, and the router answers from that run instead of calling the model twice.")
	}
	return sub, true
}

// routerIDInState reports whether the create's state holds a request id.
func routerIDInState(ctx context.Context, resp *resource.CreateResponse) bool {
	var id types.String
	if resp.State.Raw.IsNull() || resp.State.GetAttribute(ctx, path.Root("id"), &id).HasError() {
		return false
	}
	return id.ValueString() != ""
}
