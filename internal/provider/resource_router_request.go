package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/svc-org/terraform-provider-svc/internal/client"
)

var (
	_ resource.Resource                   = (*routerRequestResource)(nil)
	_ resource.ResourceWithConfigure      = (*routerRequestResource)(nil)
	_ resource.ResourceWithImportState    = (*routerRequestResource)(nil)
	_ resource.ResourceWithIdentity       = (*routerRequestResource)(nil)
	_ resource.ResourceWithModifyPlan     = (*routerRequestResource)(nil)
	_ resource.ResourceWithValidateConfig = (*routerRequestResource)(nil)
)

const (
	modeQueued = "queued"
	modeSync   = "sync"

	defaultRouterCreateTimeout = 30 * time.Minute
	defaultRouterDeleteTimeout = 5 * time.Minute
)

// NewRouterRequestResource returns the svc_router_request resource.
func NewRouterRequestResource() resource.Resource { return &routerRequestResource{} }

type routerRequestResource struct {
	data *providerData
}

type routerRequestModel struct {
	ID                types.String   `tfsdk:"id"`
	Model             types.String   `tfsdk:"model"`
	Input             jsonSemantic   `tfsdk:"input"`
	Mode              types.String   `tfsdk:"mode"`
	IdempotencyKey    types.String   `tfsdk:"idempotency_key"`
	ValidateInput     types.Bool     `tfsdk:"validate_input"`
	WaitForCompletion types.Bool     `tfsdk:"wait_for_completion"`
	ResultPath        types.String   `tfsdk:"result_path"`
	Timeouts          timeouts.Value `tfsdk:"timeouts"`
	routerRecordModel
}

func (r *routerRequestResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_router_request"
	// A queued request a stop left unanswered is kept under a placeholder id naming its key,
	// which becomes the router's request id once the resend names it: the only change its
	// identity ever makes.
	resp.ResourceBehavior.MutableIdentity = true
}

func (r *routerRequestResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	attrs := routerRequestArgumentAttributes(ctx)
	maps.Copy(attrs, routerRecordAttributes())
	resp.Schema = schema.Schema{
		// The rest of svc_router_request's description is prose for its page: templates/resources/router_request.md.tmpl.
		MarkdownDescription: "Calls a partner model through the model router, queued (default) or synchronously, and keeps " +
			"its result." + routerDefaultsDoc,
		Attributes: attrs,
	}
}

