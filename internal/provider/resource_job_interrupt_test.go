package provider

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/svc-org/terraform-provider-svc/internal/emulator"
)

// Ctrl-C during an apply that waits for a job, then `terraform apply`: the job stays in state
// untainted with the status it had, the next plan says it still runs and plans an in-place
// wait, and the next apply waits for that same job (one submission, no cancel), fills its
// outputs, and only then creates the svc_output_file that uses them. Driven through the real
// CLI, since only it turns SIGINT into a stop.
func TestCLI_interruptedApplyResumesTheSameJob(t *testing.T) {
	skipUnlessAcc(t)
	t.Parallel()
	srv := newTestServer(t, emulator.Options{StepDuration: 50 * time.Millisecond})
	cli := newTerraformCLI(t, "")
	file := filepath.Join(cli.dir, "out.png")
	config := jobConfig(srv, slowWorkflowHCL, "") + fmt.Sprintf(`
resource "svc_output_file" "png" {
  asset_id = svc_job.test.outputs[0].id
  path     = %q
}
`, file)
	cli.writeConfig(config)

	cli.interruptApply(func() bool { return jobRunning(srv) })
	ids := srv.JobIDs()
	job := cli.stateResource("svc_job.test")
	if len(ids) != 1 || job == nil || job.Values["id"] != ids[0] || job.Tainted {
		t.Fatalf("state %+v; want the one job %v, not tainted", job, ids)
	}
	if cli.stateResource("svc_output_file.png") != nil {
		t.Fatal("the output file was created while the job still ran")
	}

	planOut := cli.run("plan", "-no-color")
	plan := oneLine(planOut)
	for _, want := range []string{"Job still running: this apply waits for it", ids[0], "1 to add, 1 to change, 0 to destroy"} {
		if !strings.Contains(plan, want) {
			t.Errorf("the plan does not say %q:\n%s", want, plan)
		}
	}

	// The next apply waits for the same job; let the job finish once the wait has begun.
	streams := srv.Requests(emulator.OpJobEvents)
	done := cli.start("apply", "-auto-approve", "-no-color")
	waitFor(t, func() bool { return srv.Requests(emulator.OpJobEvents) > streams }, "the apply never started waiting")
	srv.CompleteJobs()
	if res := <-done; res.err != nil {
		t.Fatalf("the resumed apply failed: %v\n%s", res.err, res.out)
	}
	if n, c := srv.Requests(emulator.OpSubmitJob), srv.Requests(emulator.OpCancelJob); n != 1 || c != 0 {
		t.Fatalf("%d submissions and %d cancels reached the server; want 1 and 0", n, c)
	}
	job = cli.stateResource("svc_job.test")
	outputs, _ := job.Values["outputs"].([]any)
	if job.Values["status"] != "succeeded" || len(outputs) != 1 || job.Tainted {
		t.Fatalf("job after the resumed apply: %+v", job.Values)
	}
	outFile := cli.stateResource("svc_output_file.png")
	if outFile == nil || outFile.Values["asset_id"] != outputs[0].(map[string]any)["id"] {
		t.Fatalf("output file %+v; want it made from the finished job's output", outFile)
	}
	if _, err := os.Stat(file); err != nil {
		t.Fatal(err)
	}
}

// A create timeout taints the job and says what comes next; after `terraform untaint` the
// next apply waits for the same job instead of submitting it again.
func TestCLI_untaintAfterTimeoutWaitsForTheSameJob(t *testing.T) {
	skipUnlessAcc(t)
	t.Parallel()
	srv := newTestServer(t, emulator.Options{StepDuration: 50 * time.Millisecond})
	cli := newTerraformCLI(t, "")
	write := func(timeout string) {
		config := jobConfig(srv, slowWorkflowHCL, fmt.Sprintf(`timeouts = { create = %q }`, timeout))
		cli.writeConfig(config)
	}
	write("1s")
	out, err := cli.try("apply", "-auto-approve", "-no-color")
	if err == nil {
		t.Fatalf("the apply did not time out:\n%s", out)
	}
	for _, want := range []string{"terraform untaint", "submits nothing", "cancels job"} {
		if !strings.Contains(oneLine(out), want) {
			t.Errorf("the timeout error does not say %q:\n%s", want, out)
		}
	}
	if job := cli.stateResource("svc_job.test"); job == nil || !job.Tainted {
		t.Fatalf("state %+v; want the job tainted", job)
	}
	cli.run("untaint", "svc_job.test")
	write("10m")
	streams := srv.Requests(emulator.OpJobEvents)
	done := cli.start("apply", "-auto-approve", "-no-color")
	waitFor(t, func() bool { return srv.Requests(emulator.OpJobEvents) > streams }, "the apply never started waiting")
	srv.CompleteJobs()
	if res := <-done; res.err != nil {
		t.Fatalf("the apply after untaint failed: %v\n%s", res.err, res.out)
	}
	if n, c := srv.Requests(emulator.OpSubmitJob), srv.Requests(emulator.OpCancelJob); n != 1 || c != 0 {
		t.Fatalf("%d submissions and %d cancels reached the server; want 1 and 0", n, c)
	}
	if job := cli.stateResource("svc_job.test"); job.Values["status"] != "succeeded" {
		t.Fatalf("job after the apply: %+v", job.Values)
	}
}

