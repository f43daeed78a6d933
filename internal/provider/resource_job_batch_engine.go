package provider

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
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
	progress := e.startProgress(ctx, limit, tasks) // a line every 10 s, for people (see batchProgress below)
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

// A batch apply can run for hours while Terraform prints only "Still creating... [1h10m
// elapsed]". The apply's progress is therefore written as one human-readable line per batch
// every batchProgressInterval (rows done, failed, running, not yet sent, and an estimate of the
// time left), plus a line when the apply starts and one when it ends, to two places:
//
//   - Terraform's log at INFO (TF_LOG_PROVIDER=info), always;
//   - the file progress.log, for `tail -F` in a second terminal or a CI step, on the machine
//     that runs the apply: in the journal's directory, or with a journal in a bucket in the
//     default one (.terraform/svc-journal), since a bucket object can be neither appended to
//     nor followed by tail, and the lines are for the people watching this run, not for the
//     next one. With the journal off (journal = "") the user asked the provider to keep no
//     file, and the log alone has the lines.
//
// A line holds the batch's id, its output_dir, counts and durations: nothing a row or the
// service wrote, and never a secret (each line is also masked with the provider's secrets).

// batchProgressInterval is how often a running batch apply writes a progress line.
const batchProgressInterval = 10 * time.Second

// batchProgressFile is the progress log's name in the journal's directory.
const batchProgressFile = "progress.log"

// maxProgressLogBytes bounds the progress log: a line that would take it past this size first
// renames it to progress.log.1 (replacing the one before), so the two files hold at most twice
// this (a line of about 150 bytes every 10 s is about 55 KB an hour per batch: 1 MiB holds most
// of a day of one batch's lines).
const maxProgressLogBytes = 1 << 20

// batchProgressCounts is where the rows an apply acts on stand. done is succeeded + failed;
// succeeded + failed + running + notSent is every row the apply acts on.
type batchProgressCounts struct {
	succeeded, failed, running, notSent int
	transfersQueued                     int // rows whose outputs wait for a transfer to output_dir
}

func (c batchProgressCounts) done() int  { return c.succeeded + c.failed }
func (c batchProgressCounts) total() int { return c.done() + c.running + c.notSent }

// batchProgress writes one apply's progress lines: start writes the first, each tick one, stop
// the last. emit receives every line (its time and text) in order, from one goroutine at a
// time.
type batchProgress struct {
	label       string // what names the batch: svc_job_batch <id> (output_dir "...")
	now         func() time.Time
	maxInFlight int
	limit       time.Duration // the apply's timeout
	counts      func() batchProgressCounts
	emit        func(at time.Time, text string)

	started    time.Time
	stopTicker func()
	stopped    chan struct{}
	exited     chan struct{}
}

// start writes the first line and then a line at each tick, until stop.
func (p *batchProgress) start(ticks <-chan time.Time, stopTicker func()) {
	p.started = p.now()
	p.stopTicker = stopTicker
	p.stopped, p.exited = make(chan struct{}), make(chan struct{})
	c := p.counts()
	p.emit(p.started, fmt.Sprintf("%s: apply started: %d rows to run, up to %d at once, timeout %s; a line every %s",
		p.label, c.total(), p.maxInFlight, roughDuration(p.limit), roughDuration(batchProgressInterval)))
	go func() {
		defer close(p.exited)
		for {
			select {
			case <-ticks:
				now := p.now()
				c := p.counts()
				p.emit(now, p.label+": "+c.line()+p.estimate(now, c))
			case <-p.stopped:
				return
			}
		}
	}()
}

// stop ends the ticks and writes the last line: how the apply ended, as the run's context says
// (err is its Err: nil when every row got as far as it goes, DeadlineExceeded at the timeout,
// Canceled at an interrupt), and where each row stands.
func (p *batchProgress) stop(err error) {
	if p == nil {
		return
	}
	close(p.stopped)
	<-p.exited
	p.stopTicker()
	now := p.now()
	c := p.counts()
	took := roughDuration(now.Sub(p.started))
	how := "finished after " + took
	switch {
	case c.running == 0 && c.notSent == 0:
		// Every row ended, whatever ended the context afterwards.
	case errors.Is(err, context.DeadlineExceeded):
		how = "timed out after " + took
	case err != nil:
		how = "interrupted after " + took
	}
	text := p.label + ": " + how + ": " + c.line()
	if c.running > 0 || c.notSent > 0 {
		text += "; the next apply waits for the running rows and sends the rest"
	}
	p.emit(now, text)
}

// line is where the rows stand: 120/200 done (110 succeeded, 10 failed), 32 running, 48 not yet
// sent.
func (c batchProgressCounts) line() string {
	s := fmt.Sprintf("%d/%d done (%d succeeded, %d failed), %d running, %d not yet sent",
		c.done(), c.total(), c.succeeded, c.failed, c.running, c.notSent)
	if c.transfersQueued > 0 {
		s += fmt.Sprintf(", outputs of %d rows waiting for output_dir", c.transfersQueued)
	}
	return s
}

