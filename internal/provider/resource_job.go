package provider

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/svc-org/terraform-provider-svc/internal/client"
)

var (
	_ resource.Resource                = (*jobResource)(nil)
	_ resource.ResourceWithConfigure   = (*jobResource)(nil)
	_ resource.ResourceWithImportState = (*jobResource)(nil)
	_ resource.ResourceWithModifyPlan  = (*jobResource)(nil)
)

const (
	defaultJobCreateTimeout = 30 * time.Minute
	defaultJobDeleteTimeout = 10 * time.Minute
)

// jobTimeoutsOpts are the timeouts svc_job takes.
var jobTimeoutsOpts = timeouts.Opts{Create: true, Delete: true, CreateDescription: jobCreateTimeoutDoc, DeleteDescription: jobDeleteTimeoutDoc}

// NewJobResource returns the svc_job resource.
func NewJobResource() resource.Resource { return &jobResource{} }

type jobResource struct {
	data *providerData
}

func (r *jobResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_job"
	// A submission a stop left unanswered is kept by its key, with an empty id in its identity
	// (the framework requires one after every create), which becomes the job's id once the
	// resend names it: the only change the identity ever makes.
	resp.ResourceBehavior.MutableIdentity = true
}

func (r *jobResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		Version: jobSchemaVersion,
		// The rest of svc_job's description is prose for its page: templates/resources/job.md.tmpl.
		MarkdownDescription: "Submits an API-format workflow as a durable job (v2 jobs interface), waits for it, and " +
			"exposes its outputs. Destroying it cancels the job if it is still running." + jobDefaultsDoc,
		Attributes: jobAttributes(),
	}
}

// svc_job's top-level attribute names, in one place: its attribute table (jobAttributeTable) and
// its record (jobRecordAttrTypes) name attributes through these.
const (
	jobAttrID                 = "id"
	jobAttrWorkflow           = "workflow"
	jobAttrIdempotencyKey     = "idempotency_key"
	jobAttrPartnerAPIKeyWO    = "partner_api_key_wo"
	jobAttrPartnerAuthTokenWO = "partner_auth_token_wo"
	jobAttrWaitForCompletion  = "wait_for_completion"
	jobAttrCancelOnDestroy    = "cancel_on_destroy"
	jobAttrRerunOnExpiry      = "rerun_on_expiry"
	jobAttrValidate           = "validate"
	jobAttrTimeouts           = "timeouts"
	// The job record, the same in the resource and the data source.
	jobAttrStatus         = "status"
	jobAttrCreatedAt      = "created_at"
	jobAttrStartedAt      = "started_at"
	jobAttrCompletedAt    = "completed_at"
	jobAttrExpiresAt      = "expires_at"
	jobAttrQueuePosition  = "queue_position"
	jobAttrProgress       = "progress"
	jobAttrOutputs        = "outputs"
	jobAttrOutputsOmitted = "outputs_omitted"
	jobAttrError          = "error"
	jobAttrMetrics        = "metrics"
	jobAttrURLs           = "urls"
)

// The attribute names of svc_job's nested objects, in one place: their types (outputAttrTypes,
// dataSourceOutputAttrTypes, jobErrorAttrTypes, progressAttrTypes, jobURLsAttrTypes), their schema
// (jobRecordAttributes) and the codecs name them through these.
const (
	jobOutputAttrNodeID          = "node_id"
	jobOutputAttrName            = "name"
	jobOutputAttrType            = "type"
	jobOutputAttrContentType     = "content_type"
	jobOutputAttrSizeBytes       = "size_bytes"
	jobOutputAttrID              = "id"
	jobOutputAttrHash            = "hash"
	jobOutputAttrJobID           = "job_id"
	jobOutputAttrURL             = "url"
	jobOutputAttrURLExpiresAt    = "url_expires_at"
	jobErrorAttrCode             = "code"
	jobErrorAttrMessage          = "message"
	jobErrorAttrNodeID           = "node_id"
	jobErrorAttrClassType        = "class_type"
	jobErrorAttrTraceback        = "traceback"
	progressAttrValue            = "value"
	progressAttrNodesDone        = "nodes_done"
	progressAttrNodesTotal       = "nodes_total"
	progressAttrCurrentNode      = "current_node"
	progressAttrCurrentNodeClass = "current_node_class"
	progressAttrStep             = "step"
	progressAttrSteps            = "steps"
	progressAttrMessage          = "message"
	jobURLsAttrSelf              = "self"
	jobURLsAttrEvents            = "events"
	jobURLsAttrCancel            = "cancel"
	jobURLsAttrLogs              = "logs"
)

