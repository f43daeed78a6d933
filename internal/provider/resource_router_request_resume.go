package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/svc-org/terraform-provider-svc/internal/client"
)

// planRouterResume plans an in-place update that waits for the request in state when it is not
// COMPLETED and wait_for_completion is true (after an interrupted apply, after `terraform
// untaint` following a create timeout, after an import, or after turning the wait on). A
// queued request is followed by its id; a synchronous call is resent with the same key and
// input, which the router answers from the original run. Nothing new runs.
func planRouterResume(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	state, plan, ok := readResumeWaitPlan[routerRequestModel](ctx, req, resp, "model", "input", "mode", "idempotency_key")
	if !ok || !plan.WaitForCompletion.ValueBool() || !routerStillRunning(state) {
		return
	}
	if unansweredQueued(state) {
		// The resend's answer names the request and its links.
		resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("id"), types.StringUnknown())...)
		resp.Diagnostics.Append(planRecordUnknown(ctx, &resp.Plan, routerRecordAttrTypes)...)
	} else {
		resp.Diagnostics.Append(planRecordUnknown(ctx, &resp.Plan, routerRecordAttrTypes, "status_url", "response_url", "cancel_url")...)
	}
	resp.Diagnostics.AddWarning("Model request still running: this apply waits for it",
		fmt.Sprintf("Request %s of %s was %s when last read. Applying does not start a new run: svc_router_request is "+
			"updated in place, waiting for this same request (Idempotency-Key %s, up to timeouts.create) and collecting "+
			"its result; resources that use it wait for it.",
			state.ID.ValueString(), state.Model.ValueString(), state.Status.ValueString(), state.IdempotencyKey.ValueString()))
}

// routerStillRunning reports whether state holds a request the router accepted and that was not
// yet seen COMPLETED.
func routerStillRunning(state routerRequestModel) bool {
	return stillInFlight(state.ID, state.Status, func(s string) bool { return s == client.RouterCompleted })
}

// resumeRouterWait waits, in an update, for the request in state and collects its result.
func (r *routerRequestResource) resumeRouterWait(ctx context.Context, plan *routerRequestModel, state routerRequestModel, diags *diag.Diagnostics) {
	plan.routerRecordModel = state.routerRecordModel // what is known, should the wait not get further
	w, ok := r.data.startResumedWait(ctx, plan.Timeouts, defaultRouterCreateTimeout, diags)
	if !ok {
		return
	}
	defer w.cancel()
	ctx, waitCtx, limit := w.ctx, w.waitCtx, w.limit
	logInfo(ctx, "resuming the wait for a model request already sent", map[string]any{"request_id": state.ID.ValueString(), "status": state.Status.ValueString()})
	if state.Mode.ValueString() == modeSync {
		r.resumeSync(waitCtx, plan, diags)
		return
	}
	if unansweredQueued(state) {
		r.resendQueued(ctx, waitCtx, plan, limit, diags)
		return
	}
	held, err := state.heldRequest(r.data.client)
	if err != nil {
		diags.AddError("Resuming the wait failed", r.data.redact(err.Error()))
		return
	}
	r.awaitQueued(ctx, waitCtx, plan, held, limit, diags)
}

// resendQueued resends a queued request kept by its key alone (queuedInterrupted), under that
// key, and waits for the request the router names.
func (r *routerRequestResource) resendQueued(ctx, waitCtx context.Context, plan *routerRequestModel, limit time.Duration, diags *diag.Diagnostics) {
	in := client.InvokeInput{Model: plan.Model.ValueString(), Input: json.RawMessage(plan.Input.ValueString()), IdempotencyKey: plan.IdempotencyKey.ValueString()}
	q, err := r.data.client.SubmitModelRequest(waitCtx, in)
	if err != nil && q == nil {
		if waitInterrupted(waitCtx, err) {
			queuedInterrupted(plan, in)
			diags.AddWarning("Model request unanswered: the next apply waits for it, resent under its key", describeRouterInterrupted(plan.ID.ValueString(), plan.Status.ValueString()))
			return
		}
		queuedInterrupted(plan, in) // still kept by its key
		diags.AddError(errorSummary(err, familyRouter, "Model request failed"), r.data.redact(r.data.orNotSent(err, withSettingHint(describeRouterCallError(err, in), err, familyRouter))))
		return
	}
	plan.ID = types.StringValue(q.RequestID)
	plan.setQueue(q)
	plan.Replayed = types.BoolValue(q.Replayed)
	if err != nil {
		diags.AddError("Model request accepted, but its answer cannot be used", r.data.redact(fmt.Sprintf("The router accepted request %s, but %v", q.RequestID, err)))
		return
	}
	r.awaitQueued(ctx, waitCtx, plan, q, limit, diags)
}

