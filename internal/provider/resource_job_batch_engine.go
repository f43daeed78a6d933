package provider

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/svc-org/terraform-provider-svc/internal/client"
)

// batchEngine runs the rows of one apply in two lanes, each with its own limit: the jobs (at
// most maxInFlight rows submitted or waited for at once, every wait sharing one duration
// estimator, the provider's, so the jobs of the batch pace each other's polls) and the
// transfers of the outputs of the rows that succeeded to output_dir (at most maxInFlight at
// once, each holding at most one part of an upload). A row that succeeded queues its transfer
// and its job worker takes the next row: a destination that is slow or unreachable for a while
// delays only the transfers, which catch up when it is back.
type batchEngine struct {
	data        *providerData
	extra       map[string]string
	shape       func() string // the workflow's shape, for the waits' duration estimates
	maxInFlight int
	outputDir   string
	files       batchDest // output_dir, opened once per apply
	cancelRuns  bool
	rerunFailed bool
	label       string        // names the batch in its progress lines
	journal     *batchJournal // the entries of the rows' submissions; a zero one when the journal is off

	mu   sync.Mutex
	rows map[string]*batchRow
	news batchNews

	transfers chan batchTransfer // the transfers lane's queue, while run runs
}

// batchTransfer is a row whose outputs are to be transferred to output_dir: a descriptor, not
// the outputs' bytes.
type batchTransfer struct {
	key string
	row *batchRow
}

func newBatchEngine(data *providerData, planned *jobBatchModel, apiKeyWO types.String) *batchEngine {
	n := int(planned.MaxInFlight.ValueInt64())
	if n <= 0 {
		n = defaultBatchMaxInFlight
	}
	return &batchEngine{
		data: data, extra: data.partnerExtraData(apiKeyWO, types.StringNull()),
		shape:       sync.OnceValue(func() string { return client.WorkflowShape([]byte(planned.Workflow.ValueString())) }),
		maxInFlight: n, outputDir: planned.OutputDir.ValueString(), cancelRuns: planned.CancelOnDestroy.ValueBool(),
		rerunFailed: planned.RerunFailed.ValueBool(),
		label:       batchProgressLabel(planned),
		rows:        map[string]*batchRow{}, journal: &batchJournal{},
	}
}

// run acts on every task and returns each task's row. It returns once every row is settled for
// this apply and its outputs are transferred: finished, or, once ctx ends (Ctrl-C or the
// timeout), as far as it got. A submission already on the wire when ctx ends is given the
// client's answer grace (submitGrace), so its id is kept; no new one starts.
func (e *batchEngine) run(ctx context.Context, limit time.Duration, tasks []batchTask) map[string]*batchRow {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	// Each row queues one transfer at most: the queue never blocks a job worker. Without
	// output_dir nothing is transferred, and the lane has no worker.
	e.transfers = make(chan batchTransfer, len(tasks))
	transferWorkers := min(e.maxInFlight, len(tasks))
	if e.outputDir == "" {
		transferWorkers = 0
	}
	progress := e.startProgress(ctx, limit, tasks) // a line every 10 s, for people (resource_job_batch_progress.go)
	transfers := startLane(transferWorkers, func() {
		for t := range e.transfers {
			e.transfer(ctx, t.key, t.row)
		}
	})
	queue := make(chan batchTask)
	jobs := startLane(min(e.maxInFlight, len(tasks)), func() {
		for t := range queue {
			e.runTask(ctx, t)
		}
	})
	// The tasks go to the workers in waves of maxInFlight: the entries of a wave's new
	// submissions are journaled in one write and one sync before any of them is handed out (a
	// wave is handed out only as workers free up, so an entry is at most a wave ahead of its
	// submission).
	for wave := range slices.Chunk(tasks, e.maxInFlight) {
		e.journalWave(ctx, wave)
		for _, t := range wave {
			queue <- t
		}
	}
	close(queue)
	jobs.Wait()
	close(e.transfers)
	transfers.Wait()
	progress.stop(ctx.Err())
	return e.rows
}

// startLane starts n workers running work and returns what waits for them all.
func startLane(n int, work func()) *sync.WaitGroup {
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			work()
		}()
	}
	return &wg
}

func (e *batchEngine) set(key string, row *batchRow) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.rows[key] = row
}

