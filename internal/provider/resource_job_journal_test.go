package provider

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/svc-org/terraform-provider-svc/internal/emulator"
	"github.com/svc-org/terraform-provider-svc/internal/s3gw"
)

// jobsJournalConfig is count identical svc_job (one workflow, no key: the case where only the
// journal can tell which job each instance is).
func jobsJournalConfig(srv *emulator.Server, count int) string {
	return providerConfig(srv, "") + fmt.Sprintf(`
resource "svc_job" "test" {
  count    = %d
  workflow = %s
}
`, count, samplerWorkflowHCL(20))
}

// withoutJournalEnv drops SVC_JOURNAL (which the tests set to "", off) from the CLI's
// environment, so that the provider plugin uses its default journal in the working directory.
func withoutJournalEnv(tf *terraformCLI) {
	var env []string
	for _, e := range tf.env {
		if !strings.HasPrefix(e, journalEnv+"=") {
			env = append(env, e)
		}
	}
	tf.env = env
}

// SIGKILL to Terraform's whole process group (Terraform and the provider plugin: the OOM killer,
// a runner reclaimed, a CI job's hard kill) at three moments of 10 identical svc_job: nothing
// reaches state from the creates under way, yet the next apply, reading the journal of
// submissions in its default place, creates no job twice, adopts every job created before the
// kill, and ends with all ten succeeded.
func TestCLI_sigkillMidApplyAdoptsTheJournaledJobs(t *testing.T) {
	skipUnlessAcc(t)
	t.Parallel()
	pluginDir := buildProvider(t)
	tests := []struct {
		name  string
		args  []string
		fault *emulator.Fault
		ready func(srv *emulator.Server, tf *terraformCLI) bool
	}{
		{
			// Submissions 4 to 6 are journaled and sent, but the server holds them before creating
			// anything: three keys without an id, resent by the next apply (201, created then).
			name:  "submissions on the wire",
			args:  []string{"-parallelism=6"},
			fault: &emulator.Fault{Op: emulator.OpSubmitJob, Nth: 4, Times: 3, Delay: time.Minute},
			ready: func(srv *emulator.Server, tf *terraformCLI) bool {
				return srv.JobCount() >= 3 && srv.Requests(emulator.OpSubmitJob) >= 6 &&
					journaledIDs(filepath.Join(tf.dir, ".terraform", "svc-journal")) >= 3
			},
		},
		{
			name: "every job submitted, answered and running",
			args: []string{"-parallelism=10"},
			ready: func(_ *emulator.Server, tf *terraformCLI) bool {
				return journaledIDs(filepath.Join(tf.dir, ".terraform", "svc-journal")) >= 10
			},
		},
		{
			name:  "some jobs finished and in state",
			args:  []string{"-parallelism=10"},
			ready: func(srv *emulator.Server, _ *terraformCLI) bool { return jobsSucceeded(srv) >= 5 },
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := newTestServer(t, emulator.Options{Workers: 4, StepDuration: 50 * time.Millisecond}) // a job runs 1 s
			if tt.fault != nil {
				srv.Inject(*tt.fault)
			}
			tf := newBinaryTerraform(t, pluginDir)
			withoutJournalEnv(tf)
			tf.writeConfig(jobsJournalConfig(srv, 10))
			args := append([]string{"apply", "-auto-approve", "-input=false", "-no-color"}, tt.args...)
			out, err := tf.signalGroupOnce(syscall.SIGKILL, func() bool { return tt.ready(srv, tf) }, args...)
			if err == nil {
				t.Fatalf("the apply ended well despite SIGKILL:\n%s", out)
			}
			before := srv.JobIDs()
			srv.ClearFaults()
			tf.setAsideTornState(t)

			out = tf.run("apply", "-auto-approve", "-input=false", "-no-color")
			if jobs := srv.JobCount(); jobs != 10 {
				t.Fatalf("%d jobs on the server after the second apply (%d before it); want 10, none run twice:\n%s", jobs, len(before), out)
			}
			ids := jobIDsInState(t, tf)
			assertEveryJobInState(t, srv.JobIDs(), ids)
			for _, r := range tf.stateResources() {
				if r.Values["status"] != "succeeded" || r.Values["outputs"] == nil {
					t.Errorf("%s is %v with outputs %v; want succeeded with its outputs", r.Address, r.Values["status"], r.Values["outputs"])
				}
			}
			t.Logf("%d jobs on the server at the kill, %d submissions since; the second apply created %d",
				len(before), srv.Requests(emulator.OpSubmitJob), 10-len(before))
		})
	}
}