func (r *jobResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.data = configureData(req.ProviderData, &resp.Diagnostics)
}

// ModifyPlan checks a new or changed workflow against object_info when validate is set, and
// plans a wait for a job in state that is still running.
func (r *jobResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	r.data.checkWorkflowOnPlan(ctx, req, resp, submitsElsewhere)
	refuseReplacementReusingKey(req, resp)
	planJobResume(ctx, req, resp)
}

func (r *jobResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	// Every path that puts the job in state (its wait's end, a refused record) gives its identity.
	defer func() {
		if held, ok := decodeJob(resp.State.Raw); ok {
			setHeldJobIdentity(resp.Identity, &held)
		}
	}()
	in, diags := readJobCreateInput(ctx, req.Plan, req.Config)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	r.submitAndWait(ctx, in, &resp.State, &resp.Diagnostics)
}

// submitAndWait submits in's workflow under its key (drawn now when unset) and waits for the
// job as in asks, saving state on every way out that knows of the job: its id, or, when the
// submission may have reached the service without an answer, its key (keepUnanswered). Create
// runs it, and an update that resends a key held that way.
func (r *jobResource) submitAndWait(ctx context.Context, in jobCreateInput, state *tfsdk.State, diags *diag.Diagnostics) {
	// The write-only credentials are secrets of this apply: masked like the provider's.
	data := r.data.withSecrets(in.apiKeyWO, in.authTokenWO)
	ctx = data.logContext(ctx)
	waitCtx, cancel := context.WithTimeout(ctx, in.createTimeout)
	defer cancel()

	// The key is chosen once, before the first attempt (by the journal, which adopts an earlier
	// run's for the same workflow); the client resends it unchanged. Once Terraform stops or the
	// create times out, nothing is sent that was not on the wire; a submission on the wire is
	// given the client's short grace to be answered, so that the id of a job the service created
	// reaches state.
	sub, job, err := r.submitJournaled(waitCtx, data, &in, diags)
	if diags.HasError() {
		return // the journal cannot be used: nothing was sent
	}
	// When this returns, the journal learns whether the job's id (or, unanswered, its key)
	// reached Terraform: the next apply then resends it from state, not from the journal.
	defer func() {
		held, ok := decodeJob(state.Raw)
		sub.end(ctx, ok && (held.ID.ValueString() != "" || held.unanswered()), err)
	}()
	if err != nil {
		r.reportSubmitFailure(ctx, data, in, sub, err, state, diags)
		return
	}
	logInfo(ctx, "job submitted", map[string]any{"job_id": job.ID, "status": job.Status, "idempotency_key": in.key,
		"request_id": job.RequestID, "adopted": sub.adopted})

	if !in.waitForCompletion {
		m, _ := in.stateOf(job, diags)
		saveJob(state, &m, diags)
		return
	}
	final, waitErr := data.client.WaitJob(waitCtx, job, data.jobWaitOptions(ctx, job, newJSONSemanticValue(in.workflow)))
	if final == nil {
		final = job
	}
	// Terraform receives the state when Create returns: setting it once, here, on every path
	// out of the wait (its failure, timeout and interruption included) puts the id in state
	// whatever happened while waiting, so the job is not lost.
	m, omitted := in.stateOf(final, diags)
	saveJob(state, &m, diags)
	warnOmittedOutputs(diags, int64(omitted), job.ID)
	data.reportJobWaitEnd(ctx, diags, final, waitErr, in.createTimeout, true)
}

// reportSubmitFailure turns a failed submission into diagnostics, and keeps in state what the
// service may hold of it: a job whose record was refused, by its id; a submission that may
// have arrived unanswered, by its key (keepUnanswered).
func (r *jobResource) reportSubmitFailure(ctx context.Context, data *providerData, in jobCreateInput, sub journaled, err error, state *tfsdk.State, diags *diag.Diagnostics) {
	var refused *client.RefusedJobRecordError
	var unknown *client.UnknownOutcomeError
	switch {
	case errors.As(err, &unknown) && !unknown.FirstArrived:
		keepUnanswered(ctx, data, in, err, state, diags)
		return
	case errors.As(err, &refused):
		// The job exists even though its record was refused: keep its id (the resource is
		// tainted), so it is not lost; the user can untaint it, or let the next apply replace it.
		m, _ := in.stateOf(&client.Job{ID: refused.JobID, Status: refused.Status}, diags)
		saveJob(state, &m, diags)
	}
	diags.AddError(errorSummary(err, familyService, "Job submission failed"), data.redact(data.orNotSent(err, withSettingHint(describeJournaledSubmitError(err, sub), err, familyService))))
}

