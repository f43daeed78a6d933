package provider

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/svc-org/terraform-provider-svc/internal/emulator"
)

// svc_job_cancel on a running job sends one cancel, through the job's link, and waits until it
// is canceled; invoked again on the job that ended, it sends nothing and says so; an id the
// service does not know is an error naming it.
func TestAccJobCancelAction(t *testing.T) {
	skipUnlessAcc(t)
	requireCLIFeature(t, featureActions)
	t.Parallel()
	srv := newTestServer(t, emulator.Options{StepDuration: time.Second})
	tf := newTerraformCLI(t, "")
	unknown := uuid.NewString()
	tf.writeConfig(providerConfig(srv, "") + fmt.Sprintf(`
resource "svc_job" "long" {
  workflow            = %s
  wait_for_completion = false
}

action "svc_job_cancel" "stop" {
  config {
    id = svc_job.long.id
  }
}

action "svc_job_cancel" "unknown" {
  config {
    id = %q
  }
}
`, slowWorkflowHCL, unknown))
	tf.run("apply", "-auto-approve", "-no-color")
	id := srv.JobIDs()[0]

	lines := actionLines(tf.run("apply", "-auto-approve", "-no-color", "-invoke=action.svc_job_cancel.stop"), "action.svc_job_cancel.stop")
	if status, _ := srv.JobStatus(id); status != "canceled" || srv.Requests(emulator.OpCancelJob) != 1 {
		t.Fatalf("job %s is %s after %d cancels; want canceled after 1", id, status, srv.Requests(emulator.OpCancelJob))
	}
	checkNoRepeats(t, lines)
	if !anyMatch(lines, `^job `+id+` cancel requested`) || !anyMatch(lines, `^job `+id+` canceled after `) {
		t.Errorf("the progress lines do not say the cancel was requested and took effect:\n%s", strings.Join(lines, "\n"))
	}

	again := tf.run("apply", "-auto-approve", "-no-color", "-invoke=action.svc_job_cancel.stop")
	if !anyMatch(actionLines(again, "action.svc_job_cancel.stop"), `^job `+id+` already ended canceled: nothing to cancel$`) ||
		srv.Requests(emulator.OpCancelJob) != 1 {
		t.Errorf("cancelling the canceled job again sent %d cancels in all or did not say it had ended:\n%s", srv.Requests(emulator.OpCancelJob), again)
	}

	out, err := tf.try("apply", "-auto-approve", "-no-color", "-invoke=action.svc_job_cancel.unknown")
	if err == nil || !regexp.MustCompile(`(?s)Job not found.*does not know job\s+`+unknown).MatchString(out) {
		t.Fatalf("an unknown id did not fail naming it (%v):\n%s", err, out)
	}
}
