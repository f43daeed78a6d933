package provider

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/svc-org/terraform-provider-svc/internal/client"
	"github.com/svc-org/terraform-provider-svc/internal/workflow"
)

var (
	_ resource.ResourceWithConfigure   = (*promptResource)(nil)
	_ resource.ResourceWithImportState = (*promptResource)(nil)
	_ resource.ResourceWithIdentity    = (*promptResource)(nil)
	_ resource.ResourceWithModifyPlan  = (*promptResource)(nil)
)

const defaultPromptCreateTimeout = 30 * time.Minute

// promptWait tunes the wait for a prompt; tests shorten the intervals. The defaults poll the
// status every 2 s without a socket (the polling interval the service suggests) and every 10 s while it is connected.
var promptWait = client.PromptWaitOptions{}

// NewPromptResource returns the svc_prompt resource.
func NewPromptResource() resource.Resource { return &promptResource{} }

type promptResource struct {
	data *providerData
}

type promptModel struct {
	ID                types.String   `tfsdk:"id"`
	Workflow          jsonSemantic   `tfsdk:"workflow"`
	PartnerAPIKeyWO   types.String   `tfsdk:"partner_api_key_wo"`
	Validate          types.Bool     `tfsdk:"validate"`
	WaitForCompletion types.Bool     `tfsdk:"wait_for_completion"`
	Timeouts          timeouts.Value `tfsdk:"timeouts"`
	Status            types.String   `tfsdk:"status"`
	Outputs           types.List     `tfsdk:"outputs"`
	OutputsComplete   types.Bool     `tfsdk:"outputs_complete"`
	OutputsOmitted    types.Int64    `tfsdk:"outputs_omitted"`
	Error             types.Object   `tfsdk:"error"`
	Interrupted       types.Bool     `tfsdk:"interrupted"`
}

// promptOutputModel is one file a node reported.
type promptOutputModel struct {
	NodeID    string `tfsdk:"node_id"`
	Filename  string `tfsdk:"filename"`
	Subfolder string `tfsdk:"subfolder"`
	Type      string `tfsdk:"type"`
	Kind      string `tfsdk:"kind"`
}

var promptOutputAttrTypes = map[string]attr.Type{
	"node_id":   types.StringType,
	"filename":  types.StringType,
	"subfolder": types.StringType,
	"type":      types.StringType,
	"kind":      types.StringType,
}

// promptErrorModel is the execution_error message.
type promptErrorModel struct {
	NodeID           string `tfsdk:"node_id"`
	NodeType         string `tfsdk:"node_type"`
	ExceptionType    string `tfsdk:"exception_type"`
	ExceptionMessage string `tfsdk:"exception_message"`
	Traceback        string `tfsdk:"traceback"`
}

var promptErrorAttrTypes = map[string]attr.Type{
	"node_id":           types.StringType,
	"node_type":         types.StringType,
	"exception_type":    types.StringType,
	"exception_message": types.StringType,
	"traceback":         types.StringType,
}

// promptRecordAttrTypes are the types of promptRecordAttributes: what a resumed wait plans
// unknown.
var promptRecordAttrTypes = map[string]attr.Type{
	"status":           types.StringType,
	"outputs":          types.ListType{ElemType: types.ObjectType{AttrTypes: promptOutputAttrTypes}},
	"outputs_omitted":  types.Int64Type,
	"outputs_complete": types.BoolType,
	"error":            types.ObjectType{AttrTypes: promptErrorAttrTypes},
	"interrupted":      types.BoolType,
}