// keepUnanswered saves a submission that may have reached the service without its answer
// coming back: state holds its key and no id, and the next apply resends that same key (the
// service runs a key once: a first attempt that arrived makes the resend a refused reuse, one
// that did not makes it run now), never a new one. When Terraform stopped, that is a warning:
// the resource stays untainted and the next apply resends it. Otherwise (the create timeout)
// it is an error, which taints the resource so that nothing uses its outputs; untainting it
// lets the next apply resend the key.
func keepUnanswered(ctx context.Context, data *providerData, in jobCreateInput, err error, state *tfsdk.State, diags *diag.Diagnostics) {
	m := in.planned
	m.ID = types.StringNull()
	m.IdempotencyKey = types.StringValue(in.key)
	m.jobStateRecord = nullStateRecord()
	if !saveJob(state, &m, diags) {
		return
	}
	if waitInterrupted(ctx, err) {
		diags.AddWarning("Job submission unanswered: the next apply waits for it, resent under its key",
			fmt.Sprintf("Terraform stopped while the submission under Idempotency-Key %s was unanswered, so whether the "+
				"service created a job is not known yet. The key is saved in state (not tainted, with no job id). The next "+
				"`terraform apply` resends the same request under the same key: if the first attempt never arrived, the "+
				"job runs then; if it did, the service refuses the used key and nothing runs twice.", in.key))
		return
	}
	diags.AddError(errorSummary(err, familyService, "Job submission unanswered"), data.redact(fmt.Sprintf(
		"The submission may have reached the service, but no answer came back before the create timeout, so a job "+
			"may exist that the provider cannot name yet.\n\nIdempotency-Key: %s\nCause: %v\n\n"+
			"The key is saved in state, with no job id, and the resource is tainted. Once the service answers again, run "+
			"`terraform untaint <address>` and apply: the same request is resent under the same key, so a job the first "+
			"attempt created makes the service refuse the used key (nothing runs twice), and one it did not create runs "+
			"then. Applying without untainting replaces it with a new submission under a new key (unless idempotency_key "+
			"is set), which could run the workflow twice. If you learn the job's id, `terraform import <address> <job id>` "+
			"brings it under management.", in.key, err)))
}

// jobCreateInput is what svc_job's Create acts on, read from the plan and the configuration.
type jobCreateInput struct {
	planned               jobModel // the plan, which the new state keeps
	workflow              string
	key                   string // "" when unset (a configured key is never empty): Create draws one
	waitForCompletion     bool
	createTimeout         time.Duration
	apiKeyWO, authTokenWO types.String
}

func readJobCreateInput(ctx context.Context, plan tfsdk.Plan, config tfsdk.Config) (jobCreateInput, diag.Diagnostics) {
	var diags diag.Diagnostics
	var in jobCreateInput
	planned, okPlan := decodeJob(plan.Raw)
	configured, okConfig := decodeJob(config.Raw)
	if !okPlan || !okConfig {
		diags.AddError("Reading the plan failed", "The plan or the configuration of svc_job is not a known object. "+
			"Nothing was submitted. This is a bug in the provider.")
		return in, diags
	}
	in.planned = planned
	in.workflow = planned.Workflow.ValueString()
	in.key = planned.IdempotencyKey.ValueString()
	in.waitForCompletion = planned.WaitForCompletion.ValueBool()
	in.apiKeyWO = configured.PartnerAPIKeyWO
	in.authTokenWO = configured.PartnerAuthTokenWO
	in.createTimeout, diags = timeoutOf(ctx, planned.Timeouts, defaultJobCreateTimeout, timeouts.Value.Create)
	return in, diags
}

// stateOf is the state Create saves for job: the plan with the job's id, the idempotency key
// used and the service's record of job in place of the values the plan left unknown; the other
// values (workflow, settings, timeouts) are the plan's. omitted counts the distinct outputs left
// out of the record; the record's warnings go to diags. The framework then nulls the write-only
// attributes, as for every state.
func (in *jobCreateInput) stateOf(job *client.Job, diags *diag.Diagnostics) (m jobModel, omitted int) {
	m = in.planned
	m.ID = types.StringValue(job.ID)
	m.IdempotencyKey = types.StringValue(in.key)
	return m, m.setRecord(job, diags)
}

