package provider

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/svc-org/terraform-provider-svc/internal/emulator"
)

// SIGKILL to Terraform's process group mid-apply of 10 identical svc_job journaled in a bucket,
// then the working directory deleted (the runner is gone with its disk: no state, no local
// journal) and a fresh runner lays it anew from the configuration and applies: it reads the
// bucket's journal, waits for the dead run's lease to expire (it cannot tell it from a live run
// sooner), and adopts every job the dead run submitted, so the service runs 10 jobs, not more.
func TestCLI_freshRunnerAfterSigkillAdoptsFromTheBucketJournal(t *testing.T) {
	skipUnlessAcc(t)
	t.Parallel()
	pluginDir := buildProvider(t)
	tests := []struct {
		name  string
		args  []string
		fault *emulator.Fault
		ready func(srv *emulator.Server, slots *journalSlots) bool
	}{
		{
			// Submissions 4 to 6 are journaled and sent, but the server holds them before creating
			// anything: three keys without an id, resent by the fresh runner (created then).
			name:  "submissions on the wire",
			args:  []string{"-parallelism=6"},
			fault: &emulator.Fault{Op: emulator.OpSubmitJob, Nth: 4, Times: 3, Delay: time.Minute},
			ready: func(srv *emulator.Server, slots *journalSlots) bool {
				return srv.JobCount() >= 3 && srv.Requests(emulator.OpSubmitJob) >= 6 && slots.count(`"op":"id"`) >= 3
			},
		},
		{
			// Their ids were returned to Terraform, whose state dies with the runner's disk.
			name:  "some jobs finished and in the dead runner's state",
			args:  []string{"-parallelism=10"},
			ready: func(srv *emulator.Server, _ *journalSlots) bool { return jobsSucceeded(srv) >= 5 },
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := newTestBucket(t, "journals")                                                          // before the CLI: it sets the AWS SDK's environment
			srv := newTestServer(t, emulator.Options{Workers: 4, StepDuration: 50 * time.Millisecond}) // a job runs 1 s
			if tt.fault != nil {
				srv.Inject(*tt.fault)
			}
			url := b.url("ci/project")
			config := strings.Replace(jobsJournalConfig(srv, 10), "max_retries", fmt.Sprintf("journal = %q\n  max_retries", url), 1)
			slots := &journalSlots{b: b, prefix: "ci/project/journal/seg/"}

			dead := newBinaryTerraform(t, pluginDir)
			dead.writeConfig(config)
			args := append([]string{"apply", "-auto-approve", "-input=false", "-no-color"}, tt.args...)
			out, err := dead.signalGroupOnce(syscall.SIGKILL, func() bool { return tt.ready(srv, slots) }, args...)
			if err == nil {
				t.Fatalf("the apply ended well despite SIGKILL:\n%s", out)
			}
			killed, before := time.Now(), srv.JobIDs()
			srv.ClearFaults()
			if err := os.RemoveAll(dead.dir); err != nil {
				t.Fatal(err)
			}

			fresh := newBinaryTerraform(t, pluginDir)
			fresh.writeConfig(config)
			out = fresh.run("apply", "-auto-approve", "-input=false", "-no-color")
			took := time.Since(killed)
			if jobs := srv.JobCount(); jobs != 10 {
				t.Fatalf("%d jobs on the server after the fresh runner's apply (%d before it); want 10, none run twice:\n%s", jobs, len(before), out)
			}
			// Every job the dead run created is in the fresh runner's state: adopted, not run again.
			assertEveryJobInState(t, srv.JobIDs(), jobIDsInState(t, fresh))
			for _, r := range fresh.stateResources() {
				if r.Values["status"] != "succeeded" || r.Values["outputs"] == nil {
					t.Errorf("%s is %v with outputs %v; want succeeded with its outputs", r.Address, r.Values["status"], r.Values["outputs"])
				}
			}
			if !strings.Contains(out, "Job adopted from the journal") {
				t.Errorf("the fresh runner's apply warned of no adoption:\n%s", out)
			}
			t.Logf("%d jobs on the server at the kill; the fresh runner created %d; kill to its apply's end: %s (the dead run's lease: at most 30 s)",
				len(before), 10-len(before), took.Round(100*time.Millisecond))
		})
	}
}

