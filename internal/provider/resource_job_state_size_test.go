package provider

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/svc-org/terraform-provider-svc/internal/emulator"
)

// maxStateBytesPerFinishedJob is what a finished svc_job (one output, the bench's workflow of
// about 300 bytes) may cost in the state file: a batch of thousands of jobs is kept, locked,
// uploaded and parsed at every command. Measured: 2,461 bytes per job while an ended job kept
// its progress, queue position and links, 1,847 bytes since on Terraform 1.11, 1,981 on
// Terraform 1.15, whose state also records each instance's identity (the same workflow in
// terraform_data, which holds it twice, costs 1,107).
const maxStateBytesPerFinishedJob = 2048

// A finished job keeps in the state file what lasts (record, outputs, error, metrics) and
// nothing that describes a run in flight or a credential: the bytes per job of a state file
// holding finished jobs stay bounded, and no signed URL is in it. Measured on the strict
// server, whose URLs are signed for seconds and re-signed at every read.
func TestAccJob_stateBytesPerFinishedJob(t *testing.T) {
	skipUnlessAcc(t)
	t.Parallel()
	const jobs = 20
	srv := newTestServer(t, emulator.Options{Mode: emulator.ModeStrict, Workers: 8})
	tf := newTerraformCLI(t, "")
	writeJobsConfig(t, tf.dir, 1)
	tf.run("apply", "-auto-approve", "-input=false", "-no-color", "-var", "endpoint="+srv.URL(), "-var", "jobs="+strconv.Itoa(jobs))
	state, err := os.ReadFile(filepath.Join(tf.dir, "terraform.tfstate"))
	if err != nil {
		t.Fatal(err)
	}
	perJob := len(state) / jobs
	t.Logf("terraform.tfstate: %d bytes for %d finished jobs, %d bytes per job", len(state), jobs, perJob)
	if perJob > maxStateBytesPerFinishedJob {
		t.Errorf("%d bytes of state per finished job, want at most %d", perJob, maxStateBytesPerFinishedJob)
	}
	for _, inFlight := range []string{`"progress": {`, `"urls": {`, `"queue_position": 0`, `"self":`} {
		if bytes.Contains(state, []byte(inFlight)) {
			t.Errorf("the state of finished jobs holds what describes a run in flight (%s)", inFlight)
		}
	}
	for _, signed := range []string{"sig=", "expires="} {
		if bytes.Contains(state, []byte(signed)) {
			t.Errorf("the state file holds a signed URL (%q)", signed)
		}
	}
}