// runTask brings one row as far as it goes in this apply and records it.
func (e *batchEngine) runTask(ctx context.Context, t batchTask) {
	held := t.held
	sameInput := held != nil && held.InputHash == t.in.hash
	switch {
	case ctx.Err() != nil:
		e.set(t.in.key, notReached(t))
	case sameInput && held.inFlight():
		e.resume(ctx, t)
	case sameInput && held.Status == client.JobSucceeded:
		e.set(t.in.key, held) // its files only
		e.download(t.in.key, held)
	default:
		if held != nil && held.inFlight() && e.cancelRuns {
			e.cancel(ctx, t.in.key, held) // its input changed: the old run is not wanted
		}
		key := uuid.NewString()
		switch entry := e.journal.entry(t.in.key); {
		case sameInput && held.Status == batchRowUnknown && held.Key != "":
			key = held.Key // resent under its own key: it cannot run twice
		case t.journalErr != nil:
			e.set(t.in.key, &batchRow{Status: batchRowNotSubmitted, InputHash: t.in.hash})
			e.note(func(n *batchNews) { n.notSent = append(n.notSent, rowNote{t.in.key, nil, t.journalErr}) })
			return
		case entry != nil && entry.adopted && entry.id != "":
			e.adoptJob(ctx, t, entry)
			return
		case entry != nil:
			key = entry.key // journaled, or an earlier run's key resent: the service runs it once
		}
		e.submit(ctx, t, key)
	}
}

// journalWave journals the new submissions of a wave of tasks; when that fails, none of them is
// sent (journalErr). A row that adopted an entry needs none: it goes on.
func (e *batchEngine) journalWave(ctx context.Context, wave []batchTask) {
	if ctx.Err() != nil {
		return // nothing more is submitted
	}
	if _, err := e.journal.put(wave); err != nil {
		err = fmt.Errorf("%s", journalError(err))
		for i := range wave {
			if wave[i].submitsAnew() && e.journal.entry(wave[i].in.key) == nil {
				wave[i].journalErr = err
			}
		}
	}
}

// adoptJob takes over the job an earlier run submitted for the row and journaled, never saving it
// in state: it is read and waited for as a job state holds; one gone from the service is
// submitted anew, under a new journaled key.
func (e *batchEngine) adoptJob(ctx context.Context, t batchTask, entry *batchRowEntry) {
	job, err := e.data.client.GetJobRidingOut(ctx, entry.id)
	if client.Gone(err) && !client.RouteNotFound(err) {
		logWarn(ctx, "journaled batch row's job no longer exists; submitting anew", map[string]any{"row": t.in.key, "job_id": entry.id})
		key, jerr := e.journal.renew(ctx, t)
		if jerr != nil {
			e.set(t.in.key, &batchRow{Status: batchRowNotSubmitted, InputHash: t.in.hash})
			e.note(func(n *batchNews) {
				n.notSent = append(n.notSent, rowNote{t.in.key, nil, fmt.Errorf("%s", journalError(jerr))})
			})
			return
		}
		e.submit(ctx, t, key)
		return
	}
	if err != nil {
		// The row keeps the job's id, and the next apply waits for it as for any row in state.
		row := &batchRow{ID: entry.id, Status: client.JobQueued, Key: entry.key, InputHash: t.in.hash}
		e.set(t.in.key, row)
		if ctx.Err() == nil {
			e.note(func(n *batchNews) { n.waitErrors = append(n.waitErrors, rowNote{t.in.key, row, err}) })
		} else {
			e.note(func(n *batchNews) { n.stillRunning++ })
		}
		return
	}
	logInfo(ctx, "batch row's job adopted from the journal", map[string]any{"row": t.in.key, "job_id": job.ID, "idempotency_key": entry.key})
	row := rowFromJob(job, entry.key, t.in.hash)
	e.note(func(n *batchNews) { n.adopted = append(n.adopted, rowNote{t.in.key, row, nil}) })
	e.set(t.in.key, row)
	e.wait(ctx, t.in, job, entry.key)
}

// notReached is what a row the apply did not get to keeps: the row state holds when its input
// is unchanged, else not_submitted.
func notReached(t batchTask) *batchRow {
	if t.held != nil && t.held.InputHash == t.in.hash && t.held.Status != batchRowNotSubmitted {
		return t.held
	}
	return &batchRow{Status: batchRowNotSubmitted, InputHash: t.in.hash}
}