// promptRecordAttributes is what svc_prompt reads of the prompt: read-only, and kept from state on
// an in-place update (keepStateForUnknown): outputs_complete and interrupted too, since they only
// change when the prompt runs again, which is a replacement.
func promptRecordAttributes() map[string]schema.Attribute {
	return keepStateForUnknown(map[string]schema.Attribute{
		"status": schema.StringAttribute{
			Computed: true,
			MarkdownDescription: "Last status read: `success`, `error`, `non_retryable_error`, `lost`, `cancelled` when " +
				"finished (or `completed`, `failed` from the older interface revision); anything else means in flight.",
		},
		"outputs": schema.ListNestedAttribute{
			Computed: true,
			MarkdownDescription: "Files the workflow's nodes reported in `executed` socket messages, in arrival order. " +
				"Download one with `svc_output_file`'s `view`. A file reported twice is listed once, and at most the first 1000 " +
				"are kept (`outputs_omitted` counts the rest): every value in state is walked at every plan.",
			NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
				"node_id":   schema.StringAttribute{Computed: true, MarkdownDescription: "Node that produced the file."},
				"filename":  schema.StringAttribute{Computed: true, MarkdownDescription: "File name, for `/api/view`."},
				"subfolder": schema.StringAttribute{Computed: true, MarkdownDescription: "Subfolder (usually empty)."},
				"type":      schema.StringAttribute{Computed: true, MarkdownDescription: "`output` for final files, `temp` for previews."},
				"kind":      schema.StringAttribute{Computed: true, MarkdownDescription: "`image`, `video`, `audio`, or the name of the list the node used."},
			}},
		},
		"outputs_omitted": schema.Int64Attribute{
			Computed:            true,
			MarkdownDescription: "How many distinct files were reported beyond the 1000 kept in `outputs`.",
		},
		"outputs_complete": schema.BoolAttribute{
			Computed: true,
			MarkdownDescription: "Whether the socket was connected for the whole run and delivered its terminal " +
				"message. Outputs come only from the socket: when `false`, some may be missing.",
		},
		"error": schema.SingleNestedAttribute{
			Computed:            true,
			MarkdownDescription: "The `execution_error` message; null unless execution failed.",
			Attributes: map[string]schema.Attribute{
				"node_id":           schema.StringAttribute{Computed: true, MarkdownDescription: "Failing node."},
				"node_type":         schema.StringAttribute{Computed: true, MarkdownDescription: "Failing node's class."},
				"exception_type":    schema.StringAttribute{Computed: true, MarkdownDescription: "Exception type, e.g. `RuntimeError`."},
				"exception_message": schema.StringAttribute{Computed: true, MarkdownDescription: "Exception message."},
				"traceback":         schema.StringAttribute{Computed: true, MarkdownDescription: "Traceback."},
			},
		},
		"interrupted": schema.BoolAttribute{
			Computed:            true,
			MarkdownDescription: "Whether the socket reported `execution_interrupted` (cancelled by a user).",
		},
	})
}

func (r *promptResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_prompt"
}

func (r *promptResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	attrs := promptArgumentAttributes(ctx)
	maps.Copy(attrs, promptRecordAttributes())
	resp.Schema = schema.Schema{
		// The rest of svc_prompt's description is prose for its page: templates/resources/prompt.md.tmpl.
		MarkdownDescription: "Runs an API-format workflow through the deprecated v1 interface: `POST /api/prompt`, then follows it on the " +
			"real-time socket with status polling as the truth (`GET /api/job/{prompt_id}/status`). Prefer `svc_job` (v2) where the " +
			"service offers it." + promptDefaultsDoc,
		Attributes: attrs,
	}
}

