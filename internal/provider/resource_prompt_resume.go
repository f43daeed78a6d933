package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"

	"github.com/svc-org/terraform-provider-svc/internal/client"
)

// planPromptResume plans an in-place update that waits for the prompt in state when its last
// known status is not terminal and wait_for_completion is true (after an interrupted apply,
// after `terraform untaint` following a create timeout, after an import, or after turning the
// wait on). The v1 interface has no idempotency key, so a prompt is never submitted again: it
// is followed by its id.
func planPromptResume(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	state, plan, ok := readResumeWaitPlan[promptModel](ctx, req, resp, "workflow")
	if !ok || !plan.WaitForCompletion.ValueBool() || !promptStillRunning(state) {
		return
	}
	resp.Diagnostics.Append(planRecordUnknown(ctx, &resp.Plan, promptRecordAttrTypes)...)
	resp.Diagnostics.AddWarning("Prompt still running: this apply waits for it",
		fmt.Sprintf("Prompt %s was %s when last read. Applying does not submit it again: svc_prompt is updated in place, "+
			"waiting for this same prompt (up to timeouts.create); resources that use it wait for it. Outputs the prompt "+
			"reported before this apply connected are not seen again (the v1 socket does not replay), so "+
			"outputs_complete may be false.", state.ID.ValueString(), state.Status.ValueString()))
}

// promptStillRunning reports whether state holds a prompt whose last read status is known and
// not terminal. A null status (an engine without the status route) cannot be followed to its
// end, so it is not resumed.
func promptStillRunning(state promptModel) bool {
	return stillInFlight(state.ID, state.Status, client.PromptTerminal)
}

// resumePromptWait waits, in an update, for the prompt in state, as Create does after submitting.
func (r *promptResource) resumePromptWait(ctx context.Context, plan *promptModel, state promptModel, diags *diag.Diagnostics) {
	plan.Status, plan.Outputs, plan.OutputsOmitted, plan.OutputsComplete, plan.Error, plan.Interrupted =
		state.Status, state.Outputs, state.OutputsOmitted, state.OutputsComplete, state.Error, state.Interrupted
	w, ok := r.data.startResumedWait(ctx, plan.Timeouts, defaultPromptCreateTimeout, diags)
	if !ok {
		return
	}
	defer w.cancel()
	ctx, waitCtx, limit := w.ctx, w.waitCtx, w.limit
	id := state.ID.ValueString()
	logInfo(ctx, "resuming the wait for a prompt already submitted", map[string]any{"prompt_id": id, "status": state.Status.ValueString()})
	sock := r.data.dialPromptSocket(ctx, waitCtx, "socket unavailable; following the prompt by status polling only")
	defer sock.Close()
	res, waitErr := r.data.followPrompt(ctx, waitCtx, id, plan.Workflow.ValueString(), sock)
	res.OutputsComplete = false // what the socket sent before this wait connected is not seen again
	r.setResult(ctx, plan, res, diags)
	switch {
	case waitErr != nil && waitInterrupted(waitCtx, waitErr):
		diags.AddWarning("Prompt still running: the next apply waits for it", describePromptInterrupted(id, res.Status))
	case waitErr != nil:
		diags.AddError("Prompt did not finish", r.data.redact(fmt.Sprintf("%s while prompt %s was %s. It stays in state; "+
			"the next `terraform apply` submits nothing: it waits for this same prompt again (raise timeouts.create to wait "+
			"longer).", whyWaitEnded(waitCtx, waitErr, limit, "Following the prompt failed"), id, res.Status)))
	case !res.Succeeded():
		diags.AddError(fmt.Sprintf("Prompt %s", res.Status), fmt.Sprintf("Prompt %s ended %s. It is saved in state with "+
			"that status; to run the workflow again, run `terraform apply -replace=<address>`.", id, res.Status))
	}
}

func describePromptInterrupted(id, status string) string {
	if status == "" {
		status = "in flight"
	}
	return fmt.Sprintf("Terraform was interrupted while prompt %s was %s. The prompt keeps running on the service; it is "+
		"saved in state (not tainted). The next `terraform apply` submits nothing: it follows this same prompt by its id "+
		"until it ends. (The v1 socket does not replay, so outputs reported meanwhile are missed and outputs_complete "+
		"will be false.)", id, status)
}
