package provider

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
)

// batchWarningRows is how many rows a warning names in full; the rest are counted.
const batchWarningRows = 5

// rowNote is one row worth reporting.
type rowNote struct {
	key string
	row *batchRow
	err error
}

// batchNews is what an apply has to say about its rows.
type batchNews struct {
	failed, unknown, notSent, waitErrors, cancelErrors, downloadErrors []rowNote
	adopted                                                            []rowNote // rows whose job an earlier, dead run submitted
	leftovers                                                          []leftoverNote
	stillRunning                                                       int
}

func (e *batchEngine) note(f func(*batchNews)) {
	e.mu.Lock()
	defer e.mu.Unlock()
	f(&e.news)
}

// report turns the apply's news into warnings, never errors: no row's outcome taints the batch.
func (e *batchEngine) report(ctx context.Context, diags *diag.Diagnostics, limit time.Duration) {
	n := &e.news
	notReached := 0
	for _, row := range e.rows {
		if row.Status == batchRowNotSubmitted {
			notReached++
		}
	}
	if n.stillRunning > 0 || notReached > len(n.notSent) {
		why := fmt.Sprintf("The apply reached its timeout (%s)", limit)
		if ctx.Err() != nil && waitInterrupted(ctx, ctx.Err()) {
			why = "Terraform was interrupted"
		}
		diags.AddWarning("Batch not finished: the next apply goes on",
			fmt.Sprintf("%s with %d rows still running and %d not submitted. Every job id the service returned is in state "+
				"(no row is tainted). The next `terraform apply` submits nothing again: it waits for the running rows and "+
				"submits the others.", why, n.stillRunning, notReached-len(n.notSent)))
	}
	rerun := "Set `rerun_failed = true` to run them again on the next apply, or change or remove them."
	if e.rerunFailed {
		rerun = "`rerun_failed` is on: the next apply runs them again, under new keys. A row the service refused " +
			"(`rejected`) is refused again until it is changed."
	}
	e.warn(diags, "Rows failed", "row", "did not succeed; their ids and errors are in `results` and counted in `failed`. "+
		rerun, n.failed, describeFailedRow)
	e.warn(diags, "Rows with an unknown outcome", "submission", "may have reached the service, but no answer came back: a job "+
		"may exist that the provider cannot name. They are not resent under a new key (that could run them twice); "+
		"`rerun_failed = true` resends each under its own key, which the service refuses if the first arrived.", n.unknown, describeUnknownRow)
	e.warn(diags, "Rows not sent", "submission", "never reached the service; nothing was created and the next apply submits them.",
		n.notSent, describeRowErr)
	e.warn(diags, "Rows not followed to the end", "row", "could not be read to their end; each keeps its id and the status "+
		"last seen, and the next apply waits for them again.", n.waitErrors, describeRowErr)
	e.warn(diags, "Cancel failed", "job", "of removed or changed rows could not be canceled; they may still run on the service.",
		n.cancelErrors, describeRowErr)
	e.warn(diags, "Rows adopted from the journal", "row", "had been submitted by an earlier apply that ended before saving "+
		"them in state (the journal of submissions kept them): this apply took their jobs over instead of running them again.",
		n.adopted, describeAdoptedRow)
	e.warnLeftovers(diags, n.leftovers)
	e.warn(diags, "Downloads failed", "output", "could not be downloaded to output_dir; the rows stay succeeded and the next "+
		"apply downloads the missing files again.", n.downloadErrors, describeRowErr)
}

// warn adds one warning for notes: the first batchWarningRows in full, the rest counted.
func (e *batchEngine) warn(diags *diag.Diagnostics, summary, noun, what string, notes []rowNote, describe func(rowNote) string) {
	if len(notes) == 0 {
		return
	}
	sort.Slice(notes, func(i, j int) bool { return notes[i].key < notes[j].key })
	var b strings.Builder
	if len(notes) != 1 {
		noun += "s"
	}
	fmt.Fprintf(&b, "%d %s %s\n", len(notes), noun, what)
	for i, n := range notes {
		if i == batchWarningRows {
			fmt.Fprintf(&b, "\n... and %d more.", len(notes)-batchWarningRows)
			break
		}
		fmt.Fprintf(&b, "\n- rows[%q]: %s", n.key, describe(n))
	}
	diags.AddWarning(summary, e.data.redact(b.String()))
}

func describeFailedRow(n rowNote) string {
	r := n.row
	var b strings.Builder
	if r.ID != "" {
		fmt.Fprintf(&b, "job %s %s", r.ID, r.Status)
	} else {
		fmt.Fprintf(&b, "%s (Idempotency-Key %s)", r.Status, r.Key)
	}
	if e := r.Error; e != nil {
		b.WriteString(": ")
		if e.NodeID != "" || e.ClassType != "" {
			verb := ":" // a node the service refused to run
			if r.ID != "" {
				verb = " raised" // a node that failed as it ran
			}
			fmt.Fprintf(&b, "node %q (%s)%s ", e.NodeID, e.ClassType, verb)
		}
		fmt.Fprintf(&b, "%s: %s", e.Code, firstLine(e.Message))
	}
	return b.String()
}

func describeAdoptedRow(n rowNote) string {
	return fmt.Sprintf("job %s (Idempotency-Key %s)", n.row.ID, n.row.Key)
}

// warnLeftovers names the jobs an earlier run of the batch submitted for rows whose values have
// changed since, or that were removed: no row adopted them, and the journal no longer keeps them.
func (e *batchEngine) warnLeftovers(diags *diag.Diagnostics, notes []leftoverNote) {
	if len(notes) == 0 {
		return
	}
	sort.Slice(notes, func(i, j int) bool { return notes[i].row.Key < notes[j].row.Key })
	var b strings.Builder
	fmt.Fprintf(&b, "%d submission(s) of an earlier apply of this batch, which ended before saving them in state, were for "+
		"rows whose values have changed since (or that were removed): no row took them over, and those rows ran with their "+
		"current values.", len(notes))
	if e.cancelRuns {
		b.WriteString(" The jobs still running were canceled (cancel_on_destroy).")
	} else {
		b.WriteString(" cancel_on_destroy is off: the jobs still running were left to run.")
	}
	b.WriteString(" The journal no longer keeps them.\n")
	for i, n := range notes {
		if i == batchWarningRows {
			fmt.Fprintf(&b, "\n... and %d more.", len(notes)-batchWarningRows)
			break
		}
		fmt.Fprintf(&b, "\n- %s", describeLeftover(n, e.cancelRuns))
	}
	diags.AddWarning("Jobs of rows no longer configured", e.data.redact(b.String()))
}

func describeUnknownRow(n rowNote) string {
	return fmt.Sprintf("Idempotency-Key %s: %v", n.row.Key, n.err)
}

func describeRowErr(n rowNote) string {
	if n.row != nil && n.row.ID != "" {
		return fmt.Sprintf("job %s: %v", n.row.ID, n.err)
	}
	return n.err.Error()
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " ..."
	}
	return s
}