// promptArgumentAttributes are what svc_prompt's configuration sets, and its id.
func promptArgumentAttributes(ctx context.Context) map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"id": schema.StringAttribute{
			Computed:            true,
			PlanModifiers:       []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			MarkdownDescription: "The `prompt_id`, in state as soon as the service answered with it.",
		},
		"workflow": schema.StringAttribute{
			Required: true, CustomType: jsonSemanticType{},
			MarkdownDescription: "API-format workflow graph as JSON (node id to `{class_type, inputs}`), sent as `prompt`. " +
				"Formatting differences (whitespace, key order, number spelling such as `1`, `1.0`, `1e0`) are not changes: they plan nothing and send nothing. Changing it replaces the prompt (runs it again).",
			Validators:    []validator.String{apiWorkflowValidator{}},
			PlanModifiers: []planmodifier.String{jsonKeepEquivalentState(), replaceUnlessImported("Changing the workflow runs it again.")},
		},
		"partner_api_key_wo": schema.StringAttribute{
			Optional: true, Sensitive: true, WriteOnly: true,
			MarkdownDescription: "API key for partner nodes, sent as `extra_data.api_key_svc_org`. Write-only: never stored. Defaults to the provider's `partner_api_key`, " +
				"else to its `api_key` (the v1 interface uses the same key for the service and for partner nodes, and that key already goes to the service).",
		},
		"validate": schema.BoolAttribute{
			Optional: true, Computed: true, Default: booldefault.StaticBool(defaultValidate),
			MarkdownDescription: "Check the workflow at plan time against the service's node classes (`GET /api/object_info`, read once per run): " +
				workflowCheckDoc + " Skipped when " +
				"the provider's settings are only known at apply. " + validateDefaultDoc,
		},
		"wait_for_completion": schema.BoolAttribute{
			Optional: true, Computed: true, Default: booldefault.StaticBool(true),
			MarkdownDescription: "Wait for a terminal status during apply (default `true`). Outputs are only gathered while waiting: the v1 " +
				"interface reports them on the socket only, so with `false` the outputs stay empty, `status` is read once after submitting, and " +
				"refresh only updates `status`. Turned on while the prompt in state still runs, the next apply follows that same prompt, in place.",
		},
		"timeouts": timeouts.Attributes(ctx, timeouts.Opts{Create: true, CreateDescription: promptCreateTimeoutDoc}),
	}
}

// promptIdentity names a prompt on the service: its id.
var promptIdentity = []string{"id"}

func (r *promptResource) IdentitySchema(_ context.Context, _ resource.IdentitySchemaRequest, resp *resource.IdentitySchemaResponse) {
	resp.IdentitySchema = stringIdentitySchema(
		identityAttribute{name: "id", description: "Prompt id (`prompt_id`)."},
	)
}

func (r *promptResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.data = configureData(req.ProviderData, &resp.Diagnostics)
}

// ModifyPlan validates a new or changed workflow against the service's node classes.
func (r *promptResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	r.data.checkWorkflowOnPlan(ctx, req, resp, submitsWhereChecked)
	planPromptResume(ctx, req, resp)
}

// Create connects the socket (when waiting), submits the prompt, saves its id in state at once,
// then either reads its status once or waits for it to end.
func (r *promptResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	defer func() {
		resp.Diagnostics.Append(setIdentityFromState(ctx, resp.State, resp.Identity, promptIdentity...)...)
	}()
	in, ok := readPromptCreateInput(ctx, req, &resp.Diagnostics)
	if !ok {
		return
	}
	plan := &in.plan
	// The write-only key is a secret of this apply: masked like the provider's in logs and errors.
	data := r.data.withSecrets(in.apiKeyWO)
	ctx = data.logContext(ctx)
	waitCtx, cancel := context.WithTimeout(ctx, in.timeout)
	defer cancel()

	// Connect first: the socket does not replay, and the outputs are only reported there.
	var sock *client.Socket
	if plan.WaitForCompletion.ValueBool() {
		sock = data.dialPromptSocket(ctx, waitCtx, "socket unavailable; following the prompt by status polling only (outputs will be missing)")
		defer sock.Close()
	}
	sub, ok := r.startPrompt(ctx, waitCtx, data, plan, in.apiKeyWO, resp)
	if !ok {
		return
	}
	// The prompt's id goes back to Terraform when Create returns: its entry is then Terraform's.
	defer sub.end(ctx, true, nil)
	if !plan.WaitForCompletion.ValueBool() {
		// Not waiting, but status is known now: left null, the next refresh would show it as a change.
		r.readStatusAfterSubmit(waitCtx, data, plan, &resp.Diagnostics)
		resp.Diagnostics.Append(resp.State.Set(ctx, plan)...)
		return
	}
	res, waitErr := data.followPrompt(ctx, waitCtx, plan.ID.ValueString(), plan.Workflow.ValueString(), sock)
	if sub.adopted {
		res.OutputsComplete = false // what the socket sent before this run connected is not seen again
	}
	r.setResult(ctx, plan, res, &resp.Diagnostics)
	resp.Diagnostics.Append(resp.State.Set(ctx, plan)...)
	data.reportPromptCreateEnd(ctx, &resp.Diagnostics, res, waitErr, in.timeout)
}

