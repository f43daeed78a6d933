package provider

import (
	"context"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"
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

// svc_job_batch's attribute names, in one place: its attribute table (jobBatchAttributeTable),
// the server layers and the codec name attributes through these.
const (
	jobBatchAttrID              = "id"
	jobBatchAttrWorkflow        = "workflow"
	jobBatchAttrRows            = "rows"
	jobBatchAttrMaxInFlight     = "max_in_flight"
	jobBatchAttrCancelOnDestroy = "cancel_on_destroy"
	jobBatchAttrRerunFailed     = "rerun_failed"
	jobBatchAttrOutputDir       = "output_dir"
	jobBatchAttrValidate        = "validate"
	jobBatchAttrPartnerAPIKeyWO = "partner_api_key_wo"
	jobBatchAttrResults         = "results"
	jobBatchAttrSucceeded       = "succeeded"
	jobBatchAttrFailed          = "failed"
	jobBatchAttrTimeouts        = "timeouts"
)

// The attribute names of a results element (batchRowAttrTypes), for its type and its codec.
const (
	batchResultAttrID      = "id"
	batchResultAttrStatus  = "status"
	batchResultAttrOutputs = "outputs"
	batchResultAttrError   = "error"
)

// jobBatchDoc is the first paragraph of svc_job_batch's description; the rest is prose for its
// page: templates/resources/job_batch.md.tmpl.
const jobBatchDoc = "Runs one workflow template over many rows of inputs, one v2 job per row, as one resource: a batch of " +
	"thousands of rows is one entry in state (the template stored once) instead of thousands of " +
	"`svc_job`."

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
		resp.Diagnostics.AddAttributeError(path.Root(jobBatchAttrRows), "Invalid row", err.Error()+"\n\nNothing was sent.")
		return
	}
	if !checkRowDirs(planned.OutputDir.ValueString(), inputs, &resp.Diagnostics) {
		return
	}
	files, ok := outputDirAtPlan(ctx, jobBatchAttrOutputDir, planned.OutputDir.ValueString(), okState, &resp.Diagnostics)
	if !ok {
		return
	}
	if err := r.data.checkBatchJournal(planned.OutputDir.ValueString()); err != nil {
		resp.Diagnostics.AddAttributeError(path.Root(jobBatchAttrOutputDir), "Journal of submissions cannot be used", journalError(err))
		return
	}
	var plan *batchPlan
	submits := inputs // a new batch submits every row
	if okState {
		plan = planBatchRows(inputs, batchHeld{results: held.Results.Rows, book: readBatchBook(ctx, req.Private)}, planned.settings(files))
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
func (m *jobBatchModel) settings(files destInventory) batchPlanSettings {
	return batchPlanSettings{rerunFailed: m.RerunFailed.ValueBool(), outputDir: m.OutputDir.ValueString(), files: files}
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
		diags.AddAttributeError(path.Root(jobBatchAttrRows), "Invalid row key", err.Error()+"\n\nNothing was sent.")
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
	files       destInventory // what output_dir holds; nil: the local directory, looked at file by file
}

// inventory is what output_dir holds.
func (s batchPlanSettings) inventory() destInventory {
	if s.files != nil {
		return s.files
	}
	return dirDest(s.outputDir)
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
		return !rowFilesPresent(s.inventory(), in.key, row)
	}
	return false
}
