package provider

import (
	"context"
	"fmt"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"time"

	"github.com/google/uuid"
	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
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
		Attributes:          jobBatchAttributes(),
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
	planned, okPlan := decodeJobBatch(req.Plan.Raw)
	config, okConfig := decodeJobBatch(req.Config.Raw)
	if !okPlan || !okConfig {
		return
	}
	held, okState := decodeJobBatch(req.State.Raw)
	// rows is write-only: the configuration has it, the plan and state do not.
	if planned.Workflow.IsUnknown() || !config.Rows.Known {
		return // the framework has planned results and the counts unknown
	}
	workflow := planned.Workflow.ValueString()
	inputs, err := batchApplyConfig{known: true, rows: config.Rows.Value, rowsErr: config.Rows.Err}.inputs(workflow)
	if err != nil {
		resp.Diagnostics.AddAttributeError(path.Root("rows"), "Invalid row", err.Error()+"\n\nNothing was sent.")
		return
	}
	if !checkRowDirs(planned.OutputDir.ValueString(), inputs, &resp.Diagnostics) {
		return
	}
	var plan *batchPlan
	submits := inputs // a new batch submits every row
	if okState {
		plan = planBatchRows(inputs, batchHeld{results: held.Results.Rows, book: readBatchBook(ctx, req.Private)}, planned.settings())
		submits = plan.submits
	}
	if planned.Validate.ValueBool() {
		r.data.checkBatchRowsAtPlan(ctx, workflow, submits, &resp.Diagnostics)
	}
	if plan == nil {
		// A new batch runs every row: results stays wholly unknown, one value rather than one
		// per row for Terraform to carry and show.
		return
	}
	plan.setOn(&planned)
	value, err := encodeJobBatch(&planned)
	if err != nil {
		resp.Diagnostics.AddError("Planning the batch failed", err.Error()+"\n\nNothing was sent. This is a bug in the provider.")
		return
	}
	resp.Plan.Raw = value
	if plan.waiting > 0 {
		resp.Diagnostics.AddWarning(rowsStillRunningWarning(plan.waiting))
	}
}

// settings are what a plan of the rows reads of the batch's settings.
func (m *jobBatchModel) settings() batchPlanSettings {
	return batchPlanSettings{rerunFailed: m.RerunFailed.ValueBool(), outputDir: m.OutputDir.ValueString()}
}

// rowsStillRunningWarning is the plan's warning about rows whose job has not finished.
func rowsStillRunningWarning(rows int) (summary, detail string) {
	return "Rows still running: this apply waits for them",
		fmt.Sprintf("%d rows of the batch have a job that has not finished. Applying submits nothing for them: it waits "+
			"for those same jobs and fills in their results.", rows)
}

// checkRowDirs checks, when output_dir is set, that every row key can name a directory.
func checkRowDirs(outputDir string, inputs []batchRowInput, diags *diag.Diagnostics) bool {
	if err := rowDirError(outputDir, inputs); err != nil {
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
	results           map[string]batchResult
	unknown           int             // rows the apply runs, waits for or downloads
	waiting           int             // of them, rows whose job still runs
	submits           []batchRowInput // of them, rows the apply submits
	succeeded, failed int64
}

func planBatchRows(inputs []batchRowInput, held batchHeld, s batchPlanSettings) *batchPlan {
	p := &batchPlan{results: make(map[string]batchResult, len(inputs))}
	for _, in := range inputs {
		row, okRow := held.row(in.key)
		row = adoptInput(row, in)
		if okRow && !rowNeedsApply(row, in, s) {
			p.results[in.key] = held.results[in.key]
			p.count(row)
			continue
		}
		p.results[in.key] = batchResult{State: attr.ValueStateUnknown}
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

// setOn sets the planned results and counts on m: the counts unknown when any row is.
func (p *batchPlan) setOn(m *jobBatchModel) {
	m.Results = batchResults{State: attr.ValueStateKnown, Rows: p.results}
	m.Succeeded, m.Failed = types.Int64Unknown(), types.Int64Unknown()
	if p.unknown == 0 {
		m.Succeeded, m.Failed = types.Int64Value(p.succeeded), types.Int64Value(p.failed)
	}
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
	planned, okPlan := decodeJobBatch(req.Plan.Raw)
	if !okPlan {
		resp.Diagnostics.AddError("Reading the plan failed", "The plan of svc_job_batch is not a known object. Nothing was sent. This is a bug in the provider.")
		return
	}
	applied := r.apply(ctx, batchApplyRequest{planned: planned, config: batchApplyConfigOf(decodeJobBatch(req.Config.Raw)), book: batchBook{}},
		resp.Private, &resp.Diagnostics)
	saveJobBatch(&resp.State, applied, &resp.Diagnostics)
}

func (r *jobBatchResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	planned, okPlan := decodeJobBatch(req.Plan.Raw)
	held, okState := decodeJobBatch(req.State.Raw)
	if !okPlan || !okState {
		resp.Diagnostics.AddError("Reading the plan failed", "The plan of svc_job_batch is not a known object. Nothing was sent. This is a bug in the provider.")
		return
	}
	applied := r.apply(ctx, batchApplyRequest{planned: planned, held: &held, config: batchApplyConfigOf(decodeJobBatch(req.Config.Raw)),
		book: readBatchBook(ctx, req.Private), update: true}, resp.Private, &resp.Diagnostics)
	saveJobBatch(&resp.State, applied, &resp.Diagnostics)
}

// saveJobBatch sets state to m, when an apply left one (nil leaves state as it was).
func saveJobBatch(state *tfsdk.State, m *jobBatchModel, diags *diag.Diagnostics) {
	if m == nil {
		return
	}
	value, err := encodeJobBatch(m)
	if err != nil {
		diags.AddError("Saving the batch in state failed", err.Error()+"\n\nThis is a bug in the provider.")
		return
	}
	state.Raw = value
}

// newBatchID is the id of a new batch.
func newBatchID() types.String { return types.StringValue(uuid.NewString()) }
