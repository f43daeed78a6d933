package provider

import (
	"context"
	"fmt"
	"maps"
	"time"

	"github.com/google/uuid"
	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64default"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

var (
	_ resource.Resource               = (*jobBatchResource)(nil)
	_ resource.ResourceWithConfigure  = (*jobBatchResource)(nil)
	_ resource.ResourceWithModifyPlan = (*jobBatchResource)(nil)
)

const (
	defaultBatchMaxInFlight   = 16
	defaultBatchCreateTimeout = 60 * time.Minute
	defaultBatchDeleteTimeout = 10 * time.Minute
)

var (
	batchTimeoutsOpts = timeouts.Opts{Create: true, Update: true, Delete: true}
	batchTimeoutsType = timeouts.Attributes(context.Background(), batchTimeoutsOpts).GetType()
)

// NewJobBatchResource returns the svc_job_batch resource.
func NewJobBatchResource() resource.Resource { return &jobBatchResource{} }

type jobBatchResource struct {
	data *providerData
}

func (r *jobBatchResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_job_batch"
}

func (r *jobBatchResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: jobBatchDoc,
		Attributes:          jobBatchAttributes(ctx),
	}
}

const jobBatchDoc = "Runs one workflow template over many rows of inputs, one v2 job per row, as one resource: " +
	"a batch of thousands of rows is one entry in state (the template stored once) instead of thousands of `svc_job`.\n\n" +
	"Changes are per row. An added row is submitted; a removed row is forgotten (canceled first if it still runs and " +
	"`cancel_on_destroy`); a row whose workflow changed in meaning (the template or its overrides) runs again; every " +
	"other row sends nothing. Reformatting the template or a row is no change. The plan shows the rows an apply runs " +
	"as known after apply in `results`.\n\n" +
	"Every rule of `svc_job` holds per row: one `Idempotency-Key` per row, drawn before its first attempt; a submission " +
	"whose outcome is unknown is reported with its key and never resent under a new one (state keeps that key); every job id reaches state as " +
	"soon as the service returned it, even when the apply times out or is interrupted (the next apply waits for those " +
	"rows and submits the rest); a finished row is settled for good: refreshing, planning or destroying a finished " +
	"batch sends no request. `terraform destroy` first refreshes the batch with a whole plan, which for a batch whose " +
	"rows have ended changes nothing: `terraform destroy -refresh=false` skips it, and at 10,000 rows takes about half " +
	"the time (a row still running is canceled all the same, from state).\n\n" +
	"No row's outcome taints the batch: failed rows, unknown outcomes, a create timeout and Ctrl-C are warnings (the " +
	"first few rows in full, the rest counted), with every id kept. For a run that must go red, add " +
	"`lifecycle { postcondition { condition = self.failed == 0 } }`: it fails every plan after it too, and blocks the " +
	"other resources of the configuration, until the failed rows are run again (`rerun_failed = true`), changed or " +
	"removed. For a signal that blocks nothing, use a `check` block with the same condition: a warning at each plan " +
	"and apply. `rerun_failed = true` submits the failed rows again on the next apply and nothing else.\n\n" +
	"`results` is flat, for 10,000 rows' sake: a row's job `id`, `status`, `outputs` (asset ids by node id) and " +
	"`error` (one line). What the provider alone needs of a row (its input digest, the file names, sizes and hashes of " +
	"its outputs) is kept in the resource's private state, which Terraform stores without reading.\n\n" +
	"Use `svc_job` with `for_each` for a few rows that other resources use one by one; use `svc_job_batch` past a " +
	"hundred rows, where Terraform's cost per resource dominates."

