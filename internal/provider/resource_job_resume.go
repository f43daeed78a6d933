package provider

import (
	"context"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/svc-org/terraform-provider-svc/internal/client"
)

// planJobResume plans an in-place update that waits for the job in state when it is not
// terminal and wait_for_completion is true: after an interrupted apply, after `terraform
// untaint` following a create timeout, after importing a running job, or after turning
// wait_for_completion on. Nothing is submitted; the record is planned unknown so that resources
// using the outputs wait for the update.
func planJobResume(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if !resumeWaitPlan(req, resp, jobAttrWorkflow, jobAttrIdempotencyKey) {
		return
	}
	// Only three values decide, read as they are: a batch's plan converts no record into a model.
	planned, okPlan := decodeJob(req.Plan.Raw)
	held, okState := decodeJob(req.State.Raw)
	if !okPlan || !okState {
		return
	}
	if held.unanswered() {
		planned.ID = types.StringUnknown() // the resend's answer names the job
		planned.jobStateRecord = unknownStateRecord()
		savePlannedJob(&resp.Plan, &planned, &resp.Diagnostics)
		resp.Diagnostics.AddWarning("Job submission unanswered: this apply resends it",
			fmt.Sprintf("An earlier apply stopped before the service answered the submission under Idempotency-Key %s. "+
				"Applying resends the same request under the same key: if the first attempt never arrived, the job runs "+
				"now; if it did, the service refuses the used key and nothing runs twice.", held.IdempotencyKey.ValueString()))
		return
	}
	id, status := held.ID.ValueString(), held.Status.ValueString()
	if !planned.WaitForCompletion.ValueBool() || !jobInFlight(id, status) {
		return
	}
	planned.jobStateRecord = unknownStateRecord()
	savePlannedJob(&resp.Plan, &planned, &resp.Diagnostics)
	resp.Diagnostics.AddWarning("Job still running: this apply waits for it",
		fmt.Sprintf("Job %s is %s on the service. Applying does not submit anything: svc_job is updated in place, "+
			"waiting for this same job (up to timeouts.create) and filling in its outputs; resources that use them "+
			"wait for it.", id, status))
}

// jobInFlight reports whether a job id is held whose last known status is not terminal.
func jobInFlight(id, status string) bool {
	return stillInFlight(types.StringValue(id), types.StringValue(status), client.JobTerminal)
}

// resumeJobWait waits, in an update, for the job in state (id and status held):
// re-read it, then wait as Create does. values are the new state's: the plan's, with the record
// state holds, which is what is known should the wait not get further; the record the wait
// ends with replaces it. state is set on every way out.
func (r *jobResource) resumeJobWait(ctx context.Context, state *tfsdk.State, values jobModel, held *client.Job, diags *diag.Diagnostics) {
	if !saveJob(state, &values, diags) {
		return
	}
	w, ok := r.data.startResumedWait(ctx, values.Timeouts, defaultJobCreateTimeout, diags)
	if !ok {
		return
	}
	defer w.cancel()
	ctx, waitCtx, limit := w.ctx, w.waitCtx, w.limit
	id := held.ID
	logInfo(ctx, "resuming the wait for a job already submitted", map[string]any{"job_id": id, "status": held.Status})
	job, err := r.data.client.GetJobRidingOut(waitCtx, id)
	if err != nil {
		diags.AddError("Reading job failed", r.data.redact(fmt.Sprintf("Job %s could not be read to resume waiting for it: %v\n\n"+
			"Nothing was submitted; the next apply tries again.", id, err)))
		return
	}
	final, waitErr := r.data.client.WaitJob(waitCtx, job, r.data.jobWaitOptions(ctx, job, newJSONSemanticValue(values.Workflow.ValueString())))
	if final == nil {
		final = job
	}
	omitted := values.setRecord(final, diags)
	saveJob(state, &values, diags)
	warnOmittedOutputs(diags, int64(omitted), id)
	r.data.reportJobWaitEnd(ctx, diags, final, waitErr, limit, false)
}

// jobWaitOptions are how job, of workflow, is waited for, submitted now or resumed: progress
// logged (from the record the wait starts from), and the poll paced by what this provider has
// seen of jobs of the same shape.
func (d *providerData) jobWaitOptions(ctx context.Context, job *client.Job, workflow jsonSemantic) client.WaitOptions {
	return client.WaitOptions{
		OnUpdate:  newJobProgressLog(ctx, job).job,
		Durations: d.durations, Shape: client.WorkflowShape([]byte(workflow.ValueString())),
	}
}

// reportJobWaitEnd turns the end of a wait into diagnostics. An interrupt (Ctrl-C) is a
// warning: the job keeps running, state keeps it untainted with the status it had, and the
// next apply waits for it. A timeout is an error: in a create it taints the resource, so that
// nothing using the outputs goes on. inCreate says which operation this is, for the advice.
func (d *providerData) reportJobWaitEnd(ctx context.Context, diags *diag.Diagnostics, final *client.Job, waitErr error, limit time.Duration, inCreate bool) {
	switch {
	case waitErr != nil && waitInterrupted(ctx, waitErr):
		diags.AddWarning("Job still running: the next apply waits for it",
			fmt.Sprintf("Terraform was interrupted while job %s was %s. The job keeps running on the service; it is "+
				"saved in state (not tainted) with that status. The next `terraform apply` submits nothing: it waits for "+
				"this same job and fills in its outputs. To stop the job instead, run `terraform destroy -target=<address>`.",
				final.ID, final.Status))
	case waitErr != nil:
		diags.AddError("Job did not finish", d.redact(describeWaitError(ctx, waitErr, final, limit, inCreate)))
	case final.Status != client.JobSucceeded:
		diags.AddError(fmt.Sprintf("Job %s", final.Status), d.redact(describeUnsuccessfulJob(final, inCreate)))
	}
}

// unanswered reports whether state holds a submission that may have reached the service
// without its answer naming a job: a key and no id (keepUnanswered).
func (m *jobModel) unanswered() bool {
	return m.ID.ValueString() == "" && m.IdempotencyKey.ValueString() != ""
}

// resendUnanswered is the update of a submission held by its key alone: the same request is
// resent under that key, and waited for, as Create does.
func (r *jobResource) resendUnanswered(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse, held jobModel) {
	in, diags := readJobCreateInput(ctx, req.Plan, req.Config)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	in.key = held.IdempotencyKey.ValueString()
	logInfo(ctx, "resending a submission left unanswered", map[string]any{"idempotency_key": in.key})
	resp.State.Raw = req.State.Raw // what is known should the resend not get an answer
	r.submitAndWait(ctx, in, &resp.State, &resp.Diagnostics)
	if job, ok := decodeJob(resp.State.Raw); ok {
		setHeldJobIdentity(resp.Identity, &job)
	}
}