// The service keeps no answer to replay and lists no jobs: a job created under a key whose answer
// the dead run never received cannot be named. Resending the key is refused
// (idempotency_key_reuse): the next apply reports it, naming the key, and never draws a new
// one, so nothing runs twice, on this apply or the one after.
func TestCLI_sigkillAfterLostAnswersRunsNothingTwice(t *testing.T) {
	skipUnlessAcc(t)
	t.Parallel()
	srv := newTestServer(t, emulator.Options{Workers: 4, StepDuration: 50 * time.Millisecond})
	// Submissions 4 to 6 create their jobs, and their answers are held back.
	srv.Inject(emulator.Fault{Op: emulator.OpSubmitJob, Nth: 4, Times: 3, AfterHandling: true, Delay: time.Minute})
	tf := newBinaryTerraform(t, buildProvider(t))
	withoutJournalEnv(tf)
	tf.writeConfig(jobsJournalConfig(srv, 10))
	args := []string{"apply", "-auto-approve", "-input=false", "-no-color", "-parallelism=6"}
	journal := filepath.Join(tf.dir, ".terraform", "svc-journal")
	ready := func() bool { return srv.JobCount() >= 6 && journaledIDs(journal) >= 3 }
	if out, err := tf.signalGroupOnce(syscall.SIGKILL, ready, args...); err == nil {
		t.Fatalf("the apply ended well despite SIGKILL:\n%s", out)
	}
	srv.ClearFaults()
	tf.setAsideTornState(t)
	// Terraform starts no new create after an error: three applies see every instance through.
	for range 3 {
		out, err := tf.try(args...)
		if err == nil || strings.Count(oneLine(out), "comes from the journal of submissions") != 3 {
			t.Fatalf("want three errors naming a journaled key (%v):\n%s", err, out)
		}
		if jobs := srv.JobCount(); jobs > 10 {
			t.Fatalf("%d jobs on the server; want 10 at most: nothing run twice", jobs)
		}
	}
	if jobs, ids := srv.JobCount(), jobIDsInState(t, tf); jobs != 10 || len(ids) != 7 {
		t.Fatalf("%d jobs on the server, %d in state; want 10 and 7: the three unnamed jobs not run again", jobs, len(ids))
	}
}

