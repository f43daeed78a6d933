package provider

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/svc-org/terraform-provider-svc/internal/client"
)

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
