package provider

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// batchApplyRequest is what a create or an update of svc_job_batch acts on.
type batchApplyRequest struct {
	plan, state tftypes.Value // state is the zero Value on create
	config      batchApplyConfig
	book        batchBook // the bookkeeping state holds; empty on create
	update      bool
}

// batchApplyConfig is what an apply reads of the configuration: the write-only values, which the
// plan does not hold.
type batchApplyConfig struct {
	known    bool // the configuration is a known object
	rows     any  // the rows as plain Go values (goValueOf)
	rowsErr  error
	apiKeyWO types.String
}

// batchApplyConfigOf reads an apply's batchApplyConfig from the configuration's value.
func batchApplyConfigOf(config tftypes.Value) batchApplyConfig {
	attrs, ok := objectAttrs(config)
	if !ok {
		return batchApplyConfig{}
	}
	rows, err := goValueOf(attrs["rows"])
	return batchApplyConfig{known: true, rows: rows, rowsErr: err, apiKeyWO: stringValueOf(attrs["partner_api_key_wo"])}
}

// inputs are the configured rows against the template.
func (c batchApplyConfig) inputs(template string) ([]batchRowInput, error) {
	if c.rowsErr != nil {
		return nil, fmt.Errorf("rows: %w", c.rowsErr)
	}
	return batchRowInputsOf(template, c.rows)
}

// batchApplyResponse is where an apply leaves the new state and its bookkeeping.
type batchApplyResponse struct {
	state   *tftypes.Value
	private privateSetter
	diags   *diag.Diagnostics
}

// apply runs the rows the plan left unknown and sets state, once, to the plan with every row's
// result. Nothing a row does (failure, unknown outcome, timeout, interrupt) is an error: an
// error from create taints the batch, and every row would run again. Errors are kept for what
// prevents anything from being sent (an unreadable plan, a bug).
func (r *jobBatchResource) apply(ctx context.Context, req batchApplyRequest, resp batchApplyResponse) {
	diags := resp.diags
	planned, okPlan := objectAttrs(req.plan)
	if !okPlan || !req.config.known {
		diags.AddError("Reading the plan failed", "The plan of svc_job_batch is not a known object. Nothing was sent. This is a bug in the provider.")
		return
	}
	planned = maps.Clone(planned)
	inputs, err := req.config.inputs(stringAttr(planned, "workflow")) // write-only: in the configuration alone
	if err != nil {
		diags.AddError("Invalid row", err.Error()+"\n\nNothing was sent.")
		return
	}
	pick := timeouts.Value.Create
	if req.update {
		pick = timeouts.Value.Update
	}
	limit, d := batchTimeout(ctx, planned["timeouts"], defaultBatchCreateTimeout, pick)
	if diags.Append(d...); diags.HasError() {
		return
	}
	held := batchHeld{results: map[string]tftypes.Value{}, book: req.book}
	if attrs, ok := objectAttrs(req.state); ok {
		held.results = heldResults(attrs["results"])
	}
	if !planned["id"].IsKnown() {
		planned["id"] = newBatchID()
	}
	data := r.data.withSecrets(req.config.apiKeyWO)
	ctx = data.logContext(ctx)
	e := newBatchEngine(data, planned, req.config.apiKeyWO)
	tasks, kept := batchTasks(inputs, heldResults(planned["results"]), held)
	e.forgetRemoved(ctx, removedRows(inputs, held), boolAttr(planned, "cancel_on_destroy"))
	rows := e.run(ctx, limit, tasks)

	results, book := make(map[string]tftypes.Value, len(inputs)), make(batchBook, len(inputs))
	var succeeded, failed int64
	for key, v := range kept {
		results[key], book[key] = v, held.book[key]
		if row, ok := batchRowOf(v, held.book[key]); ok {
			succeeded, failed = countRow(row, succeeded, failed)
		}
	}
	for key, row := range rows {
		results[key], book[key] = row.value(), row.book()
		succeeded, failed = countRow(row, succeeded, failed)
	}
	planned["results"] = tftypes.NewValue(batchResultsTyp, results)
	planned["succeeded"] = tftypes.NewValue(tftypes.Number, succeeded)
	planned["failed"] = tftypes.NewValue(tftypes.Number, failed)
	*resp.state = tftypes.NewValue(req.plan.Type(), planned)
	writeBatchBook(ctx, resp.private, book, diags)
	e.report(ctx, diags, limit)
}

func countRow(row *batchRow, succeeded, failed int64) (int64, int64) {
	switch {
	case row.Status == "succeeded":
		succeeded++
	case row.failedRow():
		failed++
	}
	return succeeded, failed
}

// batchTask is one row an apply acts on.
type batchTask struct {
	in   batchRowInput
	held *batchRow // the row state holds, if any
}

// batchTasks splits the configured rows into those the plan keeps (known in the planned
// results) and those the apply acts on, in row-key order.
func batchTasks(inputs []batchRowInput, planned map[string]tftypes.Value, held batchHeld) (tasks []batchTask, kept map[string]tftypes.Value) {
	kept = map[string]tftypes.Value{}
	for _, in := range inputs {
		if v, ok := planned[in.key]; ok && v.IsFullyKnown() {
			kept[in.key] = v
			continue
		}
		t := batchTask{in: in}
		if row, ok := held.row(in.key); ok {
			t.held = adoptInput(row, in)
		}
		tasks = append(tasks, t)
	}
	return tasks, kept
}

// removedRow is a row state holds that the configuration no longer has.
type removedRow struct {
	key string
	row *batchRow
}

func removedRows(inputs []batchRowInput, held batchHeld) []removedRow {
	configured := make(map[string]bool, len(inputs))
	for _, in := range inputs {
		configured[in.key] = true
	}
	var out []removedRow
	for _, key := range slices.Sorted(maps.Keys(held.results)) {
		if configured[key] {
			continue
		}
		if row, ok := held.row(key); ok {
			out = append(out, removedRow{key: key, row: row})
		}
	}
	return out
}