// promptCreateInput is what Create reads from the request: the plan, the write-only key (only
// in the configuration) and the create timeout.
type promptCreateInput struct {
	plan     promptModel
	apiKeyWO types.String
	timeout  time.Duration
}

func readPromptCreateInput(ctx context.Context, req resource.CreateRequest, diags *diag.Diagnostics) (promptCreateInput, bool) {
	var in promptCreateInput
	diags.Append(req.Plan.Get(ctx, &in.plan)...)
	diags.Append(req.Config.GetAttribute(ctx, path.Root("partner_api_key_wo"), &in.apiKeyWO)...)
	if diags.HasError() {
		return in, false
	}
	timeout, d := in.plan.Timeouts.Create(ctx, defaultPromptCreateTimeout)
	diags.Append(d...)
	in.timeout = timeout
	return in, !diags.HasError()
}

// dialPromptSocket connects the real-time socket under a new client id. Without it the prompt is
// still followed by status polling, so a failure is only logged (as unavailable) and the socket
// is nil.
func (d *providerData) dialPromptSocket(ctx, waitCtx context.Context, unavailable string) *client.Socket {
	sock, err := d.client.DialSocket(waitCtx, uuid.NewString())
	if err != nil {
		logWarn(ctx, unavailable, map[string]any{"error": err.Error()})
	}
	return sock
}

// startPrompt takes over the prompt an earlier, dead run submitted for this workflow (from the
// journal), else submits the prompt and journals its id; either way it saves the id in state at
// once: whatever happens while waiting, the prompt is not lost. It reports whether there is a
// prompt and the state was saved.
func (r *promptResource) startPrompt(ctx, waitCtx context.Context, data *providerData, plan *promptModel, apiKeyWO types.String, resp *resource.CreateResponse) (journaled, bool) {
	sub, adopted := data.journal.adoptPrompt(plan, &resp.Diagnostics)
	switch {
	case resp.Diagnostics.HasError():
		return sub, false
	case adopted:
		logInfo(ctx, "prompt adopted from the journal", map[string]any{"prompt_id": sub.id})
		warnPromptAdopted(&resp.Diagnostics, sub)
	default:
		answer, err := data.client.SubmitPrompt(waitCtx, client.SubmitPromptInput{
			Workflow:  json.RawMessage(plan.Workflow.ValueString()),
			ExtraData: data.promptExtraData(apiKeyWO),
		})
		if err != nil {
			resp.Diagnostics.AddError(errorSummary(err, familyService, "Prompt submission failed"), data.redact(data.orNotSent(err, withSettingHint(describePromptSubmitError(err), err, familyService))))
			return sub, false
		}
		logInfo(ctx, "prompt submitted", map[string]any{"prompt_id": answer.PromptID, "request_id": answer.RequestID})
		sub = data.journal.recordPrompt(ctx, plan, answer.PromptID)
		sub.id = answer.PromptID
	}
	plan.ID = types.StringValue(sub.id)
	r.setResult(ctx, plan, &client.PromptResult{PromptID: sub.id}, &resp.Diagnostics)
	resp.Diagnostics.Append(resp.State.Set(ctx, plan)...)
	return sub, !resp.Diagnostics.HasError()
}

// followPrompt waits for a submitted prompt until waitCtx ends, logging its progress (each new
// status, each node the socket says runs, with its class from workflow); sock (nil: status
// polling only) stays the caller's to close.
func (d *providerData) followPrompt(ctx, waitCtx context.Context, id, workflowJSON string, sock *client.Socket) (*client.PromptResult, error) {
	opts := promptWait
	opts.OnStatus, opts.OnMessage = promptProgress(ctx, id, nodeClasses(workflowJSON))
	return d.client.WaitPrompt(waitCtx, id, sock, opts)
}

