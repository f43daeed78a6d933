package provider

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/svc-org/terraform-provider-svc/internal/emulator"
)

// TestSoakBatchKills kills a svc_job_batch's apply with SIGKILL to Terraform's process group at
// random moments (seeded; the seed is logged), applying again after each kill and at last to
// completion: each row runs exactly once at the server, whatever the kills caught. A moment is
// a random number of jobs created, or succeeded, since that apply began. A kill that catches an
// answer on its way back loses that job's id (an unknown outcome, by design: the key is resent
// and refused as a reuse, never replaced); such rows are counted, and still ran once.
//
// make test runs 100 rows and 2 kills; make soak (SVC_SOAK=1) 1,000 rows and 5 kills.
func TestSoakBatchKills(t *testing.T) {
	skipUnlessAcc(t)
	t.Parallel()
	rows, kills := 100, 2
	if os.Getenv("SVC_SOAK") != "" {
		rows, kills = 1000, 5
	}
	seed := time.Now().UnixNano()
	if s, err := strconv.ParseInt(os.Getenv("SVC_SOAK_SEED"), 10, 64); err == nil {
		seed = s // a logged seed, replayed
	}
	t.Logf("seed %d: %d rows, %d kills", seed, rows, kills)
	rnd := rand.New(rand.NewPCG(uint64(seed), 0))
	srv := newTestServer(t, emulator.Options{Workers: 64, StepDuration: 5 * time.Millisecond})
	tf := newBinaryTerraform(t, buildProvider(t))
	withoutJournalEnv(tf)
	tf.writeConfig(batchConfig(srv, batchSamplerTemplate(20), batchSeedRows(rows, 0), "max_in_flight = 64"))
	args := []string{"apply", "-auto-approve", "-input=false", "-no-color"}
	start := time.Now()
	for k := range kills {
		created, succeeded := srv.JobCount(), jobsSucceeded(srv)
		left := rows - created
		if left < 2 {
			break
		}
		n := 1 + rnd.IntN(left*3/4)
		bySucceeded := rnd.IntN(2) == 0
		ready := func() bool { return srv.JobCount() >= created+n }
		if bySucceeded {
			ready = func() bool { return jobsSucceeded(srv) >= succeeded+n }
		}
		if out, err := tf.signalGroupOnce(syscall.SIGKILL, ready, args...); err == nil {
			t.Fatalf("kill %d: the apply ended well despite SIGKILL:\n%s", k+1, out)
		}
		tf.setAsideTornState(t)
		t.Logf("kill %d after %d more jobs %s: %d jobs on the server, %d succeeded", k+1, n,
			map[bool]string{true: "succeeded", false: "created"}[bySucceeded], srv.JobCount(), jobsSucceeded(srv))
	}
	// Each apply after a kill may itself stop short of some rows (an unknown outcome is final):
	// applying again until nothing is left converges in one.
	tf.run(args...)
	tf.run(args...)
	runs := seedRuns(srv)
	twice := 0
	for i := range rows {
		if runs[i] != 1 {
			twice++
			t.Errorf("row r%d ran %d times at the server; want once", i, runs[i])
		}
	}
	ids, statuses := batchRowIDs(t, tf)
	t.Logf("%d rows in %s over %d kills: %d jobs on the server, rows by status %v, %d ids in state; journal %d ids",
		rows, time.Since(start).Round(time.Millisecond), kills, srv.JobCount(), statuses, len(ids),
		len(journalJobIDs(filepath.Join(tf.dir, ".terraform", "svc-journal"))))
	if srv.JobCount() != rows || twice != 0 {
		t.Fatalf("%d jobs for %d rows; want one each", srv.JobCount(), rows)
	}
	if statuses["succeeded"]+statuses["unknown"] != rows {
		t.Fatalf("rows by status %v; want each succeeded, or unknown where a kill lost its answer", statuses)
	}
}
