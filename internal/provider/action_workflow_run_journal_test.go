package provider

import (
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/svc-org/terraform-provider-svc/internal/emulator"
)

// SIGKILL to Terraform's process group while svc_workflow_run waits for its job: the next
// invocation adopts that job from the journal and waits for it instead of running the workflow
// again; the invocation after that, whose predecessor ended well, runs it anew.
func TestCLI_sigkillMidWorkflowRunAdoptsItsJob(t *testing.T) {
	skipUnlessAcc(t)
	requireCLIFeature(t, featureActions)
	t.Parallel()
	srv := newTestServer(t, emulator.Options{StepDuration: 100 * time.Millisecond})
	tf := newBinaryTerraform(t, buildProvider(t))
	withoutJournalEnv(tf)
	tf.writeConfig(providerConfig(srv, "") + fmt.Sprintf(`
action "svc_workflow_run" "x" {
  config {
    workflow = %s
  }
}
`, samplerWorkflowHCL(20)))
	journal := filepath.Join(tf.dir, ".terraform", "svc-journal")
	args := []string{"apply", "-auto-approve", "-no-color", "-invoke=action.svc_workflow_run.x"}
	if out, err := tf.signalGroupOnce(syscall.SIGKILL, func() bool { return journaledIDs(journal) >= 1 }, args...); err == nil {
		t.Fatalf("the invocation ended well despite SIGKILL:\n%s", out)
	}
	out := oneLine(tf.run(args...))
	if jobs := srv.JobCount(); jobs != 1 || !strings.Contains(out, "adopted from the journal") {
		t.Fatalf("%d jobs after the second invocation; want the first adopted, 1 job:\n%s", jobs, out)
	}
	if st, _ := srv.JobStatus(srv.JobIDs()[0]); st != "succeeded" {
		t.Fatalf("the adopted job is %s; want succeeded", st)
	}
	tf.run(args...)
	if jobs := srv.JobCount(); jobs != 2 {
		t.Fatalf("%d jobs after a third invocation; want 2: each invocation that ended well is done with", jobs)
	}
}