// estimate is the time left at the rate rows have finished since the apply started: the rows
// not done take (elapsed / done) each. A batch runs its rows max_in_flight at a time, so the
// rate of a few minutes is the rate of the rest; the first rows end only after a job's length,
// which the estimate then absorbs.
func (p *batchProgress) estimate(now time.Time, c batchProgressCounts) string {
	left := c.total() - c.done()
	switch {
	case left == 0:
		return ""
	case c.done() == 0:
		return "; no row finished yet, no estimate of the time left"
	}
	elapsed := now.Sub(p.started)
	return "; ~" + roughDuration(elapsed*time.Duration(left)/time.Duration(c.done())) + " left"
}

// roughDuration is d as a person reads it: to the second under an hour (45s, 2m10s, 2m), to
// the minute above (1h10m, 2h).
func roughDuration(d time.Duration) string {
	if d >= time.Hour {
		d = d.Round(time.Minute)
	} else {
		d = d.Round(time.Second)
	}
	s := d.String() // 1h10m0s, 2m0s, 45s
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// startProgress starts the progress lines of the rows run acts on (none for an apply with no
// row to act on: it is over at once).
func (e *batchEngine) startProgress(ctx context.Context, limit time.Duration, tasks []batchTask) *batchProgress {
	if len(tasks) == 0 {
		return nil
	}
	now := time.Now
	if e.data != nil && e.data.now != nil {
		now = e.data.now
	}
	p := &batchProgress{label: e.label, now: now, maxInFlight: e.maxInFlight, limit: limit,
		counts: func() batchProgressCounts { return e.progressCounts(tasks) },
		emit:   batchProgressSink(ctx, e.data)}
	ticker := time.NewTicker(batchProgressInterval)
	p.start(ticker.C, ticker.Stop)
	return p
}

// progressCounts counts the tasks' rows as run has recorded them: a row not recorded yet is
// not yet sent, unless an earlier apply's job for the same input still runs (it is waited for).
func (e *batchEngine) progressCounts(tasks []batchTask) batchProgressCounts {
	var c batchProgressCounts
	e.mu.Lock()
	for _, t := range tasks {
		row, ok := e.rows[t.in.key]
		if !ok && t.held != nil && t.held.InputHash == t.in.hash && t.held.inFlight() {
			row, ok = t.held, true
		}
		switch {
		case !ok:
			c.notSent++
		case row.Status == client.JobSucceeded:
			c.succeeded++
		case row.failedRow():
			c.failed++
		case row.inFlight():
			c.running++
		default: // not_submitted
			c.notSent++
		}
	}
	e.mu.Unlock()
	if e.transfers != nil {
		c.transfersQueued = len(e.transfers)
	}
	return c
}

// batchProgressLabel names a batch in its progress lines: the framework does not tell a
// resource its address, so the batch's id (in state after its first apply) and, when set, its
// output_dir, which tells the batches of one configuration apart at a glance.
func batchProgressLabel(planned *jobBatchModel) string {
	label := "svc_job_batch " + planned.ID.ValueString()
	if dir := planned.OutputDir.ValueString(); dir != "" {
		label += fmt.Sprintf(" (output_dir %q)", progressText(dir))
	}
	return label
}

// batchProgressSink writes each line to Terraform's log and, unless the journal is off, to the
// progress log.
func batchProgressSink(ctx context.Context, data *providerData) func(time.Time, string) {
	var file *progressLogFile
	if data != nil {
		if dir := data.journal.progressDir(); dir != "" {
			file = &progressLogFile{path: filepath.Join(dir, batchProgressFile), max: maxProgressLogBytes}
		}
	}
	return func(at time.Time, text string) {
		text = data.redact(text)
		logInfo(ctx, text, map[string]any{})
		if file == nil {
			return
		}
		if err := file.append(at.UTC().Format(time.RFC3339) + " " + text + "\n"); err != nil && file.warned.CompareAndSwap(false, true) {
			logWarn(ctx, "writing the batch's progress log failed; the lines go on in this log", map[string]any{"error": err.Error(), "path": file.path})
		}
	}
}

// progressDir is the directory of the progress log: the journal's when it is a local
// directory, the default journal directory when the journal is in a bucket, "" when it is off.
func (s *submissionJournal) progressDir() string {
	switch {
	case s == nil:
		return ""
	case s.place.InBucket():
		return journalDefaultDir()
	}
	return s.place.String()
}

// progressLogMu serialises this process's appends to progress logs with their rotations. Each
// line is one write to a file opened for appending, so lines of other processes sharing the
// journal never interleave within a line either.
var progressLogMu sync.Mutex

// progressLogFile is a progress log: lines appended, rotated at max bytes.
type progressLogFile struct {
	path   string
	max    int64
	warned atomic.Bool // a failure to write was logged
}

// append writes line at the end of the log, first renaming the log to <name>.1 when the line
// would take it past max. The file is opened for each line: a follower with `tail -F` (which
// follows the name) goes on reading across a rotation, and a journal directory removed by hand
// is made again.
func (f *progressLogFile) append(line string) error {
	progressLogMu.Lock()
	defer progressLogMu.Unlock()
	if fi, err := os.Stat(f.path); err == nil && fi.Size()+int64(len(line)) > f.max {
		if err := os.Rename(f.path, f.path+".1"); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(filepath.Dir(f.path), 0o755); err != nil {
		return err
	}
	w, err := os.OpenFile(f.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	_, err = w.WriteString(line)
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	return err
}
