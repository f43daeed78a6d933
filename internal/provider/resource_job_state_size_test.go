package provider

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/svc-org/terraform-provider-svc/internal/emulator"
)

// maxStateBytesPerFinishedJob is what a finished svc_job (one output, the bench's workflow of
// about 300 bytes) may cost in the state file: a batch of thousands of jobs is kept, locked,
// uploaded and parsed at every command. Measured on Terraform 1.11: 2,461 bytes per job while
// an ended job kept its progress, queue position and links, 1,847 once they were nulled, 1,492
// since state keeps only what a finished job's users need (schema version 1). Terraform 1.15
// and OpenTofu 1.12 also record each instance's identity (134 bytes more: 1,626). The same
// workflow in terraform_data, which holds it twice, costs 1,107.
const maxStateBytesPerFinishedJob = 1536

// maxStateBytesPerFinishedJobWithIdentity is the same bound on a CLI that records each
// instance's identity in state beside its attributes.
const maxStateBytesPerFinishedJobWithIdentity = maxStateBytesPerFinishedJob + 160

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
	perJob, limit := len(state)/jobs, maxStateBytesPerFinishedJob
	if bytes.Contains(state, []byte(`"identity": {`)) {
		limit = maxStateBytesPerFinishedJobWithIdentity
	}
	t.Logf("terraform.tfstate: %d bytes for %d finished jobs, %d bytes per job", len(state), jobs, perJob)
	if perJob > limit {
		t.Errorf("%d bytes of state per finished job, want at most %d", perJob, limit)
	}
	for _, dropped := range []string{`"progress"`, `"urls"`, `"queue_position"`, `"metrics"`, `"created_at"`, `"started_at"`, `"outputs_omitted"`} {
		if bytes.Contains(state, []byte(dropped)) {
			t.Errorf("the state of finished jobs holds what the data source reads live (%s)", dropped)
		}
	}
	if subSecond := regexp.MustCompile(`"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+`).Find(state); subSecond != nil {
		t.Errorf("the state keeps a time to less than the second (%s)", subSecond)
	}
	for _, signed := range []string{"sig=", "expires="} {
		if bytes.Contains(state, []byte(signed)) {
			t.Errorf("the state file holds a signed URL (%q)", signed)
		}
	}
}
