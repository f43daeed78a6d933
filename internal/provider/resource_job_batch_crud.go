package provider

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/svc-org/terraform-provider-svc/internal/client"
)

// runningRows are the rows state holds whose job was accepted and has not ended, by key.
func runningRows(held batchHeld) map[string]*batchRow {
	out := map[string]*batchRow{}
	for key, v := range held.results {
		if !heldRowMayRun(v) {
			continue
		}
		if row, ok := held.row(key); ok && row.inFlight() {
			out[key] = row
		}
	}
	return out
}

// heldRowMayRun reads only a row's id and status.
func heldRowMayRun(v batchResult) bool {
	return v.State == attr.ValueStateKnown && v.ID.ValueString() != "" && !client.JobTerminal(v.Status.ValueString())
}

// anyRowRunning reports whether any row of results has a job that has not ended.
func anyRowRunning(results map[string]batchResult) bool {
	for _, v := range results {
		if heldRowMayRun(v) {
			return true
		}
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

// Read refreshes the rows that still run; a batch whose rows have all ended is settled and
// sends nothing.
func (r *jobBatchResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	held, ok := decodeJobBatch(req.State.Raw)
	if !ok {
		resp.Diagnostics.AddError("Reading the state failed", "svc_job_batch's state is not a known object. This is a bug in the provider.")
		return
	}
	results := held.Results.Rows
	if !anyRowRunning(results) || r.data.configUnknown {
		return // nothing in a finished row can change: no request
	}
	book := readBatchBook(ctx, req.Private)
	running := runningRows(batchHeld{results: results, book: book})
	readCtx, cancel := r.data.readContext(ctx)
	defer cancel()
	fresh, errs := r.readRows(readCtx, running, int(held.MaxInFlight.ValueInt64()))
	results, book = maps.Clone(results), maps.Clone(book)
	for key, job := range fresh {
		// A job gone while it ran (not an expiry of a finished job) is submitted again by the next apply.
		row := &batchRow{Status: batchRowNotSubmitted, InputHash: running[key].InputHash}
		if job != nil {
			row = rowFromJob(job, running[key].Key, running[key].InputHash)
		}
		results[key], book[key] = row.result(), row.book()
	}
	for _, key := range slices.Sorted(maps.Keys(errs)) {
		resp.Diagnostics.AddWarning("Reading a row's job failed", fmt.Sprintf("rows[%q] (job %s) could not be read; state keeps "+
			"the status it had: %s", key, running[key].ID, r.data.describeReadError(readCtx, errs[key], familyService)))
	}
	held.Results.Rows = results
	var succeeded, failed int64
	for key := range results {
		if row, ok := rowOfResult(results[key], batchBookRow{}); ok {
			succeeded, failed = countRow(row, succeeded, failed)
		}
	}
	held.Succeeded, held.Failed = types.Int64Value(succeeded), types.Int64Value(failed)
	saveJobBatch(&resp.State, &held, &resp.Diagnostics)
	writeBatchBook(ctx, resp.Private, book, &resp.Diagnostics)
}

// readRows reads the jobs of rows, at most n at once. A job gone from the service maps to nil.
func (r *jobBatchResource) readRows(ctx context.Context, rows map[string]*batchRow, n int) (fresh map[string]*client.Job, errs map[string]error) {
	fresh, errs = map[string]*client.Job{}, map[string]error{}
	var mu sync.Mutex
	forEachRow(rows, max(n, 1), func(key string, row *batchRow) {
		job, err := r.data.client.GetJob(ctx, row.ID)
		mu.Lock()
		defer mu.Unlock()
		switch {
		case client.Gone(err) && !client.RouteNotFound(err):
			fresh[key] = nil
		case err != nil:
			errs[key] = err
		default:
			fresh[key] = job
		}
	})
	return fresh, errs
}

// forEachRow calls f for every row, at most n at once, and returns when all calls have.
func forEachRow(rows map[string]*batchRow, n int, f func(key string, row *batchRow)) {
	var wg sync.WaitGroup
	sem := make(chan struct{}, n)
	for key, row := range rows {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			f(key, row)
		}()
	}
	wg.Wait()
}

// Delete cancels the rows that still run when cancel_on_destroy, waiting for them to stop, and
// removes downloaded files; the finished rows of a batch send nothing.
func (r *jobBatchResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	held, ok := decodeJobBatch(req.State.Raw)
	if !ok {
		resp.Diagnostics.AddError("Reading the state failed", "svc_job_batch's state is not a known object. This is a bug in the provider.")
		return
	}
	rows := batchHeld{results: held.Results.Rows, book: readBatchBook(ctx, req.Private)}
	e := &batchEngine{data: r.data, outputDir: held.OutputDir.ValueString(), maxInFlight: max(int(held.MaxInFlight.ValueInt64()), 1), rows: map[string]*batchRow{}}
	e.removeAllFiles(ctx, rows)
	running := runningRows(rows)
	if !held.CancelOnDestroy.ValueBool() || len(running) == 0 {
		e.report(ctx, &resp.Diagnostics, 0)
		return
	}
	limit, diags := timeoutOf(ctx, held.Timeouts, defaultBatchDeleteTimeout, timeouts.Value.Delete)
	if resp.Diagnostics.Append(diags...); resp.Diagnostics.HasError() {
		return
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
		resp.Diagnostics.AddError("Row's job did not stop", r.data.redact(fmt.Sprintf("rows[%q]: cancel of job %s was requested "+
			"but it did not reach a terminal status within %s: %v", key, running[key].ID, limit, stillRunning[key])))
	}
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
