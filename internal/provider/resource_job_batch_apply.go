package provider

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/google/uuid"
	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/svc-org/terraform-provider-svc/internal/client"
	"github.com/svc-org/terraform-provider-svc/internal/workflow"
)

// batchApplyRequest is what an apply of svc_job_batch acts on: a create (no prior state), an
// update, or a destroy (no plan).
type batchApplyRequest struct {
	planned *jobBatchModel // the plan; nil for a destroy
	held    *jobBatchModel // the prior state; nil on create
	config  batchApplyConfig
	book    batchBook // the bookkeeping state holds; empty on create
}

// applyBatch is svc_job_batch's one apply, whoever calls it (jobBatchServer for Terraform, the
// framework's Create, Update and Delete in tests): it creates, updates or destroys the batch and
// returns the new state, nil for none (a batch destroyed). An apply that cannot set a state
// keeps the prior one: nil on create, where the prior state is none.
func (r *jobBatchResource) applyBatch(ctx context.Context, req batchApplyRequest, private privateSetter, diags *diag.Diagnostics) *jobBatchModel {
	if req.planned == nil {
		if r.destroy(ctx, req, diags) {
			return nil
		}
		return req.held
	}
	if applied := r.apply(ctx, req, private, diags); applied != nil {
		return applied
	}
	return req.held
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

// batchRowInput is one row of svc_job_batch as configured: the template with the row's
// overrides applied, canonical, and the digest of that workflow, which is what decides whether
// the row changed.
type batchRowInput struct {
	key      string
	workflow []byte // canonical JSON of the template with the row's overrides applied
	hash     string // digest of workflow
}

// batchRowInputsOf is batchRowInputs of rows as plain Go values (goValueOf).
func batchRowInputsOf(template string, rows any) ([]batchRowInput, error) {
	byKey, err := batchRowOverrides(rows)
	if err != nil {
		return nil, err
	}
	out := make([]batchRowInput, 0, len(byKey))
	var tmpl *workflow.Template
	for _, key := range slices.Sorted(maps.Keys(byKey)) {
		if tmpl == nil {
			// The template is parsed once for every row (and not at all without rows).
			if tmpl, err = workflow.NewTemplate([]byte(template)); err != nil {
				return nil, fmt.Errorf("rows[%q]: %w", key, err)
			}
		}
		// The digest is of the canonical workflow: reformatting the template or a row, or
		// spelling a number another way, is no change.
		wf, err := tmpl.PatchCanonical(byKey[key])
		if err != nil {
			return nil, fmt.Errorf("rows[%q]: %w", key, err)
		}
		sum := sha256.Sum256(wf)
		out = append(out, batchRowInput{key: key, workflow: wf, hash: base64.RawURLEncoding.EncodeToString(sum[:18])})
	}
	return out, nil
}

// batchRowOverrides converts rows, as plain Go values, into each row's overrides: node id to
// input name to a plain Go value that encodes to the equivalent JSON.
func batchRowOverrides(rows any) (map[string]map[string]map[string]any, error) {
	byKey, ok := rows.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("rows must be a map of row key to an object of node id to an object of inputs, as { sku1 = { \"6\" = { text = \"a cat\" } } }")
	}
	out := make(map[string]map[string]map[string]any, len(byKey))
	for key, row := range byKey {
		nodes, ok := row.(map[string]any)
		if !ok && row != nil {
			return nil, fmt.Errorf("rows[%q] must be an object of node id to an object of inputs", key)
		}
		patches := make(map[string]map[string]any, len(nodes))
		for node, inputs := range nodes {
			in, ok := inputs.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("rows[%q][%q] must be an object of input name to value", key, node)
			}
			patches[node] = in
		}
		out[key] = patches
	}
	return out, nil
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
	planned := *req.planned
	inputs, err := req.config.inputs(planned.Workflow.ValueString()) // write-only: in the configuration alone
	if err != nil {
		diags.AddError("Invalid row", err.Error()+"\n\nNothing was sent.")
		return nil
	}
	pick := timeouts.Value.Create
	if req.held != nil {
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
	data := r.data.withSecrets(req.config.apiKeyWO)
	ctx = data.logContext(ctx)
	tasks, kept := batchTasks(inputs, planned.Results.Rows, held)
	// The journal decides a new batch's id: a create that adopts an earlier, dead create's rows
	// takes its id.
	bj, err := data.openBatchJournal(ctx, &planned.ID, planned.OutputDir.ValueString(), tasks, held)
	if err != nil {
		diags.AddError("Journal of submissions cannot be used", journalError(err))
		return nil
	}
	e := newBatchEngine(data, &planned, req.config.apiKeyWO)
	e.journal = bj
	e.forgetRemoved(ctx, removedRows(inputs, held), planned.CancelOnDestroy.ValueBool())
	rows := e.run(ctx, limit, tasks)
	bj.end(ctx, rows)
	e.leftovers(ctx, bj)
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

// newBatchID is the id of a new batch.
func newBatchID() types.String { return types.StringValue(uuid.NewString()) }

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
	in         batchRowInput
	held       *batchRow // the row state holds, if any
	journalErr error     // why the row's entry could not be journaled: it is not sent
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
		if _, ok := held.results[in.key]; ok { // a row new to state has nothing to adopt
			if row, ok := held.row(in.key); ok {
				t.held = adoptInput(row, in)
			}
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

// destroy cancels the rows that still run when cancel_on_destroy, waiting for them to stop, and
// removes the downloaded files (from a bucket, at most 1,000 objects per request); the finished
// rows of a batch send nothing. It reports whether the batch is gone: a row that did not stop is
// an error, and state keeps the batch.
func (r *jobBatchResource) destroy(ctx context.Context, req batchApplyRequest, diags *diag.Diagnostics) bool {
	held := req.held
	rows := batchHeld{results: held.Results.Rows, book: req.book}
	r.data.forgetBatch(ctx, held.ID.ValueString(), held.OutputDir.ValueString(), rows)
	e := &batchEngine{data: r.data, outputDir: held.OutputDir.ValueString(), maxInFlight: max(int(held.MaxInFlight.ValueInt64()), 1), rows: map[string]*batchRow{}}
	e.removeAllFiles(ctx, rows)
	running := runningRows(rows)
	if !held.CancelOnDestroy.ValueBool() || len(running) == 0 {
		e.report(ctx, diags, 0)
		return true
	}
	limit, d := timeoutOf(ctx, held.Timeouts, defaultBatchDeleteTimeout, timeouts.Value.Delete)
	if diags.Append(d...); diags.HasError() {
		return false
	}
	if r.data == nil {
		diags.AddError("Provider not configured", "The provider must be configured to cancel the rows that still run. This is a bug in the provider.")
		return false
	}
	ctx, cancel := context.WithTimeout(r.data.logContext(ctx), limit)
	defer cancel()
	var mu sync.Mutex
	stillRunning := map[string]error{}
	forEachRow(running, e.maxInFlight, func(key string, row *batchRow) {
		if err := r.cancelAndWait(ctx, row); err != nil {
			mu.Lock()
			stillRunning[key] = err
			mu.Unlock()
		}
	})
	for _, key := range slices.Sorted(maps.Keys(stillRunning)) {
		diags.AddError("Row's job did not stop", r.data.redact(fmt.Sprintf("rows[%q]: cancel of job %s was requested "+
			"but it did not reach a terminal status within %s: %v", key, running[key].ID, limit, stillRunning[key])))
	}
	return len(stillRunning) == 0
}

// cancelAndWait cancels a row's job and waits until it stops. A job already gone is stopped.
func (r *jobBatchResource) cancelAndWait(ctx context.Context, row *batchRow) error {
	job, err := r.data.client.GetJob(ctx, row.ID)
	if client.Gone(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if job.Terminal() {
		return nil
	}
	canceled, err := r.data.client.CancelJob(ctx, job)
	if client.Gone(err) {
		return nil
	}
	if err != nil {
		return err
	}
	_, err = r.data.client.WaitJob(ctx, canceled, client.WaitOptions{})
	return err
}

// batchRowDirName checks that a row key can name a directory under output_dir: one path
// element, no separator, not "." or "..".
func batchRowDirName(key string) error {
	if key == "" || key == "." || key == ".." || strings.ContainsAny(key, `/\`) || strings.ContainsRune(key, 0) ||
		filepath.Base(key) != key {
		return fmt.Errorf("row key %q cannot name a directory under output_dir (it must be one path element, without / or \\)", key)
	}
	return nil
}