// nodeClasses maps the workflow's node ids to their classes (empty when it cannot be read).
func nodeClasses(workflowJSON string) map[string]string {
	classes := map[string]string{}
	g, err := workflow.Parse([]byte(workflowJSON))
	if err != nil {
		return classes
	}
	for id, n := range g {
		classes[id] = n.ClassType
	}
	return classes
}

// reportPromptCreateEnd turns the end of Create's wait into diagnostics. An interrupt (Ctrl-C)
// is a warning: the prompt keeps running, state keeps it untainted, and the next apply follows
// it. A failed wait or an unsuccessful prompt is an error (it taints the resource); a success
// whose outputs were capped or may be incomplete is a warning.
func (d *providerData) reportPromptCreateEnd(ctx context.Context, diags *diag.Diagnostics, res *client.PromptResult, waitErr error, limit time.Duration) {
	switch {
	case waitErr != nil && waitInterrupted(ctx, waitErr):
		diags.AddWarning("Prompt still running: the next apply waits for it", describePromptInterrupted(res.PromptID, res.Status))
		return
	case waitErr != nil:
		diags.AddError("Prompt did not finish", d.redact(describePromptWaitError(ctx, waitErr, res, limit)))
		return
	case !res.Succeeded():
		diags.AddError(fmt.Sprintf("Prompt %s", res.Status), d.redact(describeUnsuccessfulPrompt(res)))
		return
	}
	if res.OutputsDropped > 0 {
		diags.AddWarning("Prompt outputs were capped",
			fmt.Sprintf("Prompt %s reported more distinct files than the %d that outputs keeps; %d more were not recorded.",
				res.PromptID, client.MaxPromptOutputs, res.OutputsDropped))
	}
	if !res.OutputsComplete {
		diags.AddWarning("Prompt outputs may be incomplete",
			fmt.Sprintf("Prompt %s succeeded, but the socket was not connected for the whole run%s, and the v1 interface reports outputs only there. outputs lists the %d file(s) seen.",
				res.PromptID, socketGap(res), len(res.Outputs)))
	}
}

// readStatusAfterSubmit reads a prompt's status once, right after submitting it without waiting.
// The prompt id is already in state, so a failed read is a warning, never an error: the apply
// did what was asked. A 404 (an engine without the status route) leaves status null, as Read does.
func (r *promptResource) readStatusAfterSubmit(ctx context.Context, data *providerData, m *promptModel, diags *diag.Diagnostics) {
	st, err := data.client.GetPromptStatus(ctx, m.ID.ValueString())
	switch {
	case client.NotFound(err):
		logInfo(ctx, "prompt status not available (404); status stays unknown", map[string]any{"prompt_id": m.ID.ValueString()})
	case err != nil:
		diags.AddWarning("Reading prompt status failed",
			data.redact(fmt.Sprintf("Prompt %s was submitted and its id is in state; only reading its status failed, so status stays "+
				"empty until the next refresh reads it.\n\n%v", m.ID.ValueString(), err)))
	default:
		m.Status = types.StringValue(st.Status)
	}
}

// socketGap says why the socket missed part of the run, when it was reconnected.
func socketGap(res *client.PromptResult) string {
	if res.Redials == 0 {
		return ""
	}
	return fmt.Sprintf(" (it closed mid-run; %d reconnection attempt(s))", res.Redials)
}

// setResult copies what waiting learned into the model.
func (r *promptResource) setResult(ctx context.Context, m *promptModel, res *client.PromptResult, diags *diag.Diagnostics) {
	m.Status = types.StringValue(res.Status)
	if res.Status == "" {
		m.Status = types.StringNull()
	}
	list, omitted, d := promptOutputsValue(ctx, res.Outputs)
	diags.Append(d...)
	// The wait itself keeps at most client.MaxPromptOutputs and only counts the rest: those are
	// omitted too.
	m.Outputs, m.OutputsOmitted = list, types.Int64Value(int64(omitted+res.OutputsDropped))
	m.OutputsComplete = types.BoolValue(res.OutputsComplete)
	m.Interrupted = types.BoolValue(res.SocketOutcome == client.SocketInterrupted)
	m.Error = types.ObjectNull(promptErrorAttrTypes)
	if e := res.Error; e != nil {
		obj, d := types.ObjectValueFrom(ctx, promptErrorAttrTypes, promptErrorModel{NodeID: boundText(e.NodeID),
			NodeType: boundText(e.NodeType), ExceptionType: boundText(e.ExceptionType),
			ExceptionMessage: boundText(e.ExceptionMessage), Traceback: boundTail(e.Traceback, maxTracebackInState)})
		diags.Append(d...)
		m.Error = obj
	}
}