// saveJob sets state to m. A state that cannot be built, a bug, is an error naming the job and
// leaves state as it was (ok false).
func saveJob(state *tfsdk.State, m *jobModel, diags *diag.Diagnostics) (ok bool) {
	value, err := encodeJob(m)
	if err != nil {
		// The job exists: the error names it.
		diags.AddError("Saving the job in state failed", fmt.Sprintf("The state of job %s could not be built (%v). "+
			"This is a bug in the provider; import the job by its id.", m.ID.ValueString(), err))
		return false
	}
	state.Raw = value
	return true
}

// savePlannedJob sets plan to m. A plan that cannot be built, a bug, is an error and leaves the
// plan as it was.
func savePlannedJob(plan *tfsdk.Plan, m *jobModel, diags *diag.Diagnostics) {
	value, err := encodeJob(m)
	if err != nil {
		diags.AddError("Planning the job failed", fmt.Sprintf("The plan of job %s could not be built (%v). This is a bug in the provider.",
			m.ID.ValueString(), err))
		return
	}
	plan.Raw = value
}

func (r *jobResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	// The held values are read as they are, not converted into a model: a plan refreshes every
	// job of a batch.
	held, ok := decodeJob(req.State.Raw)
	if !ok {
		resp.Diagnostics.AddError("Reading the state failed", "svc_job's state is not a known object. This is a bug in the provider.")
		return
	}
	setHeldJobIdentity(resp.Identity, &held)
	if held.unanswered() {
		return // no job named yet: nothing to read; the next apply resends its key
	}
	r.data.journal.confirm(ctx, held.ID.ValueString())
	if record := settledRecordOf(&held); record.ended() {
		// A job that ended is settled for good: no request, whatever the service does with it.
		if record.rerunDueAt(r.data.now()) {
			resp.Diagnostics.AddWarning("Job expired: it will run again",
				fmt.Sprintf("Job %s is past its expires_at (%s) and rerun_on_expiry is true: it is removed from state and "+
					"the next apply submits the workflow again.", held.ID.ValueString(), held.ExpiresAt.ValueString()))
			resp.State.RemoveResource(ctx)
			return
		}
		return
	}
	ctx = r.data.logContext(ctx)
	id := held.ID.ValueString()
	if r.data.configUnknown {
		// The provider's settings (an endpoint or key from a resource not applied yet) are not
		// known during this plan: reading now would ask the wrong service. Keep state.
		logInfo(ctx, "provider settings unknown during plan; job not refreshed", map[string]any{"job_id": id})
		return
	}
	readCtx, cancel := r.data.readContext(ctx)
	defer cancel()
	job, err := r.data.client.GetJob(readCtx, id)
	switch {
	case client.Gone(err) && !client.RouteNotFound(err):
		if expiresAt := held.ExpiresAt.ValueString(); !pastExpiry(expiresAt, r.data.now()) {
			resp.Diagnostics.AddWarning("Job no longer exists",
				fmt.Sprintf("Job %s was not found before its expires_at (%s); it is removed from state and the next apply submits the workflow again.",
					id, expiresAt))
			resp.State.RemoveResource(ctx)
			return
		}
		readExpired(ctx, id, held.RerunOnExpiry.ValueBool(), resp)
		return
	case err != nil:
		resp.Diagnostics.AddError(errorSummary(err, familyService, "Reading job failed"), r.data.describeReadError(readCtx, err, familyService))
		return
	case job.Status == client.JobExpired:
		readExpired(ctx, id, held.RerunOnExpiry.ValueBool(), resp)
		return
	}
	held.setRecord(job, &resp.Diagnostics)
	saveJob(&resp.State, &held, &resp.Diagnostics)
}

// readExpired handles a job the service has aged out. That is not drift: state keeps what it
// held, unless the user asked for the job to be run again.
func readExpired(ctx context.Context, id string, rerunOnExpiry bool, resp *resource.ReadResponse) {
	if rerunOnExpiry {
		resp.Diagnostics.AddWarning("Job expired: it will run again",
			fmt.Sprintf("Job %s has expired on the service and rerun_on_expiry is true: it is removed from state and the next apply submits the workflow again.", id))
		resp.State.RemoveResource(ctx)
		return
	}
	logInfo(ctx, "job has expired on the service; keeping state as it is", map[string]any{"job_id": id})
}