// routerRequestArgumentAttributes are what svc_router_request's configuration sets, and its id.
func routerRequestArgumentAttributes(ctx context.Context) map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"id": schema.StringAttribute{
			Computed: true,
			MarkdownDescription: "Request id: the queued request's handle (in state as soon as the router accepted it), or the " +
				"`X-Svc-Request-Id` of a synchronous call.",
			PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
		},
		"model": schema.StringAttribute{
			Required:            true,
			Validators:          []validator.String{modelIDValidator{}},
			MarkdownDescription: "Model id, `provider/model` (see `svc_models`). Checked at plan time against the router's identifier rules. Changing it runs the model again.",
			PlanModifiers:       []planmodifier.String{stringplanmodifier.RequiresReplace()},
		},
		"input": schema.StringAttribute{
			Required:   true,
			CustomType: jsonSemanticType{},
			Validators: []validator.String{jsonObjectValidator{}},
			MarkdownDescription: "The model's native input, a JSON object sent unchanged. Formatting differences (whitespace, key order, number spelling such as `1`, `1.0`, `1e0`) are not changes: they plan nothing and send nothing. " +
				"Changing it runs the model again.",
			PlanModifiers: []planmodifier.String{jsonKeepEquivalentState(), replaceUnlessImported("Changing the input runs the model again.")},
		},
		"mode": schema.StringAttribute{
			Optional: true, Computed: true, Default: stringdefault.StaticString(modeQueued),
			Validators: []validator.String{stringvalidator.OneOf(modeQueued, modeSync)},
			MarkdownDescription: "`queued` (default): submit, keep the request id in state at once, poll its status and collect " +
				"the result. `sync`: one held call that returns the result (the router holds it up to 10 minutes; a longer run " +
				"answers `504 deadline_exceeded` and is collected by resending the same key). Changing it runs the model again.",
			PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
		},
		"idempotency_key": schema.StringAttribute{
			Optional: true, Computed: true,
			Validators: []validator.String{stringvalidator.LengthBetween(1, 255)},
			MarkdownDescription: "`Idempotency-Key` of the call. Left unset, a random UUID is chosen before the first attempt and " +
				"reused on every retry. The router records the key's outcome for 24 hours and replays it: a resend with the same " +
				"key and input returns the original run instead of starting a second billable one. After an unknown outcome the " +
				"error names the key; set it here and apply again to collect that run. Changing it runs the model again.",
			PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown(), stringplanmodifier.RequiresReplaceIfConfigured()},
		},
		"validate_input": schema.BoolAttribute{
			Optional: true, Computed: true, Default: booldefault.StaticBool(defaultValidate),
			MarkdownDescription: "Check `input` at plan time against the model's input schema when the schema is authored " +
				"(`x-svc-input-schema-authored`), reporting every violation with its path; nothing billable is sent. Skipped when " +
				"the provider configuration is not known at plan time. " + validateDefaultDoc,
		},
		"wait_for_completion": schema.BoolAttribute{
			Optional: true, Computed: true, Default: booldefault.StaticBool(true),
			MarkdownDescription: "Queued mode: wait for `COMPLETED` and collect the result during apply (default `true`). When " +
				"`false`, apply returns once the request is accepted; a later refresh that finds it `COMPLETED` collects the result. " +
				"A synchronous call always waits. Turned on while the request in state still runs, the next apply waits for that same request, in place.",
		},
		"result_path": schema.StringAttribute{
			Optional: true,
			MarkdownDescription: "Write the result to this file (through a temporary file renamed into place, mode `0644`) instead " +
				"of `result`. Needed for binary results (images, audio) and for results over 1 MiB. Changing it re-collects a queued " +
				"result (a replay, not a new run) and removes the old file; a synchronous result cannot be fetched again. A file " +
				"that goes missing or changes is drift: see [Results in a file](#results-in-a-file). Destroy deletes the file.",
		},
		"timeouts": timeouts.Attributes(ctx, timeouts.Opts{Create: true, Delete: true, CreateDescription: routerCreateTimeoutDoc, DeleteDescription: routerDeleteTimeoutDoc}),
	}
}

// routerRequestIdentity names a request on the router: the model and the request id.
var routerRequestIdentity = []string{"model", "id"}

func (r *routerRequestResource) IdentitySchema(_ context.Context, _ resource.IdentitySchemaRequest, resp *resource.IdentitySchemaResponse) {
	resp.IdentitySchema = stringIdentitySchema(
		identityAttribute{name: "model", description: "Model id, `provider/model`."},
		identityAttribute{name: "id", description: "Request id."},
	)
}

func (r *routerRequestResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.data = configureData(req.ProviderData, &resp.Diagnostics)
}

// ValidateConfig rejects settings that cannot work together.
func (r *routerRequestResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var mode types.String
	var wait types.Bool
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("mode"), &mode)...)
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("wait_for_completion"), &wait)...)
	if mode.ValueString() == modeSync && !wait.IsNull() && !wait.IsUnknown() && !wait.ValueBool() {
		resp.Diagnostics.AddAttributeError(path.Root("wait_for_completion"), "Synchronous calls always wait",
			"wait_for_completion = false needs mode = \"queued\": a synchronous call returns only with its result.")
	}
}

// ModifyPlan validates the input against the model's schema before anything billable is sent,
// and marks the result unknown when a changed result_path will re-collect it.
func (r *routerRequestResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() {
		return // destroy
	}
	var plan routerRequestModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	var state *routerRequestModel
	if !req.State.Raw.IsNull() {
		state = &routerRequestModel{}
		resp.Diagnostics.Append(req.State.Get(ctx, state)...)
		if resp.Diagnostics.HasError() {
			return
		}
	}
	creating := state == nil || state.Input.IsNull() || !state.Input.Equal(plan.Input) || !state.Model.Equal(plan.Model)
	if state != nil && !state.ResultPath.Equal(plan.ResultPath) && !creating {
		for _, name := range []string{"result", "result_content_type", "result_sha256"} {
			resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root(name), types.StringUnknown())...)
		}
		resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("result_size_bytes"), types.Int64Unknown())...)
	}
	planRouterResume(ctx, req, resp)
	if !creating || !plan.ValidateInput.ValueBool() {
		return
	}
	r.validateInput(ctx, plan, resp)
}

