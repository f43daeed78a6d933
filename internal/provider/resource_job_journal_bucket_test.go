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