// promptOutputsValue is the outputs list kept in state: each file once (the socket may report
// it more than once), at most maxOutputsInState, every text bounded; omitted counts the
// distinct files left out.
func promptOutputsValue(ctx context.Context, outs []client.PromptOutput) (types.List, int, diag.Diagnostics) {
	kept, omitted := uniqueBounded(outs, func(o client.PromptOutput) string {
		return o.NodeID + "\x00" + o.Filename + "\x00" + o.Subfolder + "\x00" + o.Type
	})
	models := make([]promptOutputModel, 0, len(kept))
	for _, o := range kept {
		models = append(models, promptOutputModel{NodeID: boundText(o.NodeID), Filename: boundText(o.Filename),
			Subfolder: boundText(o.Subfolder), Type: boundText(o.Type), Kind: boundText(o.Kind)})
	}
	list, diags := types.ListValueFrom(ctx, types.ObjectType{AttrTypes: promptOutputAttrTypes}, models)
	return list, omitted, diags
}

func (r *promptResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	defer func() {
		resp.Diagnostics.Append(setIdentityFromState(ctx, resp.State, resp.Identity, promptIdentity...)...)
	}()
	var state promptModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	ctx = r.data.logContext(ctx)
	if r.data.configUnknown {
		return // the provider's settings are not known during this plan: keep state
	}
	// The prompt is in Terraform's state: its journal entry is never adopted again.
	r.data.journal.confirm(ctx, state.ID.ValueString())
	readCtx, cancel := r.data.readContext(ctx)
	defer cancel()
	st, err := r.data.client.GetPromptStatus(readCtx, state.ID.ValueString())
	switch {
	case client.NotFound(err):
		// Either the engine lacks the route or the record aged out: neither is drift.
		logInfo(ctx, "prompt status not available (404); keeping state as it is", map[string]any{"prompt_id": state.ID.ValueString()})
		return
	case err != nil:
		resp.Diagnostics.AddError(errorSummary(err, familyService, "Reading prompt status failed"), r.data.describeReadError(readCtx, err, familyService))
		return
	}
	state.Status = types.StringValue(st.Status)
	if state.Outputs.IsNull() {
		r.setResult(ctx, &state, &client.PromptResult{Status: st.Status}, &resp.Diagnostics)
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

// Update changes provider-side settings (validate, wait_for_completion, timeouts), and waits for
// a prompt still running (planPromptResume). Nothing is ever submitted.
func (r *promptResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	defer func() {
		resp.Diagnostics.Append(setIdentityFromState(ctx, resp.State, resp.Identity, promptIdentity...)...)
	}()
	var plan, state promptModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if plan.WaitForCompletion.ValueBool() && promptStillRunning(state) {
		r.resumePromptWait(ctx, &plan, state, &resp.Diagnostics)
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

// Delete forgets the prompt, and its journal entry: the v1 interface has no cancel route.
func (r *promptResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var id types.String
	resp.Diagnostics.Append(req.State.GetAttribute(ctx, path.Root("id"), &id)...)
	r.data.journal.forget(ctx, id.ValueString())
}

// ImportState takes the prompt_id, or an identity with it.
func (r *promptResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	id := req.ID
	if ids, byIdentity := importedIdentity(ctx, req, &resp.Diagnostics, promptIdentity...); byIdentity {
		id = ids[0]
	}
	if resp.Diagnostics.HasError() {
		return
	}
	if strings.TrimSpace(id) == "" {
		resp.Diagnostics.AddError("Invalid import id", "Import svc_prompt by prompt_id, or by an identity with id.")
		return
	}
	// Import learns the status only: outputs were reported on the socket while the prompt ran.
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), id)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("validate"), true)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("wait_for_completion"), true)...)
	resp.Diagnostics.Append(setIdentityFromState(ctx, resp.State, resp.Identity, promptIdentity...)...)
}

