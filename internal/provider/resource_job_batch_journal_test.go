package provider

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/svc-org/terraform-provider-svc/internal/emulator"
	"github.com/svc-org/terraform-provider-svc/internal/journal"
	"github.com/svc-org/terraform-provider-svc/internal/s3gw"
)

// batchSeedRows is n rows r0..r(n-1) of batchSamplerTemplate, each with its own seed (what tells
// their jobs apart at the server); steps sets the steps of row r0 alone when not 0.
func batchSeedRows(n, r0Steps int) string {
	if r0Steps == 0 {
		return fmt.Sprintf(`{ for i in range(%d) : "r${i}" => { "2" = { seed = i } } }`, n)
	}
	return fmt.Sprintf(`merge({ for i in range(%d) : "r${i}" => { "2" = { seed = i } } }, { r0 = { "2" = { seed = 0, steps = %d } } })`, n, r0Steps)
}

// journalJobIDs is the set of job ids the journal in dir has recorded (read as a log, not opened:
// the test must not claim anything).
func journalJobIDs(dir string) map[string]bool {
	ids := map[string]bool{}
	f, err := os.Open(filepath.Join(dir, "journal.jsonl"))
	if err != nil {
		return ids
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for sc.Scan() {
		var l struct {
			ID string `json:"id"`
		}
		if json.Unmarshal(sc.Bytes(), &l) == nil && l.ID != "" {
			ids[l.ID] = true
		}
	}
	return ids
}

// everyJobJournaled reports whether the journal in dir names every job srv created: no answer is
// on its way back when the kill comes (a kill then loses the id, an unknown outcome by design,
// which TestCLI_sigkillAfterLostAnswersRunsNothingTwice covers).
func everyJobJournaled(srv *emulator.Server, dir string) bool {
	ids := journalJobIDs(dir)
	for _, id := range srv.JobIDs() {
		if !ids[id] {
			return false
		}
	}
	return true
}

// seedRuns counts the server's jobs per row, by the seed each row sets.
func seedRuns(srv *emulator.Server) map[int]int {
	runs := map[int]int{}
	for _, id := range srv.JobIDs() {
		v, _ := srv.JobInput(id, "2", "seed")
		f, _ := v.(float64)
		runs[int(f)]++
	}
	return runs
}

// assertEachRowRanOnce fails unless each of the n rows' seeds ran exactly once at the server.
func assertEachRowRanOnce(t *testing.T, srv *emulator.Server, n int) {
	t.Helper()
	runs := seedRuns(srv)
	for i := range n {
		if runs[i] != 1 {
			t.Errorf("row r%d ran %d times at the server; want once", i, runs[i])
		}
	}
	if jobs := srv.JobCount(); jobs != n {
		t.Errorf("%d jobs on the server; want %d, one per row", jobs, n)
	}
}

// adoptedRows reads how many rows an apply's warning says were adopted from the journal.
var adoptedRowsRE = regexp.MustCompile(`(\d+)\s+rows?\s+had\s+been\s+submitted\s+by\s+an\s+earlier\s+apply`)

func adoptedRows(out string) int {
	m := adoptedRowsRE.FindStringSubmatch(out)
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// assertRowsSucceeded fails unless every one of the batch's n rows in state succeeded with its
// outputs, and state names every job of the server once but those of except.
func assertRowsSucceeded(t *testing.T, tf *terraformCLI, srv *emulator.Server, n int, except ...string) {
	t.Helper()
	res := tf.stateResource(batchRes)
	if res == nil || res.Tainted {
		t.Fatalf("batch in state: %+v; want it there, not tainted", res)
	}
	results, _ := res.Values["results"].(map[string]any)
	if len(results) != n {
		t.Fatalf("%d rows in state; want %d", len(results), n)
	}
	ids := map[string]string{}
	for key, v := range results {
		row, _ := v.(map[string]any)
		outputs, _ := row["outputs"].(map[string]any)
		if row["status"] != "succeeded" || len(outputs) == 0 {
			t.Errorf("rows[%q] is %v with outputs %v (%v); want succeeded with its outputs", key, row["status"], outputs, row["error"])
		}
		if id, _ := row["id"].(string); id != "" {
			ids[key] = id
		}
	}
	var created []string
	for _, id := range srv.JobIDs() {
		if !slices.Contains(except, id) {
			created = append(created, id)
		}
	}
	assertEveryJobInState(t, created, ids)
}

// SIGKILL to Terraform's process group (Terraform and the plugin) at three moments of a 200-row
// svc_job_batch (max_in_flight = 32): the batch never reaches state, yet the next apply, reading
// the journal in its default place, adopts every row's job created before the kill (and resends
// the keys journaled without an answer), so that each row runs exactly once at the server and
// every row ends succeeded with its outputs in state.
func TestCLI_sigkillMidBatchAdoptsTheJournaledRows(t *testing.T) {
	skipUnlessAcc(t)
	t.Parallel()
	pluginDir := buildProvider(t)
	const rows = 200
	tests := []struct {
		name  string
		fault *emulator.Fault
		ready func(srv *emulator.Server, dir string) bool
	}{
		{
			// The 41st submission and every one after it are held by the server before it creates
			// anything: 40 jobs answered and journaled, up to 32 keys journaled and on the wire.
			name:  "submissions on the wire",
			fault: &emulator.Fault{Op: emulator.OpSubmitJob, Nth: 41, Times: 1000, Delay: time.Minute},
			ready: func(srv *emulator.Server, dir string) bool {
				return srv.JobCount() >= 40 && srv.Requests(emulator.OpSubmitJob) >= 50 && everyJobJournaled(srv, dir)
			},
		},
		{
			name: "every row submitted, the last running",
			ready: func(srv *emulator.Server, dir string) bool {
				return srv.JobCount() >= rows && jobsSucceeded(srv) < rows && everyJobJournaled(srv, dir)
			},
		},
		{
			// Submissions from the 101st are held before anything is created, so that no answer is
			// on its way at the kill: a job whose answer the killed run had not yet written down
			// cannot be named (the service refuses its key again without saying its id), and the
			// moment is to show what the journal keeps, not that.
			name:  "half the rows finished",
			fault: &emulator.Fault{Op: emulator.OpSubmitJob, Nth: rows/2 + 1, Times: 1000, Delay: time.Minute},
			ready: func(srv *emulator.Server, dir string) bool {
				return jobsSucceeded(srv) >= rows/2 && everyJobJournaled(srv, dir)
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			// A job runs 20 steps of 25 ms, 32 at once: the apply takes about 7 waves of 0.5 s.
			srv := newTestServer(t, emulator.Options{Workers: 32, StepDuration: 25 * time.Millisecond})
			if tt.fault != nil {
				srv.Inject(*tt.fault)
			}
			tf := newBinaryTerraform(t, pluginDir)
			withoutJournalEnv(tf)
			tf.writeConfig(batchConfig(srv, batchSamplerTemplate(20), batchSeedRows(rows, 0), "max_in_flight = 32"))
			dir := filepath.Join(tf.dir, ".terraform", "svc-journal")
			start := time.Now()
			out, err := tf.signalGroupOnce(syscall.SIGKILL, func() bool { return tt.ready(srv, dir) }, "apply", "-auto-approve", "-input=false", "-no-color")
			if err == nil {
				t.Fatalf("the apply ended well despite SIGKILL:\n%s", out)
			}
			killedAt, sentBefore := time.Since(start), srv.Requests(emulator.OpSubmitJob)
			before := srv.JobIDs()
			srv.ClearFaults()
			tf.setAsideTornState(t)

			start = time.Now()
			out = tf.run("apply", "-auto-approve", "-input=false", "-no-color")
			assertEachRowRanOnce(t, srv, rows)
			assertRowsSucceeded(t, tf, srv, rows)
			if adopted := adoptedRows(out); adopted < len(before) {
				t.Errorf("the second apply adopted %d rows; want at least the %d jobs created before the kill:\n%s", adopted, len(before), out)
			}
			t.Logf("killed after %s with %d jobs created, %d submissions received; the second apply (%s) adopted %d rows "+
				"(ids and keys journaled), sent %d submissions and created %d jobs",
				killedAt.Round(time.Millisecond), len(before), sentBefore, time.Since(start).Round(time.Millisecond),
				adoptedRows(out), srv.Requests(emulator.OpSubmitJob)-sentBefore, rows-len(before))
		})
	}
}

// A row whose values change between the kill and the next apply never adopts its old job, nor
// does a row removed in between: that apply reports both jobs (naming them), cancels the one
// still running (cancel_on_destroy), drops them from the journal and runs the changed row with
// its new values; every other row adopts its job.
func TestCLI_sigkillThenABatchRowChangesReportsItsOldJob(t *testing.T) {
	skipUnlessAcc(t)
	t.Parallel()
	const rows = 40
	srv := newTestServer(t, emulator.Options{Workers: 40, StepDuration: 10 * time.Millisecond})
	tf := newBinaryTerraform(t, buildProvider(t))
	withoutJournalEnv(tf)
	// Row r0 runs 6,000 steps (a minute): still running when the second apply ends.
	tf.writeConfig(batchConfig(srv, batchSamplerTemplate(20), batchSeedRows(rows, 6000), ""))
	dir := filepath.Join(tf.dir, ".terraform", "svc-journal")
	ready := func() bool {
		return srv.JobCount() >= rows && jobsSucceeded(srv) >= rows-1 && everyJobJournaled(srv, dir)
	}
	if out, err := tf.signalGroupOnce(syscall.SIGKILL, ready, "apply", "-auto-approve", "-input=false", "-no-color"); err == nil {
		t.Fatalf("the apply ended well despite SIGKILL:\n%s", out)
	}
	tf.setAsideTornState(t)
	var changed, removed string // the jobs of r0 and r1
	for _, id := range srv.JobIDs() {
		switch v, _ := srv.JobInput(id, "2", "seed"); v {
		case float64(0):
			changed = id
		case float64(1):
			removed = id
		}
	}
	// r0 now runs 20 steps under seed 1000; r1 is gone.
	tf.writeConfig(batchConfig(srv, batchSamplerTemplate(20),
		fmt.Sprintf(`merge({ for i in range(%d) : "r${i}" => { "2" = { seed = i } } if i != 1 }, { r0 = { "2" = { seed = 1000 } } })`, rows), ""))
	out := tf.run("apply", "-auto-approve", "-input=false", "-no-color")
	if !strings.Contains(oneLine(out), "Jobs of rows no longer configured") || !strings.Contains(out, changed) || !strings.Contains(out, removed) {
		t.Errorf("the apply did not report r0's old job %s and r1's job %s:\n%s", changed, removed, out)
	}
	if st, _ := srv.JobStatus(changed); st != "canceled" && st != "canceling" {
		t.Errorf("r0's old job %s is %s; want canceled", changed, st)
	}
	if adopted := adoptedRows(out); adopted != rows-2 {
		t.Errorf("%d rows adopted; want %d, every row but r0 and r1:\n%s", adopted, rows-2, out)
	}
	runs := seedRuns(srv)
	for i := 1; i < rows; i++ {
		if runs[i] != 1 {
			t.Errorf("row r%d ran %d times; want once", i, runs[i])
		}
	}
	if runs[0] != 1 || runs[1000] != 1 || srv.JobCount() != rows+1 {
		t.Errorf("r0 ran %d times with its old values and %d with its new ones, %d jobs in all; want once each, %d jobs", runs[0], runs[1000], srv.JobCount(), rows+1)
	}
	assertRowsSucceeded(t, tf, srv, rows-1, changed, removed)
	// The old jobs are gone from the journal: a third apply reports nothing.
	if out := tf.run("apply", "-auto-approve", "-input=false", "-no-color"); strings.Contains(oneLine(out), "no longer configured") {
		t.Errorf("the third apply reported the old jobs again:\n%s", out)
	}
}

// After an apply that ended well, every row's entry reached state: `terraform state rm` of the
// batch then apply runs every row anew, adopting nothing, as without a journal; destroying the
// batch removes its entries from the journal.
func TestCLI_batchStateRmAfterANormalApplyRunsNewJobs(t *testing.T) {
	skipUnlessAcc(t)
	t.Parallel()
	const rows = 5
	srv := newTestServer(t, emulator.Options{Workers: 5})
	tf := newBinaryTerraform(t, buildProvider(t))
	withoutJournalEnv(tf)
	tf.writeConfig(batchConfig(srv, batchSamplerTemplate(2), batchSeedRows(rows, 0), ""))
	tf.run("apply", "-auto-approve", "-input=false", "-no-color")
	tf.run("state", "rm", batchRes)
	out := tf.run("apply", "-auto-approve", "-input=false", "-no-color")
	if n := srv.JobCount(); n != 2*rows || adoptedRows(out) != 0 {
		t.Fatalf("%d jobs, %d rows adopted; want %d new jobs, none adopted:\n%s", n, adoptedRows(out), 2*rows, out)
	}
	id, _ := tf.stateResource(batchRes).Values["id"].(string)
	tf.run("destroy", "-auto-approve", "-input=false", "-no-color")
	j, err := journal.Open(journal.PlaceOf(filepath.Join(tf.dir, ".terraform", "svc-journal")), time.Now)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	entries, err := j.Entries()
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Group == id {
			t.Errorf("entry %+v of the destroyed batch %s is still journaled", e, id)
		}
	}
	if len(entries) != rows {
		t.Errorf("%d entries left; want the %d of the batch removed from state", len(entries), rows)
	}
}

// The service keeps no answer to replay: a row whose job was created under a journaled key whose
// answer the dead run never received cannot be named. The next apply resends that key, the
// service refuses it as a reuse, and the row is an unknown outcome naming the key, never
// submitted under a new one: no row runs twice, on that apply or the one after.
func TestCLI_sigkillAfterLostBatchAnswersRunsNoRowTwice(t *testing.T) {
	skipUnlessAcc(t)
	t.Parallel()
	const rows = 20
	srv := newTestServer(t, emulator.Options{Workers: rows, StepDuration: 10 * time.Millisecond})
	// Submissions 5 to 7 create their jobs, and their answers are held back.
	srv.Inject(emulator.Fault{Op: emulator.OpSubmitJob, Nth: 5, Times: 3, AfterHandling: true, Delay: time.Minute})
	tf := newBinaryTerraform(t, buildProvider(t))
	withoutJournalEnv(tf)
	tf.writeConfig(batchConfig(srv, batchSamplerTemplate(20), batchSeedRows(rows, 0), "max_in_flight = 8"))
	dir := filepath.Join(tf.dir, ".terraform", "svc-journal")
	ready := func() bool { return srv.JobCount() >= rows && len(journalJobIDs(dir)) >= rows-3 }
	args := []string{"apply", "-auto-approve", "-input=false", "-no-color"}
	if out, err := tf.signalGroupOnce(syscall.SIGKILL, ready, args...); err == nil {
		t.Fatalf("the apply ended well despite SIGKILL:\n%s", out)
	}
	srv.ClearFaults()
	tf.setAsideTornState(t)
	for i := range 2 {
		out := tf.run(args...)
		if i == 0 && (!strings.Contains(oneLine(out), "3 submissions may have reached the service") || adoptedRows(out) != rows-3) {
			t.Errorf("want 3 unknown outcomes naming their keys and %d rows adopted:\n%s", rows-3, out)
		}
		assertEachRowRanOnce(t, srv, rows)
	}
	_, statuses := batchRowIDs(t, tf)
	if statuses["succeeded"] != rows-3 || statuses[batchRowUnknown] != 3 {
		t.Errorf("rows by status %v; want %d succeeded and 3 unknown", statuses, rows-3)
	}
}

// A batch writing into a bucket journals into that bucket, under <output prefix>/.svc-journal,
// unless the journal setting or SVC_JOURNAL chose the journal (turning it off included); a batch
// writing into a directory uses the provider's journal.
func TestBatchJournalAt(t *testing.T) {
	t.Parallel()
	const q = "?endpoint=http://127.0.0.1:9000&region=us-east-1&use_path_style=true"
	tests := []struct {
		name, outputDir, provider string
		given                     bool
		want                      string
	}{
		{name: "a directory: the provider's", outputDir: "out", provider: ".terraform/svc-journal", want: ".terraform/svc-journal"},
		{name: "a bucket: in it", outputDir: "s3://outs/run/1" + q, provider: ".terraform/svc-journal", want: "s3://outs/run/1/.svc-journal" + q},
		{name: "a bucket's root", outputDir: "s3://outs?region=eu-west-1", provider: ".terraform/svc-journal", want: "s3://outs/.svc-journal?region=eu-west-1"},
		{name: "a bucket, the journal set", outputDir: "s3://outs/run", provider: "/var/j", given: true, want: "/var/j"},
		{name: "a bucket, the journal set to another bucket", outputDir: "s3://outs/run", provider: "s3://j/x", given: true, want: "s3://j/x"},
		{name: "a bucket, the journal turned off", outputDir: "s3://outs/run", provider: "", given: true, want: ""},
	}
	for _, tt := range tests {
		if got := batchJournalAt(tt.outputDir, tt.provider, tt.given); got != tt.want {
			t.Errorf("%s: batchJournalAt = %q; want %q", tt.name, got, tt.want)
		}
	}
}

// The batch's journal in its output bucket is checked at plan time like the provider's: a
// bucket that cannot be used is an error naming the journal's URL. Each place opens once.
func TestCheckBatchJournal(t *testing.T) {
	t.Parallel()
	b := newTestBucket(t, "outputs")
	down := s3gw.Start(t)
	down.CreateBucket("outputs")
	down.Stop()
	d := &providerData{now: time.Now, journal: newSubmissionJournal(".terraform/svc-journal", time.Now), bucketJournals: &journalsByPlace{}}
	tests := []struct {
		name, outputDir, wantErr string
	}{
		{name: "a bucket that can be used", outputDir: b.url("run")},
		{name: "an unreachable bucket", outputDir: down.URL("outputs", "run"), wantErr: "journal " + down.URL("outputs", "run/.svc-journal") + ": bucket \"outputs\" could not be reached"},
		{name: "a directory: the provider's journal, checked when configured", outputDir: t.TempDir()},
	}
	for _, tt := range tests {
		err := d.checkBatchJournal(tt.outputDir)
		if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
			t.Errorf("%s: checkBatchJournal = %v; want %q", tt.name, err, tt.wantErr)
		}
	}
	if j1, j2 := d.journalForBatch(b.url("run")), d.journalForBatch(b.url("run")); j1 == nil || j1 != j2 || j1 == d.journal {
		t.Errorf("journalForBatch: %p, %p; want one journal in the bucket, not the provider's %p", j1, j2, d.journal)
	}
	if j := d.journalForBatch(t.TempDir()); j != d.journal {
		t.Errorf("journalForBatch of a directory = %p; want the provider's %p", j, d.journal)
	}
}