// setAsideTornState does what the provider's page tells a user to do when a kill caught
// Terraform writing its local state: Terraform's local backend rewrites terraform.tfstate in
// place, so a SIGKILL in the middle leaves it torn, and every command refuses it. Moved aside,
// with terraform.tfstate.backup (the state the killed apply started from) put back when there is
// one, the next apply starts from there and the journal gives back every job the killed apply
// created.
func (c *terraformCLI) setAsideTornState(t *testing.T) {
	t.Helper()
	path := filepath.Join(c.dir, "terraform.tfstate")
	b, err := os.ReadFile(path)
	if err != nil || json.Valid(b) {
		return
	}
	t.Logf("the kill tore terraform.tfstate (%d bytes); set aside as a user would", len(b))
	if err := os.Rename(path, path+".torn"); err != nil {
		t.Fatal(err)
	}
	if backup, err := os.ReadFile(path + ".backup"); err == nil {
		if err := os.WriteFile(path, backup, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// journaledIDs counts the ids recorded in the journal in dir.
func journaledIDs(dir string) int {
	b, err := os.ReadFile(filepath.Join(dir, "journal.jsonl"))
	if err != nil {
		return 0
	}
	return strings.Count(string(b), `"op":"id"`)
}

// jobsSucceeded counts the server's jobs that succeeded.
func jobsSucceeded(srv *emulator.Server) int {
	n := 0
	for _, id := range srv.JobIDs() {
		if st, _ := srv.JobStatus(id); st == "succeeded" {
			n++
		}
	}
	return n
}

// After an apply that ended well, every entry of the journal reached state: `terraform state rm`
// then apply runs a new job, as without a journal, and destroying the jobs empties the journal.
func TestCLI_stateRmAfterANormalApplyRunsANewJob(t *testing.T) {
	skipUnlessAcc(t)
	t.Parallel()
	srv := newTestServer(t, emulator.Options{})
	// The plugin runs as its own process, as Terraform runs it: when Terraform stops it after the
	// apply, the ids it returned are Terraform's.
	tf := newBinaryTerraform(t, buildProvider(t))
	dir := filepath.Join(tf.dir, "journal")
	tf.writeConfig(strings.Replace(jobsJournalConfig(srv, 2), "max_retries", fmt.Sprintf("journal = %q\n  max_retries", dir), 1))
	tf.run("apply", "-auto-approve", "-no-color")
	first := jobIDsInState(t, tf)
	tf.run("state", "rm", "svc_job.test[0]")
	tf.run("apply", "-auto-approve", "-no-color")
	second := jobIDsInState(t, tf)
	if jobs := srv.JobCount(); jobs != 3 || second["svc_job.test[0]"] == first["svc_job.test[0]"] {
		t.Fatalf("%d jobs; test[0] was %s and is %s: want a third, new job", jobs, first["svc_job.test[0]"], second["svc_job.test[0]"])
	}
	tf.run("destroy", "-auto-approve", "-no-color")
	b, err := os.ReadFile(filepath.Join(dir, "journal.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range second {
		if !strings.Contains(string(b), id) {
			t.Errorf("the journal never named job %s", id)
		}
	}
	if n := strings.Count(string(b), `"op":"remove"`); n != 2 {
		t.Errorf("the destroy removed %d entries; want 2:\n%s", n, b)
	}
}

// A journal the provider cannot use is an error at plan time naming it, never a silent run
// without one; journal = "" turns it off.
func TestAccProvider_journalSetting(t *testing.T) {
	t.Parallel()
	srv := newTestServer(t, emulator.Options{})
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	job := fmt.Sprintf(`
resource "svc_job" "test" {
  workflow = %s
}
`, imageWorkflowHCL(1))
	b := newTestBucket(t, "journals")
	down := s3gw.Start(t)
	down.CreateBucket("journals")
	down.Stop()
	refusing := s3gw.StartAs(t, "other-root-access", s3gw.SecretKey)
	refusing.CreateBucket("journals")
	tests := []struct {
		name    string
		setting string
		wantErr string // "" when the apply goes on
		check   resource.TestCheckFunc
	}{
		{name: "a path under a file", setting: filepath.Join(file, "journal"), wantErr: "journal " + filepath.Join(file, "journal")},
		{
			name: "an unreachable bucket", setting: down.URL("journals", "runs"),
			wantErr: "journal " + down.URL("journals", "runs") + `: bucket "journals" could not be reached`,
		},
		{name: "a bucket refusing the credentials", setting: refusing.URL("journals", "runs"), wantErr: `refused the credentials`},
		{name: "a bucket that is not there", setting: b.URL("nope", "runs"), wantErr: `bucket "nope" does not exist`},
		{name: "off", setting: ""},
		{name: "a directory", setting: filepath.Join(t.TempDir(), "a", "journal")},
		{name: "a bucket", setting: b.url("runs"), check: func(*terraform.State) error {
			for key := range b.objects() {
				if strings.HasPrefix(key, "runs/journal/seg/") {
					return nil
				}
			}
			return fmt.Errorf("no slot of the journal in the bucket: %v", b.objects())
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			step := resource.TestStep{Config: providerConfig(srv, fmt.Sprintf("journal = %q", tt.setting)) + job, Check: tt.check}
			if tt.wantErr != "" {
				// The rule: the error names the journal and the setting that named it, at plan time.
				step.ExpectError = regexpInOrder(tt.wantErr, "The provider's journal setting names it")
				step.PlanOnly = true
			}
			resource.Test(t, resource.TestCase{ProtoV6ProviderFactories: testAccProtoV6ProviderFactories, Steps: []resource.TestStep{step}})
		})
	}
}

// A journal named by SVC_JOURNAL that cannot be used is an error naming the variable.
func TestAccProvider_journalEnvironment(t *testing.T) {
	srv := newTestServer(t, emulator.Options{})
	down := s3gw.Start(t)
	down.CreateBucket("journals")
	down.Stop()
	t.Setenv(journalEnv, down.URL("journals", "runs"))
	resource.Test(t, resource.TestCase{ProtoV6ProviderFactories: testAccProtoV6ProviderFactories, Steps: []resource.TestStep{{
		Config: providerConfig(srv, "") + fmt.Sprintf(`
resource "svc_job" "test" {
  workflow = %s
}
`, imageWorkflowHCL(1)),
		PlanOnly: true,
		ExpectError: regexpInOrder("journal "+down.URL("journals", "runs")+`: bucket "journals" could not be reached`,
			"The environment variable SVC_JOURNAL names it"),
	}}})
	if n := srv.Requests(emulator.OpSubmitJob); n != 0 {
		t.Fatalf("%d submissions; want none before the journal can be used", n)
	}
}

// regexpInOrder matches each of parts literally (as regexpQuote), in order, across lines.
func regexpInOrder(parts ...string) *regexp.Regexp {
	quoted := make([]string, len(parts))
	for i, p := range parts {
		quoted[i] = regexpQuote(p).String()
	}
	return regexp.MustCompile("(?s)" + strings.Join(quoted, ".*"))
}

// regexpQuote matches s literally, each space any run of white space (Terraform wraps errors).
func regexpQuote(s string) *regexp.Regexp {
	return regexp.MustCompile(strings.ReplaceAll(regexp.QuoteMeta(s), " ", `\s+`))
}