// validateInput checks the planned input against the model's authored input schema.
func (r *routerRequestResource) validateInput(ctx context.Context, plan routerRequestModel, resp *resource.ModifyPlanResponse) {
	if r.data == nil || r.data.configUnknown || plan.Input.IsUnknown() || plan.Model.IsUnknown() || plan.Input.IsNull() {
		return
	}
	model := plan.Model.ValueString()
	if client.ValidateModelID(model) != nil {
		return // the attribute validator reports it
	}
	readCtx, cancel := r.data.readContext(ctx)
	defer cancel()
	ms, err := r.data.client.GetModelSchema(readCtx, model)
	switch {
	case client.CredentialsRefused(err) || client.RouteNotFound(err):
		// The apply would fail the same way: say so now, as an error, not as a skipped check.
		resp.Diagnostics.AddError(errorSummary(err, familyRouter, "Model schema could not be read"), r.data.describeReadError(readCtx, err, familyRouter))
		return
	case client.NotFound(err):
		resp.Diagnostics.AddAttributeError(path.Root("model"), "Model not found", r.data.redact(err.Error()))
		return
	case err != nil:
		resp.Diagnostics.AddAttributeWarning(path.Root("input"), "Input not validated at plan time",
			"The model's schema could not be read, so the router will validate the input when it is sent.\n\n"+
				r.data.describeReadError(readCtx, err, familyRouter))
		return
	case !ms.InputSchemaAuthored:
		logDebug(ctx, "model input schema not authored; input not validated at plan time", map[string]any{"model": model})
		return
	}
	violations, err := ms.ValidateInput([]byte(plan.Input.ValueString()))
	if err != nil {
		resp.Diagnostics.AddAttributeWarning(path.Root("input"), "Input not validated at plan time", r.data.redact(err.Error()))
		return
	}
	for _, v := range violations {
		resp.Diagnostics.AddAttributeError(path.Root("input"), "Input does not match the model's schema",
			fmt.Sprintf("%s: %s\n\nThe input of %s is checked against its schema (ETag %s) before anything is sent. "+
				"Set validate_input = false to let the router decide.", v.Path, v.Message, model, ms.ETag))
	}
}