// jobBatchAttributes is svc_job_batch's schema.
func jobBatchAttributes(ctx context.Context) map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"id": schema.StringAttribute{
			Computed: true, MarkdownDescription: "Batch id, drawn by the provider (the service has no batch object).",
			PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
		},
		"workflow": schema.StringAttribute{
			Required: true, CustomType: jsonSemanticType{},
			MarkdownDescription: "API-format workflow template as JSON, stored once. Formatting differences (whitespace, key " +
				"order, number spelling) are no change. A change in meaning runs every row again, in place.",
			Validators:    []validator.String{apiWorkflowValidator{}},
			PlanModifiers: []planmodifier.String{jsonKeepEquivalentState()},
		},
		"rows": schema.DynamicAttribute{
			Required: true, WriteOnly: true,
			MarkdownDescription: "Map from a row key to that row's input overrides, in the shape `provider::svc::workflow_set_inputs` " +
				"takes: `{ node_id = { input = value } }`. Each row is the template with its overrides applied. For example " +
				"`{ for r in csvdecode(file(\"rows.csv\")) : r.sku => { \"6\" = { text = r.prompt } } }`. A row naming a node " +
				"the template lacks is an error at plan time. Write-only: state and plans keep each row's digest (what tells a " +
				"changed row), not the rows, so 10,000 rows cost Terraform little to plan, and a row may hold an ephemeral " +
				"value. The plan shows the rows an apply runs as known after apply in `results`.",
		},
		"max_in_flight": schema.Int64Attribute{
			Optional: true, Computed: true, Default: int64default.StaticInt64(defaultBatchMaxInFlight),
			MarkdownDescription: fmt.Sprintf("Rows submitted or waited for at once (default %d). To keep the service "+
				"busy, set it above the number of jobs the service runs at once: its queue then holds the next jobs while "+
				"the provider notices that the last ones ended. Without an event stream it notices an end at its next "+
				"read, a second or more later, so short jobs need more: with jobs of half a second, four times the "+
				"service's number kept an apply within 15 %% of the time the service needs for its rows.", defaultBatchMaxInFlight),
			Validators: []validator.Int64{int64validator.Between(1, 1024)},
		},
		"cancel_on_destroy": schema.BoolAttribute{
			Optional: true, Computed: true, Default: booldefault.StaticBool(true),
			MarkdownDescription: "Cancel a row's job that still runs when the row or the batch is destroyed (default `true`). Finished rows are just forgotten.",
		},
		"rerun_failed": schema.BoolAttribute{
			Optional: true, Computed: true, Default: booldefault.StaticBool(false),
			MarkdownDescription: "Submit the rows that did not succeed (`failed`, `canceled`, `expired`, `rejected`) again on the " +
				"next apply, each under a new key, and nothing else; a row whose outcome was `unknown` is resent under its " +
				"own key, so it never runs twice. Default `false`. Turn it off again once they succeeded: while it is on, a " +
				"row that keeps failing is planned again at every apply.",
		},
		"output_dir": schema.StringAttribute{
			Optional: true,
			MarkdownDescription: "When set, every output is downloaded to `<output_dir>/<row key>/<name>` by asset id (a fresh " +
				"URL each time), streamed into place and verified against its `hash` when the service gives one. A file " +
				"missing at plan time (or of another size) is drift: the next apply downloads it again, without running the row. " +
				"The files are the batch's: removing a row, or destroying the batch, deletes the files downloaded for it " +
				"(other files in the directory are left alone).",
		},
		"validate": schema.BoolAttribute{
			Optional: true, Computed: true, Default: booldefault.StaticBool(defaultValidate),
			MarkdownDescription: "Check the workflow of each row an apply submits (added, changed, run again) at plan time " +
				"against the service's node classes, read from the v1 `GET /api/object_info` where the surface serves it: " +
				workflowCheckDoc + " A row's override of an input that neither the template's node nor its class has (a " +
				"misspelled input name, which the engine would ignore) is an error too. Each problem is reported once, with " +
				"the first rows that have it. When the surface does not serve object_info, the check is skipped with a " +
				"warning. " + validateDefaultDoc,
		},
		"partner_api_key_wo": schema.StringAttribute{
			Optional: true, WriteOnly: true,
			MarkdownDescription: "API key for partner nodes, sent as `extra_data.api_key_svc_org` with every row. Write-only: " +
				"never stored. Defaults to the provider's `partner_api_key`.",
		},
		"results":   batchResultsAttribute(),
		"succeeded": schema.Int64Attribute{Computed: true, MarkdownDescription: "How many rows succeeded."},
		"failed": schema.Int64Attribute{Computed: true, MarkdownDescription: "How many rows ended without success " +
			"(`failed`, `canceled`, `expired`, `rejected`, `unknown`). Rows still running or not submitted count in neither."},
		"timeouts": timeouts.Attributes(ctx, batchTimeoutsOpts),
	}
}

