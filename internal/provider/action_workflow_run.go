package provider

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/action/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/action"
	"github.com/hashicorp/terraform-plugin-framework/action/schema"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/svc-org/terraform-provider-svc/internal/client"
)

var (
	_ action.Action               = (*workflowRunAction)(nil)
	_ action.ActionWithConfigure  = (*workflowRunAction)(nil)
	_ action.ActionWithModifyPlan = (*workflowRunAction)(nil)
)

// NewWorkflowRunAction returns the svc_workflow_run action.
func NewWorkflowRunAction() action.Action { return &workflowRunAction{} }

type workflowRunAction struct {
	data *providerData
}

type workflowRunModel struct {
	Workflow        jsonSemantic   `tfsdk:"workflow"`
	PartnerAPIKeyWO types.String   `tfsdk:"partner_api_key_wo"`
	OutputDir       types.String   `tfsdk:"output_dir"`
	Timeouts        timeouts.Value `tfsdk:"timeouts"`
}

func (a *workflowRunAction) Metadata(_ context.Context, req action.MetadataRequest, resp *action.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_workflow_run"
}

func (a *workflowRunAction) Schema(ctx context.Context, _ action.SchemaRequest, resp *action.SchemaResponse) {
	resp.Schema = schema.Schema{
		// The rest of what the action does is prose for its page (templates/actions/workflow_run.md.tmpl).
		MarkdownDescription: "Runs an API-format workflow once, as a v2 job, waits for it and reports its progress on the " +
			"terminal as it goes. With `output_dir`, every output is saved in a directory or an S3-compatible bucket, " +
			"each checked against the blake3 hash the service reports. **Every invocation is a new, billed run**, and " +
			"nothing of it is kept in state: use the `svc_job` resource when outputs should be in state.",
		Attributes: map[string]schema.Attribute{
			"workflow": schema.StringAttribute{
				Required:   true,
				CustomType: jsonSemanticType{},
				MarkdownDescription: "API-format workflow graph as JSON (node id to `{class_type, inputs}`), sent verbatim. A " +
					"UI-format export, a non-object or invalid JSON is rejected before anything is sent.",
				Validators: []validator.String{apiWorkflowValidator{}},
			},
			"partner_api_key_wo": schema.StringAttribute{
				Optional:  true,
				WriteOnly: true,
				MarkdownDescription: "API key for partner nodes, sent as `extra_data.api_key_svc_org`; overrides the " +
					"provider's `partner_api_key`. Write-only: an action's arguments cannot be marked sensitive and " +
					"`-invoke` prints them, so pass it through an ephemeral variable or resource.",
			},
			"output_dir": schema.StringAttribute{
				Optional: true,
				MarkdownDescription: "Where every output is saved, named as the service named it: a directory (created " +
					"if missing) or an S3-compatible bucket URL (`s3://bucket/prefix?region=...`, with `&endpoint=...&use_path_style=true` " +
					"for a service that is not AWS; each output the object `<prefix>/<name>`). Each output is verified " +
					"against the service's blake3 hash. A bucket is checked at plan. See " +
					"[Outputs in a directory or a bucket](#outputs-in-a-directory-or-a-bucket).",
			},
			"timeouts": timeouts.AttributesWithOpts(ctx, timeouts.Opts{InvokeDescription: "How long the whole invocation may take: submission, wait and downloads (a Go duration such as `30m`). Default: `30m`."}),
		},
	}
}

func (a *workflowRunAction) Configure(_ context.Context, req action.ConfigureRequest, resp *action.ConfigureResponse) {
	a.data = configureData(req.ProviderData, &resp.Diagnostics)
}

