package provider

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
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

// State written at schema version 0 (the whole record, times as the service wrote them) is
// upgraded by the next plan from the state alone: the plan shows no change and sends no
// request, and the next refresh-only apply writes version 1's state, with nothing sent either.
func TestAccJob_stateV0UpgradesWithoutDiffOrRequest(t *testing.T) {
	skipUnlessAcc(t)
	t.Parallel()
	const jobs = 3
	srv := newTestServer(t, emulator.Options{Mode: emulator.ModeStrict})
	tf := newTerraformCLI(t, "")
	writeJobsConfig(t, tf.dir, 1)
	vars := []string{"-input=false", "-no-color", "-var", "endpoint=" + srv.URL(), "-var", "jobs=" + strconv.Itoa(jobs)}
	tf.run(append([]string{"apply", "-auto-approve"}, vars...)...)
	statePath := filepath.Join(tf.dir, "terraform.tfstate")
	writeStateAsV0(t, statePath)

	before := requestsTotal(srv)
	if out, err := tf.try(append([]string{"plan", "-detailed-exitcode"}, vars...)...); err != nil {
		t.Fatalf("the plan of version 0's state shows a change or failed (%v):\n%s", err, out)
	}
	tf.run(append([]string{"apply", "-refresh-only", "-auto-approve"}, vars...)...)
	if sent := requestsTotal(srv) - before; sent != 0 {
		t.Errorf("upgrading and refreshing %d finished jobs sent %d requests, want 0", jobs, sent)
	}
	state, err := os.ReadFile(statePath)
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(state, []byte(`"schema_version": 1`)); n != jobs || bytes.Contains(state, []byte(`"created_at"`)) ||
		regexp.MustCompile(`:\d\d\.\d+Z`).Match(state) {
		t.Errorf("after the refresh, %d of %d jobs at schema version 1, or version 0's values still held:\n%s", n, jobs, state)
	}
}

// writeStateAsV0 rewrites the state file at path as schema version 0 held its svc_job
// instances: the record whole, times to the microsecond, and a signed URL on each output as
// the oldest states held.
func writeStateAsV0(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var state map[string]any
	if err := json.Unmarshal(b, &state); err != nil {
		t.Fatal(err)
	}
	state["serial"] = state["serial"].(float64) + 1
	for _, r := range state["resources"].([]any) {
		for _, i := range r.(map[string]any)["instances"].([]any) {
			inst := i.(map[string]any)
			inst["schema_version"] = 0
			attrs := inst["attributes"].(map[string]any)
			for _, name := range []string{"completed_at", "expires_at"} {
				attrs[name] = strings.TrimSuffix(attrs[name].(string), "Z") + ".123456Z"
			}
			attrs["created_at"], attrs["started_at"] = attrs["completed_at"], attrs["completed_at"]
			attrs["queue_position"], attrs["progress"], attrs["urls"], attrs["outputs_omitted"] = nil, nil, nil, 0
			attrs["metrics"] = map[string]any{"queue_ms": 0, "execution_ms": 2}
			for _, o := range attrs["outputs"].([]any) {
				o.(map[string]any)["url"] = "http://127.0.0.1:1/content?sig=1"
				o.(map[string]any)["url_expires_at"] = attrs["expires_at"]
			}
		}
	}
	if b, err = json.MarshalIndent(state, "", "  "); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}