// journalSlots reads a bucket journal's slots as a test polls it: each slot once (a slot is
// never rewritten, only deleted by a compaction).
type journalSlots struct {
	b      *testBucket
	prefix string
	mu     sync.Mutex
	read   map[string]string
}

// count is how often s occurs in the slots now in the bucket.
func (j *journalSlots) count(s string) int {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.read == nil {
		j.read = map[string]string{}
	}
	n := 0
	for key := range j.b.objects() {
		if !strings.HasPrefix(key, j.prefix) {
			continue
		}
		body, ok := j.read[key]
		if !ok {
			var err error
			if body, _, err = j.b.object(key); err != nil {
				continue // deleted by a compaction since the listing
			}
			j.read[key] = body
		}
		n += strings.Count(body, s)
	}
	return n
}

// SIGKILL to Terraform's process group halfway through a 200-row svc_job_batch whose outputs go
// to a bucket, and no journal setting: the batch journals into its output bucket. The runner is
// then gone with its disk (no state, no local journal); a fresh one lays the working directory
// anew from the configuration and applies: it adopts every row the dead run submitted from the
// bucket's journal, so each row runs once at the server, and every row's outputs are in the
// bucket.
func TestCLI_freshRunnerAfterSigkillAdoptsTheBatchFromItsBucket(t *testing.T) {
	skipUnlessAcc(t)
	t.Parallel()
	const rows = 200
	b := newTestBucket(t, "frames") // before the CLI: it sets the AWS SDK's environment
	// A job runs 20 steps of 25 ms, 32 at once: the apply takes about 7 waves of 0.5 s.
	srv := newTestServer(t, emulator.Options{Workers: 32, StepDuration: 25 * time.Millisecond})
	// Submissions from the 101st are held before anything is created: no answer is on its way at
	// the kill (a job whose answer the killed run had not written down cannot be named).
	srv.Inject(emulator.Fault{Op: emulator.OpSubmitJob, Nth: rows/2 + 1, Times: 1000, Delay: time.Minute})
	config := batchConfig(srv, batchSamplerTemplate(20), batchSeedRows(rows, 0),
		fmt.Sprintf("max_in_flight = 32\n  output_dir = %q", b.url("run")))
	slots := &journalSlots{b: b, prefix: "run/.svc-journal/journal/seg/"}
	pluginDir := buildProvider(t)

	dead := newBinaryTerraform(t, pluginDir)
	withoutJournalEnv(dead)
	dead.writeConfig(config)
	ready := func() bool { return jobsSucceeded(srv) >= rows/2 && slots.holdAll(srv.JobIDs()) }
	if out, err := dead.signalGroupOnce(syscall.SIGKILL, ready, "apply", "-auto-approve", "-input=false", "-no-color"); err == nil {
		t.Fatalf("the apply ended well despite SIGKILL:\n%s", out)
	}
	before := srv.JobIDs()
	srv.ClearFaults()
	if err := os.RemoveAll(dead.dir); err != nil {
		t.Fatal(err)
	}

	fresh := newBinaryTerraform(t, pluginDir)
	withoutJournalEnv(fresh)
	fresh.writeConfig(config)
	out := fresh.run("apply", "-auto-approve", "-input=false", "-no-color")
	assertEachRowRanOnce(t, srv, rows)
	assertRowsSucceeded(t, fresh, srv, rows)
	if adopted := adoptedRows(out); adopted < len(before) {
		t.Errorf("the fresh runner adopted %d rows; want at least the %d jobs created before the kill:\n%s", adopted, len(before), out)
	}
	outputs := 0
	for key := range b.objects() {
		if strings.HasPrefix(key, "run/r") {
			outputs++
		}
	}
	if outputs != rows {
		t.Errorf("%d outputs in the bucket; want one per row, %d", outputs, rows)
	}
	t.Logf("%d jobs on the server at the kill; the fresh runner adopted %d rows and created %d jobs",
		len(before), adoptedRows(out), rows-len(before))
}

// holdAll reports whether the slots now in the bucket name every one of ids.
func (j *journalSlots) holdAll(ids []string) bool {
	j.count("") // reads the slots not read yet
	j.mu.Lock()
	defer j.mu.Unlock()
	var all strings.Builder
	for key := range j.b.objects() {
		all.WriteString(j.read[key])
	}
	for _, id := range ids {
		if !strings.Contains(all.String(), id) {
			return false
		}
	}
	return true
}