// ModifyPlan checks output_dir at plan, as svc_job_batch checks its own: a bucket URL that does
// not parse, a bucket that does not exist or that refuses the credentials stops the plan (of
// `-invoke`, or of the resources whose action_trigger would run it) before anything is applied
// or sent. An output_dir not known yet is checked when the action is invoked.
func (a *workflowRunAction) ModifyPlan(ctx context.Context, req action.ModifyPlanRequest, resp *action.ModifyPlanResponse) {
	var outputDir types.String
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("output_dir"), &outputDir)...)
	if resp.Diagnostics.HasError() || outputDir.IsUnknown() || outputDir.IsNull() {
		return
	}
	outputDirAtPlan(ctx, "output_dir", outputDir.ValueString(), false, &resp.Diagnostics)
}

// Invoke submits the workflow under a key drawn here, before the first attempt, waits for the
// job with the same engine as svc_job, and downloads its outputs when asked.
func (a *workflowRunAction) Invoke(ctx context.Context, req action.InvokeRequest, resp *action.InvokeResponse) {
	var m workflowRunModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() || !a.data.readyToInvoke("svc_workflow_run", &resp.Diagnostics) {
		return
	}
	limit, diags := m.Timeouts.Invoke(ctx, defaultJobCreateTimeout)
	if resp.Diagnostics.Append(diags...); resp.Diagnostics.HasError() {
		return
	}
	data := a.data.withSecrets(m.PartnerAPIKeyWO)
	ctx = data.logContext(ctx)
	waitCtx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	progress := newProgressLines(resp)
	start := time.Now()
	// Checked again here, as at plan: the bucket may be gone since (an apply of a saved plan).
	// A bucket that cannot take the outputs is said before the job runs, and nothing is sent.
	if _, ok := outputDirAtPlan(waitCtx, "output_dir", m.OutputDir.ValueString(), false, &resp.Diagnostics); !ok {
		return
	}

	// A run of an earlier invocation that died (its job never reported to anyone) is adopted
	// from the journal instead of running the workflow again.
	digest := submissionDigest(journalKindRun, m.Workflow.ValueString())
	sub, job, err := data.submitJobJournaled(waitCtx, journalKindRun, digest, "", func(key string) client.SubmitJobInput {
		return client.SubmitJobInput{
			Workflow:       json.RawMessage(m.Workflow.ValueString()),
			ExtraData:      data.partnerExtraData(m.PartnerAPIKeyWO, types.StringNull()),
			IdempotencyKey: key,
		}
	}, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	// An invocation that returns has reported its job (an action keeps no state): its entry is
	// done with.
	defer func() {
		if job != nil {
			sub.handed(ctx)
			return
		}
		sub.end(ctx, false, err)
	}()
	key := sub.key
	if err != nil {
		resp.Diagnostics.AddError("Workflow submission failed", data.redact(data.orNotSent(err,
			withSettingHint(describeRunSubmitError(err, key), err, familyService))))
		return
	}
	logInfo(ctx, "workflow run submitted", map[string]any{"job_id": job.ID, "idempotency_key": key, "request_id": job.RequestID})
	// Said at once: Terraform stops printing an action's messages when it is interrupted, and the
	// job then keeps running on the service.
	progress.say("job %s submitted (to stop it, invoke svc_job_cancel with id = %q)", job.ID, job.ID)
	progress.job(job)

	final, ok := data.waitForRun(ctx, waitCtx, job, m.Workflow, progress, limit, &resp.Diagnostics)
	if !ok {
		return
	}
	progress.end(final, time.Since(start))
	if final.Status != client.JobSucceeded {
		resp.Diagnostics.AddError(fmt.Sprintf("Job %s", final.Status), data.redact(describeUnsuccessfulRun(final)))
		return
	}
	if dir := m.OutputDir.ValueString(); dir != "" {
		data.saveOutputs(waitCtx, dir, final, progress, limit, &resp.Diagnostics)
	}
}

// journalKindRun is the svc_workflow_run action's kind of journal entry.
const journalKindRun = "svc_workflow_run"

// waitForRun waits for job as svc_job does, reporting each change of its state. A wait that ends
// before the job did (an interrupt, the invoke timeout, failing reads) is an error that prints
// the job's id, so that it can be cancelled: the job keeps running on the service.
func (d *providerData) waitForRun(ctx, waitCtx context.Context, job *client.Job, workflow jsonSemantic,
	progress *progressLines, limit time.Duration, diags *diag.Diagnostics,
) (*client.Job, bool) {
	opts := d.jobWaitOptions(ctx, job, workflow)
	logProgress := opts.OnUpdate
	opts.OnUpdate = func(j *client.Job) {
		logProgress(j)
		progress.job(j)
	}
	final, err := d.client.WaitJob(waitCtx, job, opts)
	if final == nil {
		final = job
	}
	if err == nil {
		return final, true
	}
	why := whyInvokeWaitEnded(waitCtx, err, limit)
	progress.say("job %s still %s: it keeps running on the service", final.ID, final.Status)
	diags.AddError("Workflow run did not finish", d.redact(fmt.Sprintf("%s while job %s was %s. The job keeps running on "+
		"the service (and is billed); nothing of it is in state. To stop it, invoke the svc_job_cancel action with "+
		"id = %q; to keep its outputs, import it as an svc_job (`terraform import <address> %s`).",
		why, final.ID, final.Status, final.ID, final.ID)))
	return final, false
}

// whyInvokeWaitEnded says why an action's wait for a job stopped before the job ended: its
// invoke timeout, an interrupt, or reads that kept failing.
func whyInvokeWaitEnded(ctx context.Context, err error, limit time.Duration) string {
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Sprintf("timeouts.invoke (%s) passed", limit)
	}
	return whyWaitEnded(ctx, err, limit, "Reading the job failed")
}