func (r *jobResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	// Provider-side settings change in place (wait_for_completion, cancel_on_destroy,
	// rerun_on_expiry, timeouts), and a job still running is waited for (planJobResume); nothing
	// is ever sent to the service. The values are read as they are, not converted into models.
	planned, okPlan := decodeJob(req.Plan.Raw)
	held, okState := decodeJob(req.State.Raw)
	if !okPlan || !okState {
		resp.Diagnostics.AddError("Reading the plan failed", "The plan or the state of svc_job is not a known object. "+
			"This is a bug in the provider.")
		return
	}
	if held.unanswered() {
		r.resendUnanswered(ctx, req, resp, held)
		return
	}
	resp.State.Raw = req.Plan.Raw
	job := held.heldJob()
	setJobIdentity(resp.Identity, job.ID)
	if !planned.WaitForCompletion.ValueBool() || !jobInFlight(job.ID, job.Status) {
		return
	}
	values := planned
	values.jobStateRecord = held.jobStateRecord
	r.resumeJobWait(ctx, &resp.State, values, job, &resp.Diagnostics)
}

func (r *jobResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	// Two held values decide whether anything is sent, read as they are: a batch of finished
	// jobs is forgotten without converting any record.
	held, ok := decodeJob(req.State.Raw)
	if !ok {
		resp.Diagnostics.AddError("Reading the state failed", "svc_job's state is not a known object. This is a bug in the provider.")
		return
	}
	r.data.journal.forget(ctx, held.ID.ValueString())
	if !held.CancelOnDestroy.ValueBool() || client.JobTerminal(held.Status.ValueString()) || held.unanswered() {
		return // nothing runs, or no job is named to cancel; the service keeps it until it expires
	}
	deleteTimeout, diags := timeoutOf(ctx, held.Timeouts, defaultJobDeleteTimeout, timeouts.Value.Delete)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	ctx = r.data.logContext(ctx)
	ctx, cancel := context.WithTimeout(ctx, deleteTimeout)
	defer cancel()

	job := held.heldJob()
	if job.URLs.Cancel == "" {
		fresh, err := r.data.client.GetJob(ctx, job.ID)
		if client.Gone(err) {
			return
		}
		if err != nil {
			resp.Diagnostics.AddError(errorSummary(err, familyService, "Canceling job failed"), r.data.describeAPIError(err, familyService))
			return
		}
		job = fresh
	}
	canceled, err := r.data.client.CancelJob(ctx, job)
	if client.Gone(err) {
		return // already gone
	}
	if err != nil {
		resp.Diagnostics.AddError(errorSummary(err, familyService, "Canceling job failed"), r.data.describeAPIError(err, familyService))
		return
	}
	logInfo(ctx, "job cancel requested", map[string]any{"job_id": canceled.ID, "status": canceled.Status})
	if _, err := r.data.client.WaitJob(ctx, canceled, client.WaitOptions{OnUpdate: newJobProgressLog(ctx, canceled).job}); err != nil {
		resp.Diagnostics.AddError("Job did not stop",
			r.data.redact(fmt.Sprintf("Cancel of job %s was requested but it did not reach a terminal status within %s: %v", job.ID, deleteTimeout, err)))
	}
}

// ImportState takes a job id, or an identity with it.
func (r *jobResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	id := req.ID
	if ids, byIdentity := importedIdentity(ctx, req, &resp.Diagnostics, jobIdentityAttrID); byIdentity {
		id = ids[0]
	}
	if err := uuid.Validate(id); err != nil || resp.Diagnostics.HasError() {
		resp.Diagnostics.AddError("Invalid import id", fmt.Sprintf("Import svc_job by job id (a UUID), or by an identity with id; got %q.", id))
		return
	}
	setJobIdentity(resp.Identity, id)
	// Import cannot learn the workflow (the job record does not carry it), so the first plan
	// after import records the configured workflow in state, in place, without sending anything.
	imported := jobModel{ID: types.StringValue(id)}
	for _, a := range jobAttributeTable {
		if def, ok := a.def.(bool); ok {
			*a.field(&imported).(*types.Bool) = types.BoolValue(def)
		}
	}
	saveJob(&resp.State, &imported, &resp.Diagnostics)
}
