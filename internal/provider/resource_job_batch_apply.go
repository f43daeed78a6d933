package provider

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// batchApplyRequest is what a create or an update of svc_job_batch acts on.
type batchApplyRequest struct {
	planned jobBatchModel
	held    *jobBatchModel // the prior state; nil on create
	config  batchApplyConfig
	book    batchBook // the bookkeeping state holds; empty on create
	update  bool
}

// batchApplyConfig is what an apply reads of the configuration: the write-only values, which the
// plan does not hold.
type batchApplyConfig struct {
	known    bool // the configuration is a known object
	rows     any  // the rows as plain Go values (goValueOf)
	rowsErr  error
	apiKeyWO types.String
}

// batchApplyConfigOf is an apply's batchApplyConfig, from the configuration's model; ok is
// whether the configuration could be read.
func batchApplyConfigOf(config jobBatchModel, ok bool) batchApplyConfig {
	if !ok {
		return batchApplyConfig{}
	}
	return batchApplyConfig{known: true, rows: config.Rows.Value, rowsErr: config.Rows.Err, apiKeyWO: config.PartnerAPIKeyWO}
}

// inputs are the configured rows against the template.
func (c batchApplyConfig) inputs(template string) ([]batchRowInput, error) {
	if c.rowsErr != nil {
		return nil, fmt.Errorf("rows: %w", c.rowsErr)
	}
	return batchRowInputsOf(template, c.rows)
}

// apply runs the rows the plan left unknown and sets state, once, to the plan with every row's
// result. Nothing a row does (failure, unknown outcome, timeout, interrupt) is an error: an
// error from create taints the batch, and every row would run again. Errors are kept for what
// prevents anything from being sent (an unreadable plan, a bug).
func (r *jobBatchResource) apply(ctx context.Context, req batchApplyRequest, private privateSetter, diags *diag.Diagnostics) *jobBatchModel {
	if !req.config.known {
		diags.AddError("Reading the plan failed", "The plan of svc_job_batch is not a known object. Nothing was sent. This is a bug in the provider.")
		return nil
	}
	planned := req.planned
	inputs, err := req.config.inputs(planned.Workflow.ValueString()) // write-only: in the configuration alone
	if err != nil {
		diags.AddError("Invalid row", err.Error()+"\n\nNothing was sent.")
		return nil
	}
	pick := timeouts.Value.Create
	if req.update {
		pick = timeouts.Value.Update
	}
	limit, d := timeoutOf(ctx, planned.Timeouts, defaultBatchCreateTimeout, pick)
	if diags.Append(d...); diags.HasError() {
		return nil
	}
	held := batchHeld{results: map[string]batchResult{}, book: req.book}
	if req.held != nil && req.held.Results.Rows != nil {
		held.results = req.held.Results.Rows
	}
	if planned.ID.IsUnknown() {
		planned.ID = newBatchID()
	}
	data := r.data.withSecrets(req.config.apiKeyWO)
	ctx = data.logContext(ctx)
	e := newBatchEngine(data, &planned, req.config.apiKeyWO)
	tasks, kept := batchTasks(inputs, planned.Results.Rows, held)
	e.forgetRemoved(ctx, removedRows(inputs, held), planned.CancelOnDestroy.ValueBool())
	rows := e.run(ctx, limit, tasks)
	e.recordObjectTags(ctx, rows)

	results, book := make(map[string]batchResult, len(inputs)), make(batchBook, len(inputs))
	var succeeded, failed int64
	for key, v := range kept {
		results[key], book[key] = v, held.book[key]
		if row, ok := rowOfResult(v, held.book[key]); ok {
			succeeded, failed = countRow(row, succeeded, failed)
		}
	}
	for key, row := range rows {
		results[key], book[key] = row.result(), row.book()
		succeeded, failed = countRow(row, succeeded, failed)
	}
	planned.Results = batchResults{State: attr.ValueStateKnown, Rows: results}
	planned.Succeeded, planned.Failed = types.Int64Value(succeeded), types.Int64Value(failed)
	writeBatchBook(ctx, private, book, diags)
	e.report(ctx, diags, limit)
	return &planned
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
func batchTasks(inputs []batchRowInput, planned map[string]batchResult, held batchHeld) (tasks []batchTask, kept map[string]batchResult) {
	kept = map[string]batchResult{}
	for _, in := range inputs {
		if v, ok := planned[in.key]; ok && v.State == attr.ValueStateKnown {
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