// describePromptSubmitError explains a failed submission and what the user can do about it.
func describePromptSubmitError(err error) string {
	var unknown *client.UnknownOutcomeError
	var rejected *client.PromptRejectedError
	switch {
	case errors.As(err, &unknown):
		return fmt.Sprintf("The submission was sent but no definitive answer came back, so the prompt may or may not be running.\n\n"+
			"Cause: %v\n\n"+
			"The v1 interface has no idempotency key, so the provider does not resubmit: a second submission could run (and bill) the "+
			"workflow twice. The v1 interface cannot list prompts, so the provider cannot look for it: if you learn its "+
			"prompt_id (the service's history or logs), bring it under management with `terraform import <address> <prompt_id>`; "+
			"apply again only if you accept that the workflow may run twice.", unknown.Cause)
	case errors.As(err, &rejected):
		return fmt.Sprintf("The service refused the prompt; nothing runs.\n\n%v", rejected)
	case client.RefusedForNow(err):
		// Not an unknown outcome (that case is above): the service declined the prompt for now.
		return fmt.Sprintf("The service did not take the prompt; nothing runs. Apply again later.\n\n%v", err)
	}
	return err.Error()
}

func describePromptWaitError(ctx context.Context, err error, res *client.PromptResult, limit time.Duration) string {
	why := whyWaitEnded(ctx, err, limit, "Following the prompt failed")
	status := res.Status
	if status == "" {
		status = "in flight"
	}
	return fmt.Sprintf("%s while prompt %s was %s. The prompt may keep running on the service; its id is saved in state "+
		"and the resource is tainted, so nothing that uses it goes on.\n\n"+
		"- To keep this prompt: `terraform untaint <address>`, then `terraform apply`. That apply submits nothing: it "+
		"follows prompt %[2]s by its id until it ends (outputs it reported meanwhile are not seen again).\n"+
		"- Left tainted, the next `terraform apply` submits the workflow again (a second, billed run).",
		why, res.PromptID, status)
}

func describeUnsuccessfulPrompt(res *client.PromptResult) string {
	var b strings.Builder
	switch {
	case res.SocketOutcome == client.SocketInterrupted || res.Status == client.PromptCancelled:
		fmt.Fprintf(&b, "Prompt %s was interrupted (cancelled) before it finished.", res.PromptID)
	case res.Status == client.PromptNonRetryableError:
		fmt.Fprintf(&b, "Prompt %s failed with non_retryable_error: the service says retrying will not help; change the workflow or its inputs.", res.PromptID)
	case res.Status == client.PromptLost:
		fmt.Fprintf(&b, "Prompt %s was lost by the service before it finished.", res.PromptID)
	default:
		fmt.Fprintf(&b, "Prompt %s failed (status %s).", res.PromptID, res.Status)
	}
	if e := res.Error; e != nil {
		b.WriteString("\n\n")
		if e.NodeID != "" || e.NodeType != "" {
			fmt.Fprintf(&b, "Node %q (%s) raised ", e.NodeID, e.NodeType)
		}
		fmt.Fprintf(&b, "%s: %s", e.ExceptionType, e.ExceptionMessage)
		if e.Traceback != "" {
			fmt.Fprintf(&b, "\n\nTraceback (last lines):\n%s", lastLines(e.Traceback, 6))
		}
	} else if res.Status != client.PromptCancelled {
		b.WriteString("\n\nThe socket did not deliver an execution_error with the details.")
	}
	b.WriteString("\n\nThe prompt id is saved in state and the resource is tainted: the next apply submits the workflow again.")
	return b.String()
}