func (e *batchEngine) submit(ctx context.Context, t batchTask, key string) {
	entry := e.journal.entry(t.in.key)
	adopted := entry != nil && entry.adopted && entry.key == key
	e.journal.sending(t.in.key)
	job, err := e.data.client.SubmitJob(ctx, client.SubmitJobInput{
		Workflow: json.RawMessage(t.in.workflow), ExtraData: e.extra, IdempotencyKey: key,
	})
	if err != nil {
		var notSent *client.NotSentError
		if ranNothing(err) && (!adopted || !errors.As(err, &notSent)) {
			// Nothing ran under the key: its entry goes. An earlier run's key that this one
			// did not get out may still have been sent by that run: it stays.
			e.journal.ranNothing(t.in.key)
		}
		if adopted && client.HasCode(err, "idempotency_key_reuse") {
			// The earlier run's submission arrived, and its answer never reached the journal:
			// the job may exist, unnamed. Never a new key: that could run the row twice.
			err = &client.UnknownOutcomeError{Operation: "submit job", IdempotencyKey: key, FirstArrived: true, Cause: fmt.Errorf(
				"an earlier apply sent this row under Idempotency-Key %s (the journal of submissions) and ended before its answer "+
					"arrived; the service refused the key again as a reuse, so its job may exist but cannot be named: %w", key, err)}
		}
		e.set(t.in.key, e.submitFailed(t, key, err))
		return
	}
	e.journal.answered(ctx, key, job.ID)
	if adopted {
		logInfo(ctx, "batch row's journaled key resent", map[string]any{"row": t.in.key, "job_id": job.ID, "idempotency_key": key})
		e.note(func(n *batchNews) {
			n.adopted = append(n.adopted, rowNote{t.in.key, rowFromJob(job, key, t.in.hash), nil})
		})
	}
	logInfo(ctx, "batch row submitted", map[string]any{"row": t.in.key, "job_id": job.ID, "idempotency_key": key, "request_id": job.RequestID})
	// The id is recorded before the wait: whatever ends the wait, the row keeps its job.
	e.set(t.in.key, rowFromJob(job, key, t.in.hash))
	e.wait(ctx, t.in, job, key)
}

// submitFailed is the row of a submission that failed, by what the failure means.
func (e *batchEngine) submitFailed(t batchTask, key string, err error) *batchRow {
	var refused *client.RefusedJobRecordError
	var unknown *client.UnknownOutcomeError
	var notSent *client.NotSentError
	switch {
	case errors.As(err, &refused):
		row := &batchRow{ID: refused.JobID, Status: refused.Status, Key: key, InputHash: t.in.hash}
		e.note(func(n *batchNews) { n.waitErrors = append(n.waitErrors, rowNote{t.in.key, row, err}) })
		return row
	case errors.As(err, &unknown):
		row := &batchRow{Status: batchRowUnknown, Key: key, InputHash: t.in.hash,
			Error: &batchRowError{Code: "unknown_outcome", Message: truncateText(e.data.redact(unknown.Cause.Error()), maxBatchErrorMessage)}}
		e.note(func(n *batchNews) { n.unknown = append(n.unknown, rowNote{t.in.key, row, err}) })
		return row
	case errors.As(err, &notSent) || client.DeclinedUntilDeadline(err):
		e.note(func(n *batchNews) { n.notSent = append(n.notSent, rowNote{t.in.key, nil, err}) })
		return &batchRow{Status: batchRowNotSubmitted, InputHash: t.in.hash}
	}
	row := &batchRow{Status: batchRowRejected, Key: key, InputHash: t.in.hash, Error: e.rejectionError(err, key)}
	e.note(func(n *batchNews) { n.failed = append(n.failed, rowNote{t.in.key, row, err}) })
	return row
}

