package provider

import (
	"context"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/action/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/action"
	"github.com/hashicorp/terraform-plugin-framework/action/schema"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/svc-org/terraform-provider-svc/internal/client"
)

var (
	_ action.Action              = (*jobCancelAction)(nil)
	_ action.ActionWithConfigure = (*jobCancelAction)(nil)
)

// NewJobCancelAction returns the svc_job_cancel action.
func NewJobCancelAction() action.Action { return &jobCancelAction{} }

type jobCancelAction struct {
	data *providerData
}

type jobCancelModel struct {
	ID       types.String   `tfsdk:"id"`
	Wait     types.Bool     `tfsdk:"wait"`
	Timeouts timeouts.Value `tfsdk:"timeouts"`
}

func (a *jobCancelAction) Metadata(_ context.Context, req action.MetadataRequest, resp *action.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_job_cancel"
}

func (a *jobCancelAction) Schema(ctx context.Context, _ action.SchemaRequest, resp *action.SchemaResponse) {
	resp.Schema = schema.Schema{
		// The rest of svc_job_cancel's description is prose for its page:
		// templates/actions/job_cancel.md.tmpl.
		MarkdownDescription: "Cancels a v2 job by its id, through the cancel link of the job's own record, and (with " +
			"`wait`) waits until it has stopped, reporting each change of its state on the terminal. Any job can be " +
			"cancelled this way: one an `svc_workflow_run` left running after an interrupt, or one an `svc_job` manages " +
			"(its next refresh sees it `canceled`).",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{
				Required:            true,
				Validators:          []validator.String{jobIDValidator{}},
				MarkdownDescription: "Id of the job to cancel (a UUID), as `svc_job.<name>.id` or the id an interrupted `svc_workflow_run` printed.",
			},
			"wait": schema.BoolAttribute{
				Optional: true,
				MarkdownDescription: "Wait until the job has reached a terminal status (`canceled`, or the one it reached " +
					"first). When `false`, the invocation ends once the service has taken the cancel request. Default: `true`.",
			},
			"timeouts": timeouts.AttributesWithOpts(ctx, timeouts.Opts{InvokeDescription: "How long the cancel and " +
				"the wait may take (a Go duration such as `5m`). Default: `10m`."}),
		},
	}
}

func (a *jobCancelAction) Configure(_ context.Context, req action.ConfigureRequest, resp *action.ConfigureResponse) {
	a.data = configureData(req.ProviderData, &resp.Diagnostics)
}

func (a *jobCancelAction) Invoke(ctx context.Context, req action.InvokeRequest, resp *action.InvokeResponse) {
	var m jobCancelModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() || !a.data.readyToInvoke("svc_job_cancel", &resp.Diagnostics) {
		return
	}
	limit, diags := m.Timeouts.Invoke(ctx, defaultJobDeleteTimeout)
	if resp.Diagnostics.Append(diags...); resp.Diagnostics.HasError() {
		return
	}
	ctx = a.data.logContext(ctx)
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	progress := newProgressLines(resp)
	start := time.Now()
	id := m.ID.ValueString()

	job, ok := a.data.jobToCancel(ctx, id, &resp.Diagnostics)
	if !ok {
		return
	}
	if job.Terminal() {
		progress.say("job %s already ended %s: nothing to cancel", id, job.Status)
		return
	}
	job, ok = a.data.requestCancel(ctx, job, progress, &resp.Diagnostics)
	if !ok {
		return
	}
	if !job.Terminal() {
		if !m.Wait.IsNull() && !m.Wait.ValueBool() {
			return
		}
		logProgress := newJobProgressLog(ctx, job).job
		opts := client.WaitOptions{OnUpdate: func(j *client.Job) { logProgress(j); progress.job(j) }}
		final, err := a.data.client.WaitJob(ctx, job, opts)
		if err != nil {
			if final == nil {
				final = job
			}
			resp.Diagnostics.AddError("Job did not stop", a.data.redact(fmt.Sprintf("The cancel of job %s was requested, but "+
				"the wait for it to stop ended: %s, while the job was %s.", id, whyInvokeWaitEnded(ctx, err, limit), final.Status)))
			return
		}
		job = final
	}
	progress.end(job, time.Since(start))
	if job.Status != client.JobCanceled {
		resp.Diagnostics.AddWarning("Job ended before the cancel took effect",
			fmt.Sprintf("Job %s ended %s: it finished before the service acted on the cancel request.", id, job.Status))
	}
}

// jobToCancel reads the job: its record holds the cancel link to follow. An id the service does
// not know is an error naming it.
func (d *providerData) jobToCancel(ctx context.Context, id string, diags *diag.Diagnostics) (*client.Job, bool) {
	job, err := d.client.GetJob(ctx, id)
	switch {
	case client.Gone(err):
		diags.AddError("Job not found", d.redact(fmt.Sprintf("The service does not know job %s (it never existed on this "+
			"endpoint, or it has expired and been removed), so there is nothing to cancel.\n\n%v", id, err)))
		return nil, false
	case err != nil:
		diags.AddError("Reading the job failed", d.describeAPIError(err, familyService))
		return nil, false
	}
	return job, true
}

// requestCancel posts the cancel through the job's own link and says where the job then stands.
func (d *providerData) requestCancel(ctx context.Context, job *client.Job, progress *progressLines, diags *diag.Diagnostics) (*client.Job, bool) {
	canceled, err := d.client.CancelJob(ctx, job)
	if err != nil {
		diags.AddError("Canceling the job failed", d.describeAPIError(err, familyService))
		return nil, false
	}
	logInfo(ctx, "job cancel requested", map[string]any{"job_id": canceled.ID, "status": canceled.Status})
	if canceled.Terminal() {
		progress.say("job %s cancel requested: it is %s", canceled.ID, canceled.Status)
		return canceled, true
	}
	progress.say("job %s cancel requested", canceled.ID)
	progress.job(canceled)
	return canceled, true
}