func (r *routerRequestResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	defer func() {
		resp.Diagnostics.Append(setIdentityFromState(ctx, resp.State, resp.Identity, routerRequestIdentity...)...)
	}()
	var plan routerRequestModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	createTimeout, diags := plan.Timeouts.Create(ctx, defaultRouterCreateTimeout)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	ctx = r.data.logContext(ctx)
	ctx, cancel := context.WithTimeout(ctx, createTimeout)
	defer cancel()
	// The key is chosen once, here, before the first attempt, and every retry resends it.
	sub, ok := r.beginJournaled(ctx, &plan, &resp.Diagnostics)
	if !ok {
		return
	}
	var err error // the submission's, for the journal when Create returns
	defer func() { sub.end(ctx, routerIDInState(ctx, resp), err) }()
	plan.routerRecordModel = nullRecord()
	in := client.InvokeInput{Model: plan.Model.ValueString(), Input: json.RawMessage(plan.Input.ValueString()), IdempotencyKey: plan.IdempotencyKey.ValueString()}
	if plan.Mode.ValueString() == modeSync {
		err = r.createSync(ctx, &plan, in, sub, resp)
		return
	}
	var q *client.QueueRequest
	var queued bool
	q, queued, err = r.submitQueued(ctx, &plan, in, sub, resp)
	if !queued || resp.Diagnostics.HasError() || !plan.WaitForCompletion.ValueBool() {
		return
	}

	final, res, err := r.data.client.AwaitModelResult(ctx, q, client.RouterWaitOptions{OnUpdate: newRouterProgressLog(ctx, q).router})
	plan.setQueue(final)
	if err != nil && waitInterrupted(ctx, err) && !final.Completed() {
		resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
		resp.Diagnostics.AddWarning("Model request still running: the next apply waits for it", describeRouterInterrupted(final.RequestID, final.Status))
		return
	}
	if err != nil {
		resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
		title := "Model request did not finish"
		if final.Completed() {
			title = "Model result not collected"
		}
		resp.Diagnostics.AddError(title, r.data.redact(describeRouterWaitError(ctx, err, final, createTimeout)))
		return
	}
	if final.Failed() {
		resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
		resp.Diagnostics.AddError("Model request failed", describeFailedRun(final))
		return
	}
	r.keepResult(ctx, &plan, res, &resp.Diagnostics)
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

// submitQueued submits a queued request and puts its handle in state as soon as the router
// answers; queued is false when nothing more is to be done (the submission failed, or a stop
// left it unanswered and it is kept by its key).
func (r *routerRequestResource) submitQueued(ctx context.Context, plan *routerRequestModel, in client.InvokeInput, sub journaled,
	resp *resource.CreateResponse,
) (q *client.QueueRequest, queued bool, err error) {
	// Once Terraform stops, nothing is sent that was not on the wire, and a submission on the
	// wire gets the client's short grace for the handle in its answer.
	q, err = r.data.client.SubmitModelRequest(ctx, in)
	if err != nil && q == nil && waitInterrupted(ctx, err) {
		// The router may have accepted it: kept by its key, so that the next apply resends the
		// same key (which replays the accepted run) rather than draw a new one.
		queuedInterrupted(plan, in)
		resp.Diagnostics.Append(resp.State.Set(ctx, plan)...)
		resp.Diagnostics.AddWarning("Model request unanswered: the next apply waits for it, resent under its key", describeRouterInterrupted(plan.ID.ValueString(), plan.Status.ValueString()))
		return q, false, err
	}
	if q != nil {
		sub.answered(ctx, q.RequestID)
		logInfo(ctx, "model request queued", map[string]any{"request_id": q.RequestID, "status": q.Status, "replayed": q.Replayed, "idempotency_key": in.IdempotencyKey})
		// The handle reaches state now, even with an error: the router accepted the run, so
		// whatever happens next, the request is not lost.
		plan.ID = types.StringValue(q.RequestID)
		plan.setQueue(q)
		plan.Replayed = types.BoolValue(q.Replayed)
		resp.Diagnostics.Append(resp.State.Set(ctx, plan)...)
	}
	switch {
	case err != nil && q != nil:
		resp.Diagnostics.AddError("Model request accepted, but its answer cannot be used", r.data.redact(fmt.Sprintf(
			"The router accepted request %s, but %v\n\nThe request id is saved in state and the resource is tainted. "+
				"The provider follows the router's status_url, response_url and cancel_url (on the origin that answered); "+
				"each must be present, http or https, and carry no credentials.", q.RequestID, err)))
		return q, false, err
	case err != nil:
		resp.Diagnostics.AddError(errorSummary(err, familyRouter, "Model request failed"), r.data.redact(r.data.orNotSent(err, withSettingHint(describeRouterCallError(err, in), err, familyRouter))))
		return q, false, err
	}
	return q, true, nil
}

// describeInvokeFailure is the error of a synchronous call, first made or resent: not sent when
// it never left, else what the router said, after the setting it points at.
func (r *routerRequestResource) describeInvokeFailure(err error, in client.InvokeInput) string {
	return r.data.redact(r.data.orNotSent(err, withSettingHint(describeRouterCallError(err, in), err, familyRouter)))
}

// createSync calls the model and waits for its answer; the error is the call's, for the journal.
func (r *routerRequestResource) createSync(ctx context.Context, plan *routerRequestModel, in client.InvokeInput, sub journaled,
	resp *resource.CreateResponse,
) error {
	res, err := r.data.client.InvokeModel(ctx, in)
	if err != nil && waitInterrupted(ctx, err) {
		syncInterrupted(plan, in)
		resp.Diagnostics.Append(resp.State.Set(ctx, plan)...)
		resp.Diagnostics.AddWarning("Model call still running: the next apply waits for it", describeRouterInterrupted(plan.ID.ValueString(), plan.Status.ValueString()))
		return err
	}
	if err != nil {
		resp.Diagnostics.AddError("Model call failed", r.describeInvokeFailure(err, in))
		return err
	}
	logInfo(ctx, "model called", map[string]any{"request_id": res.RequestID, "replayed": res.Replayed, "idempotency_key": in.IdempotencyKey})
	plan.ID = types.StringValue(res.RequestID)
	if res.RequestID == "" {
		plan.ID = types.StringValue("sync-" + in.IdempotencyKey)
	}
	sub.answered(ctx, plan.ID.ValueString())
	plan.Status = types.StringValue(client.RouterCompleted)
	r.keepResult(ctx, plan, res, &resp.Diagnostics)
	resp.Diagnostics.Append(resp.State.Set(ctx, plan)...)
	return nil
}

// keepResult stores a collected result into the model; a failure to write it is an error (the
// request id is in state, and re-collecting a queued result is a replay, not a new run). The
// error says how to keep the paid run: in Create it taints the resource, and the replacement
// would call the model again under a new key.
func (r *routerRequestResource) keepResult(ctx context.Context, m *routerRequestModel, res *client.RouterResult, diags *diag.Diagnostics) {
	stored, err := storeResult(res, m.ResultPath.ValueString())
	if err != nil {
		diags.AddError("Keeping the result failed", r.data.redact(fmt.Sprintf("%v\n\nThe model run itself succeeded and is "+
			"billed. A queued result can be collected again as a replay: fix the problem, and if this apply tainted the "+
			"resource, run `terraform untaint <address>` first; otherwise the next apply calls the model again.", err)))
		return
	}
	m.setResult(res, stored)
	if stored.warning != "" {
		diags.AddWarning("Result not kept in state", stored.warning)
	}
	logInfo(ctx, "model result kept", map[string]any{"content_type": stored.contentType, "size_bytes": stored.size, "sha256": stored.sha256})
}

func (r *routerRequestResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	defer func() {
		resp.Diagnostics.Append(setIdentityFromState(ctx, resp.State, resp.Identity, routerRequestIdentity...)...)
	}()
	var state routerRequestModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	r.data.journal.confirm(ctx, state.ID.ValueString())
	r.noticeResultFileDrift(ctx, &state, resp)
	if state.Mode.ValueString() == modeSync || unansweredQueued(state) {
		return // no record on the service is named to read (a synchronous call, an unanswered submission)
	}
	ctx = r.data.logContext(ctx)
	if r.data.configUnknown {
		return // the provider's settings are not known during this plan: keep state
	}
	held, err := state.heldRequest(r.data.client)
	if err != nil {
		resp.Diagnostics.AddError("Reading model request failed", err.Error())
		return
	}
	readCtx, cancel := r.data.readContext(ctx)
	defer cancel()
	q, err := r.data.client.ModelRequestStatus(readCtx, held)
	switch {
	case client.RouteNotFound(err): // the endpoint is wrong, not the request gone: reported below
	case client.Gone(err) && state.Status.ValueString() == client.RouterCompleted:
		logInfo(ctx, "model request record has aged out; keeping state as it is", map[string]any{"request_id": state.ID.ValueString()})
		return
	case client.Gone(err):
		// The router accepted this request once and now does not know it. It may have run (and
		// been billed) without being seen completed, so dropping it from state, which makes the
		// next apply call the model again under a new key, is not ours to decide.
		resp.Diagnostics.AddWarning("Model request no longer known to the router",
			fmt.Sprintf("Request %s of %s is not known to the router (HTTP %d) and was last seen %s. State keeps it: the run may "+
				"have completed and been billed. To call the model again, run `terraform apply -replace=<address>`.",
				state.ID.ValueString(), state.Model.ValueString(), quotedStatus(err), state.Status.ValueString()))
		return
	}
	if err != nil {
		resp.Diagnostics.AddError(errorSummary(err, familyRouter, "Reading model request failed"), r.data.describeReadError(readCtx, err, familyRouter))
		return
	}
	state.setQueue(q)
	if q.Completed() && !q.Failed() && state.ResultSHA256.IsNull() {
		// Completed since the last look (wait_for_completion = false, or import): collect it.
		res, _, err := r.data.client.CollectModelRequest(readCtx, q)
		switch {
		case err != nil:
			resp.Diagnostics.AddWarning("Result not collected", r.data.redact(fmt.Sprintf("Request %s completed but collecting its result failed; the next refresh tries again.\n\n%v", q.RequestID, err)))
		case res != nil:
			r.keepResult(ctx, &state, res, &resp.Diagnostics)
		}
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

func (r *routerRequestResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	defer func() {
		resp.Diagnostics.Append(setIdentityFromState(ctx, resp.State, resp.Identity, routerRequestIdentity...)...)
	}()
	// Only provider-side settings change in place. A new result_path re-collects a queued result
	// (a replay: the service does not run or charge again).
	var plan, state routerRequestModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	ctx = r.data.logContext(ctx)
	if plan.IdempotencyKey.IsUnknown() {
		plan.IdempotencyKey = state.IdempotencyKey
	}
	if plan.WaitForCompletion.ValueBool() && routerStillRunning(state) {
		r.resumeRouterWait(ctx, &plan, state, &resp.Diagnostics) // planned by planRouterResume
		resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
		return
	}
	record := state.routerRecordModel
	if !plan.ResultPath.Equal(state.ResultPath) {
		switch {
		case state.Mode.ValueString() == modeSync:
			resp.Diagnostics.AddWarning("Result not written", "A synchronous call's result cannot be fetched again, so result_path was not written. Replace the resource to call the model again.")
		case state.Status.ValueString() == client.RouterCompleted && state.ErrorType.IsNull():
			held, err := state.heldRequest(r.data.client)
			var res *client.RouterResult
			if err == nil {
				res, _, err = r.data.client.CollectModelRequest(ctx, held)
			}
			if err != nil {
				resp.Diagnostics.AddError("Collecting the result again failed", r.data.redact(describeRecollectError(err)))
				return
			}
			if res != nil {
				plan.routerRecordModel = record
				r.keepResult(ctx, &plan, res, &resp.Diagnostics)
				record = plan.routerRecordModel
				record.keepCallFacts(state.routerRecordModel)
			}
			if !resp.Diagnostics.HasError() {
				_ = removeResultFile(state) // the result moved: the old file is no longer managed
			}
		}
	}
	plan.routerRecordModel = record
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

func (r *routerRequestResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state routerRequestModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	r.data.journal.forget(ctx, state.ID.ValueString())
	if err := removeResultFile(state); err != nil {
		resp.Diagnostics.AddError("Deleting the result file failed", err.Error())
		return
	}
	if state.Mode.ValueString() == modeSync || state.Status.ValueString() == client.RouterCompleted || state.ID.IsNull() || unansweredQueued(state) {
		return // nothing runs, or nothing is named to cancel; the record ages out on the service
	}
	deleteTimeout, diags := state.Timeouts.Delete(ctx, defaultRouterDeleteTimeout)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	ctx = r.data.logContext(ctx)
	ctx, cancel := context.WithTimeout(ctx, deleteTimeout)
	defer cancel()
	held, err := state.heldRequest(r.data.client)
	if err != nil {
		resp.Diagnostics.AddError("Cancelling model request failed", err.Error())
		return
	}
	out, err := r.data.client.CancelModelRequest(ctx, held)
	switch {
	case client.Gone(err):
		return // aged out: nothing left to cancel
	case err != nil:
		resp.Diagnostics.AddError("Cancelling model request failed", r.data.redact(err.Error()))
		return
	}
	logInfo(ctx, "model request cancel answered", map[string]any{"request_id": state.ID.ValueString(), "status": out.Status, "http_status": out.HTTPCode})
}

// ImportState takes provider/model/request_id, or an identity with model and id.
func (r *routerRequestResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	i := strings.LastIndex(req.ID, "/")
	model, id := "", ""
	if i > 0 {
		model, id = req.ID[:i], req.ID[i+1:]
	}
	if ids, byIdentity := importedIdentity(ctx, req, &resp.Diagnostics, routerRequestIdentity...); byIdentity {
		model, id = ids[0], ids[1]
	}
	if resp.Diagnostics.HasError() {
		return
	}
	if err := client.ValidateModelID(model); err != nil || client.ValidateRouterRequestID(id) != nil {
		resp.Diagnostics.AddError("Invalid import id",
			fmt.Sprintf("Import svc_router_request as provider/model/request_id, e.g. demo/echo/0b0c8f2e-0000-4000-8000-000000000000, "+
				"or by an identity with model and id; got %q.", model+"/"+id))
		return
	}
	// Only queued requests have a record to import. The input is not in that record, so the
	// first plan after import adopts the configured input in place, without calling the model.
	for name, v := range map[string]any{"id": id, "model": model, "mode": modeQueued, "validate_input": true, "wait_for_completion": true, "replayed": false} {
		resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root(name), v)...)
	}
	resp.Diagnostics.Append(setIdentityFromState(ctx, resp.State, resp.Identity, routerRequestIdentity...)...)
}
