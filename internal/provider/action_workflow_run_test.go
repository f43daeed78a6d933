package provider

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/svc-org/terraform-provider-svc/internal/client"
	"github.com/svc-org/terraform-provider-svc/internal/emulator"
)

// actionLines are the progress messages Terraform printed for the action at address, in order
// ("Action action.svc_workflow_run.x (triggered by CLI): <message>").
func actionLines(out, address string) []string {
	var lines []string
	for _, line := range strings.Split(out, "\n") {
		if _, msg, ok := strings.Cut(line, "Action "+address+" "); ok {
			if _, msg, ok = strings.Cut(msg, "): "); ok {
				lines = append(lines, msg)
			}
		}
	}
	return lines
}

// checkNoRepeats fails when two lines in a row say the same: one line per change, not per poll.
func checkNoRepeats(t *testing.T, lines []string) {
	t.Helper()
	for i := 1; i < len(lines); i++ {
		if lines[i] == lines[i-1] {
			t.Errorf("line %d repeats the one before: %q", i, lines[i])
		}
	}
}

// checkSavedOutputs compares the files in dir with the outputs of job as the service reports
// them: one file per output, named as the service named it, with its blake3 hash.
func checkSavedOutputs(t *testing.T, srv *emulator.Server, id, dir string) {
	t.Helper()
	c, err := client.New(client.Config{Endpoint: srv.URL()})
	if err != nil {
		t.Fatal(err)
	}
	job, err := c.GetJob(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	files, _ := os.ReadDir(dir)
	if len(job.Outputs) == 0 || len(files) != len(job.Outputs) {
		t.Fatalf("%d files in %s, the job has %d outputs", len(files), dir, len(job.Outputs))
	}
	for _, o := range job.Outputs {
		sum, err := fileBlake3(filepath.Join(dir, o.Name))
		if err != nil || o.Hash == nil || sum != *o.Hash {
			t.Errorf("output %s: file blake3 %s (%v), the service says %v", o.Name, sum, err, derefOrUnknown(o.Hash))
		}
	}
}

// `terraform apply -invoke` runs the workflow once per invocation, reports each change of the
// job's state as its own line, and saves every output, verified, under the service's name.
func TestAccWorkflowRunAction_invoke(t *testing.T) {
	skipUnlessAcc(t)
	requireCLIFeature(t, featureActions)
	t.Parallel()
	// The sampler runs for 4 s, longer than the wait's longest poll interval (2 s): the wait sees
	// the job running whatever its schedule.
	// A generous server (progress that moves, hashes at once); TestAccWorkflowRunAction_strictServer
	// is the other kind.
	srv := newTestServer(t, emulator.Options{Mode: emulator.ModeGenerous, StepDuration: 500 * time.Millisecond, QueueDelay: 100 * time.Millisecond})
	tf := newTerraformCLI(t, "")
	out := filepath.Join(tf.dir, "out")
	tf.writeConfig(providerConfig(srv, "") + fmt.Sprintf(`
action "svc_workflow_run" "x" {
  config {
    workflow   = %s
    output_dir = %q
  }
}
`, strings.ReplaceAll(samplerWorkflowHCL(8), `batch_size = 1`, `batch_size = 2`), out))

	lines := actionLines(tf.run("apply", "-auto-approve", "-no-color", "-invoke=action.svc_workflow_run.x"), "action.svc_workflow_run.x")
	if n := srv.Requests(emulator.OpSubmitJob); n != 1 {
		t.Fatalf("%d submissions, want 1", n)
	}
	id := srv.JobIDs()[0]
	checkNoRepeats(t, lines)
	for _, want := range []string{
		`^job ` + id + ` submitted \(to stop it, invoke svc_job_cancel with id = "` + id + `"\)$`,
		`^job ` + id + ` running: node "2" \(ImageNoiseSampler\), step \d/8, 1/3 nodes, \d+%$`,
		`^job ` + id + ` succeeded after \d+(\.\d+)?m?s, 2 outputs$`,
		`^saved .*/out/sampled_00001_\.png \(\d+ bytes, blake3 verified\)$`,
		`^saved .*/out/sampled_00002_\.png \(\d+ bytes, blake3 verified\)$`,
	} {
		if !anyMatch(lines, want) {
			t.Errorf("no progress line matches %s; lines:\n%s", want, strings.Join(lines, "\n"))
		}
	}
	checkSavedOutputs(t, srv, id, out)

	// Every invocation is a new run.
	tf.run("apply", "-auto-approve", "-no-color", "-invoke=action.svc_workflow_run.x")
	if n := srv.Requests(emulator.OpSubmitJob); n != 2 {
		t.Fatalf("%d submissions after invoking again, want 2", n)
	}
}

func anyMatch(lines []string, pattern string) bool {
	re := regexp.MustCompile(pattern)
	for _, l := range lines {
		if re.MatchString(l) {
			return true
		}
	}
	return false
}

// A failed job fails the invocation, naming node, class and message, on the terminal and in
// the error.
func TestAccWorkflowRunAction_failureNamesTheNode(t *testing.T) {
	skipUnlessAcc(t)
	requireCLIFeature(t, featureActions)
	t.Parallel()
	srv := newTestServer(t, emulator.Options{})
	srv.FailNode("ImageInvert", "execution_error", "out of memory")
	tf := newTerraformCLI(t, "")
	tf.writeConfig(providerConfig(srv, "") + fmt.Sprintf(`
action "svc_workflow_run" "x" {
  config {
    workflow = %s
  }
}
`, imageWorkflowHCL(1)))
	out, err := tf.try("apply", "-auto-approve", "-no-color", "-invoke=action.svc_workflow_run.x")
	if err == nil {
		t.Fatalf("the invocation succeeded:\n%s", out)
	}
	want := regexp.MustCompile(`node "2" \(ImageInvert\) raised execution_error: out of memory`)
	if !anyMatch(actionLines(out, "action.svc_workflow_run.x"), want.String()) || len(want.FindAllString(out, -1)) < 2 {
		t.Fatalf("neither the progress line and the error name the failing node:\n%s", out)
	}
}

// Ctrl-C while the run waits: the job keeps running on the service, and the terminal shows its
// id and how to cancel it with svc_job_cancel. Terraform 1.15 prints nothing of an action after
// an interrupt (and ends the apply as complete), so the line that says so is the first one.
// Nothing is cancelled or resubmitted.
func TestCLI_interruptedWorkflowRunPrintsTheJobID(t *testing.T) {
	skipUnlessAcc(t)
	requireCLIFeature(t, featureActions)
	t.Parallel()
	srv := newTestServer(t, emulator.Options{StepDuration: 50 * time.Millisecond})
	cli := newTerraformCLI(t, "")
	cli.writeConfig(providerConfig(srv, "") + fmt.Sprintf(`
action "svc_workflow_run" "x" {
  config {
    workflow = %s
  }
}
`, slowWorkflowHCL))
	out, _ := cli.interruptOnce(func() bool { return jobRunning(srv) }, "apply", "-auto-approve", "-no-color", "-invoke=action.svc_workflow_run.x")
	ids := srv.JobIDs()
	if len(ids) != 1 || srv.Requests(emulator.OpCancelJob) != 0 {
		t.Fatalf("%d jobs and %d cancels; want the one job, not cancelled", len(ids), srv.Requests(emulator.OpCancelJob))
	}
	if status, _ := srv.JobStatus(ids[0]); status != "running" {
		t.Fatalf("job %s is %s, want still running", ids[0], status)
	}
	want := "job " + ids[0] + ` submitted (to stop it, invoke svc_job_cancel with id = "` + ids[0] + `")`
	if lines := actionLines(out, "action.svc_workflow_run.x"); len(lines) == 0 || lines[0] != want {
		t.Errorf("the first line of the interrupted invocation is not %q:\n%s", want, out)
	}
}

// On a server as little generous as the contract allows (no hashes, URLs valid seconds, no
// event stream, progress that does not move), the run still ends, once, with every output
// saved; what could not be checked is said on the terminal and in a warning, never claimed.
func TestAccWorkflowRunAction_strictServer(t *testing.T) {
	skipUnlessAcc(t)
	requireCLIFeature(t, featureActions)
	t.Parallel()
	srv := newTestServer(t, emulator.Options{Mode: emulator.ModeStrict})
	tf := newTerraformCLI(t, "")
	out := filepath.Join(tf.dir, "out")
	tf.writeConfig(providerConfig(srv, "") + fmt.Sprintf(`
action "svc_workflow_run" "x" {
  config {
    workflow   = %s
    output_dir = %q
  }
}
`, imageWorkflowHCL(2), out))
	got := tf.run("apply", "-auto-approve", "-no-color", "-invoke=action.svc_workflow_run.x")
	lines := actionLines(got, "action.svc_workflow_run.x")
	if n := srv.Requests(emulator.OpSubmitJob); n != 1 {
		t.Fatalf("%d submissions, want 1", n)
	}
	checkNoRepeats(t, lines)
	if !anyMatch(lines, `^saved .*/out/acc_00001_\.png \(\d+ bytes, not verified: the service gave no hash\)$`) ||
		!anyMatch(lines, `^saved .*/out/acc_00002_\.png \(\d+ bytes, not verified: the service gave no hash\)$`) ||
		!strings.Contains(got, "Output not verified") {
		t.Fatalf("the unverified outputs are not said to be so:\n%s", got)
	}
	if files, _ := os.ReadDir(out); len(files) != 2 {
		t.Fatalf("%d files in %s, want 2", len(files), out)
	}
}

// The write-only partner key reaches the job's extra_data and nothing Terraform prints.
func TestAccWorkflowRunAction_partnerKeyIsWriteOnly(t *testing.T) {
	skipUnlessAcc(t)
	requireCLIFeature(t, featureActions)
	t.Parallel()
	const key = "pk-run-secret-0123456789"
	srv := newTestServer(t, emulator.Options{})
	tf := newTerraformCLI(t, "")
	tf.writeConfig(providerConfig(srv, "") + fmt.Sprintf(`
variable "partner_key" {
  type      = string
  sensitive = true
  ephemeral = true
}

action "svc_workflow_run" "x" {
  config {
    workflow           = %s
    partner_api_key_wo = var.partner_key
  }
}
`, imageWorkflowHCL(1)))
	out := tf.run("apply", "-auto-approve", "-no-color", "-invoke=action.svc_workflow_run.x", "-var", "partner_key="+key)
	ids := srv.JobIDs()
	if len(ids) != 1 || srv.JobExtraData(ids[0])["api_key_svc_org"] != key {
		t.Fatalf("jobs %v; the key did not reach the job's extra_data: %v", ids, srv.JobExtraData(ids[0]))
	}
	if strings.Contains(out, key) {
		t.Fatalf("the key is in Terraform's output:\n%s", out)
	}
}