func (r *jobBatchResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.data = configureData(req.ProviderData, &resp.Diagnostics)
}

// ModifyPlan plans the rows an apply runs as unknown in results and keeps every other row as
// state holds it: rows added, changed in meaning, not submitted yet, still running (waited
// for), failed with rerun_failed, or succeeded with a file missing under output_dir.
func (r *jobBatchResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() {
		return // destroy
	}
	planned, okPlan := objectAttrs(req.Plan.Raw)
	config, okConfig := objectAttrs(req.Config.Raw)
	if !okPlan || !okConfig {
		return
	}
	planned = maps.Clone(planned)
	held, _ := objectAttrs(req.State.Raw)
	// rows is write-only: the configuration has it, the plan and state do not.
	if !planned["workflow"].IsFullyKnown() || !config["rows"].IsFullyKnown() {
		return // the framework has planned results and the counts unknown
	}
	inputs, err := batchRowInputs(stringAttr(planned, "workflow"), config["rows"])
	if err != nil {
		resp.Diagnostics.AddAttributeError(path.Root("rows"), "Invalid row", err.Error()+"\n\nNothing was sent.")
		return
	}
	if !checkRowDirs(planned, inputs, &resp.Diagnostics) {
		return
	}
	var plan *batchPlan
	submits := inputs // a new batch submits every row
	if held != nil {
		plan = planBatchRows(inputs, batchHeld{results: heldResults(held["results"]), book: readBatchBook(ctx, req.Private)}, batchPlanSettings{
			rerunFailed: boolAttr(planned, "rerun_failed"), outputDir: stringAttr(planned, "output_dir"),
		})
		submits = plan.submits
	}
	if boolAttr(planned, "validate") {
		r.data.checkBatchRowsAtPlan(ctx, stringAttr(planned, "workflow"), submits, &resp.Diagnostics)
	}
	if plan == nil {
		// A new batch runs every row: results stays wholly unknown, one value rather than one
		// per row for Terraform to carry and show.
		return
	}
	planned["results"] = tftypes.NewValue(batchResultsTyp, plan.results)
	planned["succeeded"], planned["failed"] = plan.counts()
	resp.Plan.Raw = tftypes.NewValue(req.Plan.Raw.Type(), planned)
	if plan.waiting > 0 {
		resp.Diagnostics.AddWarning(rowsStillRunningWarning(plan.waiting))
	}
}

// rowsStillRunningWarning is the plan's warning about rows whose job has not finished.
func rowsStillRunningWarning(rows int) (summary, detail string) {
	return "Rows still running: this apply waits for them",
		fmt.Sprintf("%d rows of the batch have a job that has not finished. Applying submits nothing for them: it waits "+
			"for those same jobs and fills in their results.", rows)
}

// checkRowDirs checks, when output_dir is set, that every row key can name a directory.
func checkRowDirs(planned map[string]tftypes.Value, inputs []batchRowInput, diags *diag.Diagnostics) bool {
	if err := rowDirError(stringAttr(planned, "output_dir"), inputs); err != nil {
		diags.AddAttributeError(path.Root("rows"), "Invalid row key", err.Error()+"\n\nNothing was sent.")
		return false
	}
	return true
}

// rowDirError is, when outputDir is set, why the first row key that cannot name a directory
// cannot; nil when every key can.
func rowDirError(outputDir string, inputs []batchRowInput) error {
	if outputDir == "" {
		return nil
	}
	for _, in := range inputs {
		if err := batchRowDirName(in.key); err != nil {
			return err
		}
	}
	return nil
}

type batchPlanSettings struct {
	rerunFailed bool
	outputDir   string
}

// batchPlan is the results an apply is planned to leave.
type batchPlan struct {
	results           map[string]tftypes.Value
	unknown           int             // rows the apply runs, waits for or downloads
	waiting           int             // of them, rows whose job still runs
	submits           []batchRowInput // of them, rows the apply submits
	succeeded, failed int64
}