// describeRunSubmitError explains a failed submission of svc_workflow_run: nothing was kept,
// and an answer that was lost is never resent.
func describeRunSubmitError(err error, key string) string {
	var unknown *client.UnknownOutcomeError
	var refused *client.RefusedJobRecordError
	switch {
	case errors.As(err, &refused):
		return fmt.Sprintf("The service created job %s (Idempotency-Key %s), but the provider refused its answer and sent "+
			"nothing more: %v\n\nCheck that endpoint is the service itself. To stop the job, invoke svc_job_cancel with id = %q.",
			refused.JobID, key, refused.Cause, refused.JobID)
	case errors.As(err, &unknown):
		return fmt.Sprintf("The submission may have reached the service, but no definitive answer came back, so a job may "+
			"be running that the provider cannot name (the service has no job listing to look it up in).\n\n"+
			"Idempotency-Key: %s\nCause: %v\n\nThe provider did not resend it: that could run the workflow twice. "+
			"Invoking the action again submits the workflow again, under a new key.", key, unknown.Cause)
	}
	return describeSubmitError(err, key)
}

// describeUnsuccessfulRun explains a run that ended failed, canceled or expired.
func describeUnsuccessfulRun(job *client.Job) string {
	msg := fmt.Sprintf("Job %s ended %s.", job.ID, job.Status)
	if e := job.Error; e != nil {
		msg += "\n\n" + jobErrorLine(e)
		if e.Traceback != nil && *e.Traceback != "" {
			msg += fmt.Sprintf("\n\nTraceback (last lines):\n%s", lastLines(*e.Traceback, 6))
		}
	}
	return msg + "\n\nNothing is kept: invoking the action again runs the workflow again."
}

// readyToInvoke reports whether the provider is configured with settings known now, as an
// action needs them: an action runs during apply, after the provider was configured.
func (d *providerData) readyToInvoke(name string, diags *diag.Diagnostics) bool {
	switch {
	case d == nil:
		diags.AddError("Provider not configured", fmt.Sprintf("%s was invoked before the provider was configured. This is a bug in the provider.", name))
		return false
	case d.configUnknown:
		diags.AddError("Provider settings unknown", fmt.Sprintf("%s needs the provider's settings, and some are not "+
			"known yet (they come from a resource not yet created). Invoke it once they are known.", name))
		return false
	}
	return true
}