// rejectionError is the row error of a submission the service refused: its code, what it said
// (the fields it rejected, and where one node was at fault, that node and its class), the HTTP
// status and the request id; describeSubmitError's text for any other failure.
func (e *batchEngine) rejectionError(err error, key string) *batchRowError {
	var apiErr *client.APIError
	if !errors.As(err, &apiErr) {
		return &batchRowError{Code: apiErrorCode(err), Message: truncateText(e.data.redact(describeSubmitError(err, key)), maxBatchErrorMessage)}
	}
	rowErr := &batchRowError{Code: apiErrorCode(err)}
	var said []string
	if apiErr.Message != "" {
		said = append(said, apiErr.Message)
	}
	for _, node := range slices.Sorted(maps.Keys(apiErr.NodeErrors)) {
		for _, ne := range apiErr.NodeErrors[node] {
			said = append(said, ne.Field+": "+ne.Reason)
		}
		if len(apiErr.NodeErrors) == 1 {
			rowErr.NodeID, rowErr.ClassType = node, apiErr.NodeClasses[node]
		}
	}
	status := fmt.Sprintf("HTTP %d", apiErr.StatusCode)
	if apiErr.RequestID != "" {
		status += ", request id " + apiErr.RequestID
	}
	rowErr.Message = truncateText(e.data.redact(strings.Join(said, "; ")+" ("+status+")"), maxBatchErrorMessage)
	return rowErr
}

// apiErrorCode is the service's error code of err, or "submission_refused".
func apiErrorCode(err error) string {
	var apiErr *client.APIError
	if errors.As(err, &apiErr) && apiErr.Code != "" {
		return apiErr.Code
	}
	return "submission_refused"
}

// resume waits for a row's job that was submitted by an earlier apply.
func (e *batchEngine) resume(ctx context.Context, t batchTask) {
	held := t.held
	job, err := e.data.client.GetJobRidingOut(ctx, held.ID)
	switch {
	case client.Gone(err) && !client.RouteNotFound(err):
		// Gone while it ran (not the expiry of a finished job): the next apply submits it again.
		e.set(t.in.key, &batchRow{Status: batchRowNotSubmitted, InputHash: t.in.hash})
		e.note(func(n *batchNews) { n.waitErrors = append(n.waitErrors, rowNote{t.in.key, held, err}) })
		return
	case err != nil:
		e.set(t.in.key, held)
		if ctx.Err() == nil {
			e.note(func(n *batchNews) { n.waitErrors = append(n.waitErrors, rowNote{t.in.key, held, err}) })
		} else {
			e.note(func(n *batchNews) { n.stillRunning++ })
		}
		return
	}
	e.set(t.in.key, rowFromJob(job, held.Key, t.in.hash))
	e.wait(ctx, t.in, job, held.Key)
}

// wait follows a row's job until it ends or ctx does, records its last record, and downloads
// its outputs when it succeeded.
func (e *batchEngine) wait(ctx context.Context, in batchRowInput, job *client.Job, key string) {
	final := job
	var err error
	if !job.Terminal() {
		// Progress is logged as for svc_job: one line per change of phase, naming the job.
		opts := client.WaitOptions{OnUpdate: newJobProgressLog(ctx, job).job, Durations: e.data.durations, Shape: e.shape()}
		final, err = e.data.client.WaitJob(ctx, job, opts)
		if final == nil {
			final = job
		}
	}
	row := rowFromJob(final, key, in.hash)
	e.set(in.key, row)
	switch {
	case err != nil && ctx.Err() == nil:
		e.note(func(n *batchNews) { n.waitErrors = append(n.waitErrors, rowNote{in.key, row, err}) })
	case err != nil:
		e.note(func(n *batchNews) { n.stillRunning++ })
	case row.failedRow():
		e.note(func(n *batchNews) { n.failed = append(n.failed, rowNote{in.key, row, nil}) })
	case row.Status == client.JobSucceeded:
		e.download(in.key, row)
	}
}

// cancel asks the service to cancel a row's job that still runs; an error is a warning.
func (e *batchEngine) cancel(ctx context.Context, key string, row *batchRow) {
	job, err := e.data.client.GetJob(ctx, row.ID)
	if err == nil && !job.Terminal() {
		_, err = e.data.client.CancelJob(ctx, job)
	}
	if err != nil && !client.Gone(err) {
		e.note(func(n *batchNews) { n.cancelErrors = append(n.cancelErrors, rowNote{key, row, err}) })
	}
}

// forgetRemoved cancels the running jobs of rows no longer configured (when cancel_on_destroy)
// and removes their downloaded files; finished rows send nothing.
func (e *batchEngine) forgetRemoved(ctx context.Context, removed []removedRow, cancelRuns bool) {
	var wg sync.WaitGroup
	sem := make(chan struct{}, e.maxInFlight)
	for _, rm := range removed {
		e.removeFiles(ctx, rm.key, rm.row)
		if !cancelRuns || !rm.row.inFlight() {
			continue
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			e.cancel(ctx, rm.key, rm.row)
		}()
	}
	wg.Wait()
}