func planBatchRows(inputs []batchRowInput, held batchHeld, s batchPlanSettings) *batchPlan {
	p := &batchPlan{results: make(map[string]tftypes.Value, len(inputs))}
	for _, in := range inputs {
		row, okRow := held.row(in.key)
		row = adoptInput(row, in)
		if okRow && !rowNeedsApply(row, in, s) {
			p.results[in.key] = held.results[in.key]
			p.count(row)
			continue
		}
		p.results[in.key] = tftypes.NewValue(batchRowType, tftypes.UnknownValue)
		p.unknown++
		if okRow && row.inFlight() && row.InputHash == in.hash {
			p.waiting++
		}
		if rowSubmitted(row, okRow, in, s) {
			p.submits = append(p.submits, in)
		}
	}
	return p
}

func (p *batchPlan) count(row *batchRow) {
	switch {
	case row.Status == "succeeded":
		p.succeeded++
	case row.failedRow():
		p.failed++
	}
}

// counts are the planned succeeded and failed: unknown when any row is.
func (p *batchPlan) counts() (succeeded, failed tftypes.Value) {
	if p.unknown > 0 {
		return tftypes.NewValue(tftypes.Number, tftypes.UnknownValue), tftypes.NewValue(tftypes.Number, tftypes.UnknownValue)
	}
	return tftypes.NewValue(tftypes.Number, p.succeeded), tftypes.NewValue(tftypes.Number, p.failed)
}

// rowSubmitted reports whether an apply that has something to do for a row submits it: a row
// new, changed or not submitted yet, or failed and to be run again (not one it only waits for
// or downloads again).
func rowSubmitted(row *batchRow, held bool, in batchRowInput, s batchPlanSettings) bool {
	return !held || row.InputHash != in.hash || row.Status == batchRowNotSubmitted || (row.failedRow() && s.rerunFailed)
}

// rowNeedsApply reports whether an apply has something to do for a row state holds.
func rowNeedsApply(row *batchRow, in batchRowInput, s batchPlanSettings) bool {
	switch {
	case row.InputHash != in.hash, row.Status == batchRowNotSubmitted, row.inFlight():
		return true
	case row.failedRow():
		return s.rerunFailed
	case row.Status == "succeeded" && s.outputDir != "":
		return !rowFilesPresent(s.outputDir, in.key, row)
	}
	return false
}

func (r *jobBatchResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	r.apply(ctx, batchApplyRequest{plan: req.Plan.Raw, config: batchApplyConfigOf(req.Config.Raw), state: tftypes.Value{}, book: batchBook{}},
		batchApplyResponse{state: &resp.State.Raw, private: resp.Private, diags: &resp.Diagnostics})
}

func (r *jobBatchResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	r.apply(ctx, batchApplyRequest{plan: req.Plan.Raw, config: batchApplyConfigOf(req.Config.Raw), state: req.State.Raw, book: readBatchBook(ctx, req.Private), update: true},
		batchApplyResponse{state: &resp.State.Raw, private: resp.Private, diags: &resp.Diagnostics})
}

// batchTimeout reads a timeout from the timeouts value v, or def when it is not set.
func batchTimeout(ctx context.Context, v tftypes.Value, def time.Duration,
	timeout func(timeouts.Value, context.Context, time.Duration) (time.Duration, diag.Diagnostics),
) (time.Duration, diag.Diagnostics) {
	if !v.IsKnown() || v.IsNull() {
		return def, nil
	}
	value, err := batchTimeoutsType.ValueFromTerraform(ctx, v)
	t, ok := value.(timeouts.Value)
	if err != nil || !ok {
		var diags diag.Diagnostics
		diags.AddError("Reading timeouts failed", fmt.Sprintf("svc_job_batch's timeouts could not be read (%v). This is a bug in the provider.", err))
		return 0, diags
	}
	return timeout(t, ctx, def)
}

// newBatchID is the id of a new batch.
func newBatchID() tftypes.Value { return tftypes.NewValue(tftypes.String, uuid.NewString()) }