// awaitQueued waits for the queued request held and collects its result.
func (r *routerRequestResource) awaitQueued(ctx, waitCtx context.Context, plan *routerRequestModel, held *client.QueueRequest, limit time.Duration, diags *diag.Diagnostics) {
	final, res, err := r.data.client.AwaitModelResult(waitCtx, held, client.RouterWaitOptions{OnUpdate: newRouterProgressLog(ctx, held).router})
	plan.setQueue(final)
	switch {
	case err != nil && waitInterrupted(waitCtx, err):
		diags.AddWarning("Model request still running: the next apply waits for it", describeRouterInterrupted(final.RequestID, final.Status))
	case err != nil:
		diags.AddError("Model request did not finish", r.data.redact(fmt.Sprintf("%s while request %s was %s. It stays in "+
			"state with that status; the next `terraform apply` starts no new run: it waits for this same request again "+
			"(raise timeouts.create to wait longer).", whyWaitEnded(waitCtx, err, limit, "Reading the request failed"), final.RequestID, final.Status)))
	case final.Failed():
		diags.AddError("Model request failed", fmt.Sprintf("Request %s completed with error_type %q. It is saved in state "+
			"with that outcome; to call the model again, run `terraform apply -replace=<address>`.", final.RequestID, final.ErrorType))
	default:
		r.keepResult(ctx, plan, res, diags)
	}
}

// resumeSync resends an interrupted synchronous call with the same key and input: the router
// answers from the key's record (the original run), so nothing runs twice.
func (r *routerRequestResource) resumeSync(ctx context.Context, plan *routerRequestModel, diags *diag.Diagnostics) {
	in := client.InvokeInput{Model: plan.Model.ValueString(), Input: json.RawMessage(plan.Input.ValueString()), IdempotencyKey: plan.IdempotencyKey.ValueString()}
	res, err := r.data.client.InvokeModel(ctx, in)
	if err != nil {
		if waitInterrupted(ctx, err) {
			diags.AddWarning("Model call still running: the next apply waits for it", describeRouterInterrupted(plan.ID.ValueString(), plan.Status.ValueString()))
			return
		}
		diags.AddError("Model call failed", r.describeInvokeFailure(err, in))
		return
	}
	// The id stays the one planned ("sync-<key>"): an update cannot change it.
	plan.Status = types.StringValue(client.RouterCompleted)
	plan.Replayed = types.BoolValue(res.Replayed)
	r.keepResult(ctx, plan, res, diags)
}

// queuedInterrupted saves a queued request whose submission a stop left unanswered in state
// (untainted) under a placeholder id naming its key, so that the next apply resends it with
// the same key and input (the router replays the request it accepted, or queues it now) and
// waits for it, instead of submitting it again under a new key.
func queuedInterrupted(plan *routerRequestModel, in client.InvokeInput) {
	plan.ID = types.StringValue(unansweredRouterIDPrefix + in.IdempotencyKey)
	plan.Status = types.StringValue(client.RouterInQueue)
	plan.Replayed = types.BoolValue(false)
}

// unansweredRouterIDPrefix starts the id of a queued request kept by its key alone.
const unansweredRouterIDPrefix = "unanswered-"

// unansweredQueued reports whether state holds a queued request kept by its key alone.
func unansweredQueued(state routerRequestModel) bool {
	return state.Mode.ValueString() != modeSync && strings.HasPrefix(state.ID.ValueString(), unansweredRouterIDPrefix)
}

// syncInterrupted saves an interrupted synchronous call in state (untainted) so that the next
// apply resends it with the same key and input and collects the original run, instead of
// calling the model again under a new key.
func syncInterrupted(plan *routerRequestModel, in client.InvokeInput) {
	plan.ID = types.StringValue("sync-" + in.IdempotencyKey)
	plan.Status = types.StringValue(client.RouterInProgress)
	plan.Replayed = types.BoolValue(false)
}

func describeRouterInterrupted(id, status string) string {
	return fmt.Sprintf("Terraform was interrupted while request %s was %s. The router keeps running it; it is saved in "+
		"state (not tainted) with its idempotency key. The next `terraform apply` starts no new run: it waits for this "+
		"same request and collects its result. To cancel it instead, run `terraform destroy -target=<address>`.", id, status)
}