// The same for svc_prompt (followed by its id: v1 has no key) and a queued svc_router_request
// (followed by its request id): after a create timeout and `terraform untaint`, the next apply
// waits for the run the first one started, and nothing runs twice.
func TestCLI_untaintAfterTimeoutFollowsTheSameRun(t *testing.T) {
	skipUnlessAcc(t)
	t.Parallel()
	tests := []struct {
		name, address, wantStatus string
		server                    func(t *testing.T) *emulator.Server
		config                    func(srv *emulator.Server, timeout string) string
		ranOnce                   func(srv *emulator.Server) error
	}{
		{
			name: "svc_prompt", address: "svc_prompt.test", wantStatus: "success",
			server: func(t *testing.T) *emulator.Server {
				return newTestServer(t, emulator.Options{Token: v1AccKey, StepDuration: 100 * time.Millisecond})
			},
			config: func(srv *emulator.Server, timeout string) string {
				return promptConfig(srv, samplerWorkflowHCL(40), fmt.Sprintf(`timeouts = { create = %q }`, timeout)) // about 4 s
			},
			ranOnce: func(srv *emulator.Server) error { return submissions(srv, emulator.OpV1Prompt, 1)(nil) },
		},
		{
			name: "svc_router_request", address: routerRes, wantStatus: "COMPLETED",
			server: func(t *testing.T) *emulator.Server {
				return newTestServer(t, emulator.Options{Router: emulator.RouterOptions{SlowDuration: 4 * time.Second}})
			},
			config: func(srv *emulator.Server, timeout string) string {
				return routerRequestConfig(srv, 2, fmt.Sprintf(`
  model    = "demo/slow"
  input    = jsonencode({ prompt = "x" })
  timeouts = { create = %q }
`, timeout))
			},
			ranOnce: func(srv *emulator.Server) error { return checkRuns(srv, emulator.ModelSlow, 1)(nil) },
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := tt.server(t)
			cli := newTerraformCLI(t, "")
			cli.writeConfig(tt.config(srv, "1s"))
			out, err := cli.try("apply", "-auto-approve", "-no-color")
			if err == nil {
				t.Fatalf("the apply did not time out:\n%s", out)
			}
			if !strings.Contains(oneLine(out), "terraform untaint") {
				t.Errorf("the timeout error does not say how to keep the run:\n%s", out)
			}
			if res := cli.stateResource(tt.address); res == nil || !res.Tainted {
				t.Fatalf("state %+v; want %s tainted", res, tt.address)
			}
			cli.run("untaint", tt.address)
			cli.writeConfig(tt.config(srv, "10m"))
			cli.run("apply", "-auto-approve", "-no-color")
			if res := cli.stateResource(tt.address); res == nil || res.Values["status"] != tt.wantStatus {
				t.Fatalf("%s after the apply: %+v", tt.address, res)
			}
			if err := tt.ranOnce(srv); err != nil {
				t.Fatal(err)
			}
		})
	}
}

type stateResource struct {
	Address string         `json:"address"`
	Tainted bool           `json:"tainted"`
	Values  map[string]any `json:"values"`
}

// stateResource returns the resource at address from `terraform show -json`, or nil.
func (c *terraformCLI) stateResource(address string) *stateResource {
	c.t.Helper()
	for _, r := range c.stateResources() {
		if r.Address == address {
			return &r
		}
	}
	return nil
}

type cliResult struct {
	out string
	err error
}

// start runs terraform in the background; its result arrives on the channel.
func (c *terraformCLI) start(args ...string) <-chan cliResult {
	done := make(chan cliResult, 1)
	go func() {
		out, err := c.try(args...)
		done <- cliResult{out, err}
	}()
	return done
}

// interruptApply runs `terraform apply`, sends it one SIGINT once ready reports true, and fails
// the test unless the apply failed saying that the next apply waits for what it left running.
func (c *terraformCLI) interruptApply(ready func() bool) {
	c.t.Helper()
	out, err := c.interruptOnce(ready, "apply", "-auto-approve", "-no-color")
	if err == nil {
		c.t.Fatalf("the interrupted apply succeeded:\n%s", out)
	}
	if !strings.Contains(oneLine(out), "the next apply waits for it") {
		c.t.Errorf("the interrupted apply does not say the next apply waits:\n%s", out)
	}
}

// interruptOnce runs terraform and sends it one SIGINT (Ctrl-C) once ready reports true.
func (c *terraformCLI) interruptOnce(ready func() bool, args ...string) (string, error) {
	c.t.Helper()
	cmd, out := c.command(args...)
	if err := cmd.Start(); err != nil {
		c.t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for !ready() {
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			c.t.Fatalf("terraform %v: never ready to interrupt", args)
		}
		time.Sleep(20 * time.Millisecond) // polling a condition, not a fixed wait
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		c.t.Fatal(err)
	}
	err := cmd.Wait()
	return out.String(), err
}

// waitFor polls cond until it holds (up to 30 s).
func waitFor(t *testing.T, cond func() bool, failure string) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal(failure)
		}
	}
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func jobRunning(srv *emulator.Server) bool {
	for _, id := range srv.JobIDs() {
		if st, _ := srv.JobStatus(id); st == "running" {
			return true
		}
	}
	return false
}
