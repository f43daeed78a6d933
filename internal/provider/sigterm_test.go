package provider

import (
	"encoding/json"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/svc-org/terraform-provider-svc/internal/emulator"
)

// SIGTERM to Terraform's whole process group, as a container runtime, a CI runner's cancel
// button or systemd sends it, in the middle of an apply: the provider plugin (its own process,
// built and run through dev_overrides, so that the signal reaches it) does not die of it.
// Terraform treats the signal as an interrupt and stops the provider, which then behaves as
// after Ctrl-C: every job the service created is in state under its row or resource,
// untainted, and the next apply waits for those and submits only the rest, so nothing runs
// twice.
func TestCLI_sigtermToTheProcessGroupIsAnInterrupt(t *testing.T) {
	skipUnlessAcc(t)
	t.Parallel()
	pluginDir := buildProvider(t)
	tests := []struct {
		name   string
		total  int // jobs the configuration asks for
		config func(srv *emulator.Server) string
		args   []string
		// firstWave is how many jobs the server holds when the signal goes.
		firstWave int
		// inState reads, from state, the job id of every row or resource that has one.
		inState func(t *testing.T, tf *terraformCLI) map[string]string
	}{
		{
			name:  "a 60-row svc_job_batch",
			total: 60,
			config: func(srv *emulator.Server) string {
				return batchConfig(srv, batchSamplerTemplate(20),
					`{ for i in range(60) : "r${i}" => { "2" = { seed = i } } }`, "max_in_flight = 8")
			},
			firstWave: 16,
			inState: func(t *testing.T, tf *terraformCLI) map[string]string {
				ids, _ := batchRowIDs(t, tf)
				return ids
			},
		},
		{
			name:  "10 svc_job",
			total: 10,
			config: func(srv *emulator.Server) string {
				return providerConfig(srv, "") + fmt.Sprintf(`
resource "svc_job" "test" {
  count    = 10
  workflow = %s
}
`, samplerWorkflowHCL(20))
			},
			args:      []string{"-parallelism=5"},
			firstWave: 5,
			inState:   jobIDsInState,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := newTestServer(t, emulator.Options{Workers: 4, StepDuration: 50 * time.Millisecond}) // a job runs 1 s
			tf := newBinaryTerraform(t, pluginDir)
			tf.writeConfig(tt.config(srv))
			args := append([]string{"apply", "-auto-approve", "-input=false", "-no-color"}, tt.args...)

			out, err := tf.terminateGroupOnce(func() bool { return srv.JobCount() >= tt.firstWave }, args...)
			if err == nil {
				t.Fatalf("the apply ended well despite SIGTERM:\n%s", out)
			}
			for _, crash := range []string{"Plugin did not respond", "plugin exited", "unexpected EOF"} {
				if strings.Contains(out, crash) {
					t.Fatalf("the provider died of SIGTERM (%q):\n%s", crash, out)
				}
			}
			created := srv.JobIDs()
			ids := tt.inState(t, tf)
			if len(created) >= tt.total || len(ids) != len(created) {
				t.Fatalf("after SIGTERM: %d jobs on the server, %d ids in state (of %d); want every created job in state, some left to submit:\n%s",
					len(created), len(ids), tt.total, out)
			}
			assertEveryJobInState(t, created, ids)

			tf.run(append([]string{"apply", "-auto-approve", "-input=false", "-no-color"}, tt.args...)...)
			ids = tt.inState(t, tf)
			if n, jobs, cancels := srv.Requests(emulator.OpSubmitJob), srv.JobCount(), srv.Requests(emulator.OpCancelJob); n != tt.total || jobs != tt.total || cancels != 0 {
				t.Fatalf("%d submissions, %d jobs, %d cancels; want %d, %d and none: every job ran once", n, jobs, cancels, tt.total, tt.total)
			}
			if len(ids) != tt.total {
				t.Fatalf("%d ids in state after the second apply; want %d", len(ids), tt.total)
			}
			assertEveryJobInState(t, srv.JobIDs(), ids)
			for _, id := range created {
				if st, _ := srv.JobStatus(id); st != "succeeded" {
					t.Errorf("job %s, created before SIGTERM, is %s; want succeeded", id, st)
				}
			}
		})
	}
}

// terminateGroupOnce runs terraform in a process group of its own and, once ready reports
// true, sends SIGTERM to the whole group (Terraform and the provider plugins it started).
func (c *terraformCLI) terminateGroupOnce(ready func() bool, args ...string) (string, error) {
	c.t.Helper()
	return c.signalGroupOnce(syscall.SIGTERM, ready, args...)
}

// signalGroupOnce is terminateGroupOnce with the signal sig.
func (c *terraformCLI) signalGroupOnce(sig syscall.Signal, ready func() bool, args ...string) (string, error) {
	c.t.Helper()
	out, _, err := c.stopLikeRunner(runnerStop{sig.String(), []timedSignal{{0, sig}}}, ready, args...)
	return out, err
}

// jobIDsInState reads the id of every svc_job in state, by address; a tainted one fails the test.
func jobIDsInState(t *testing.T, c *terraformCLI) map[string]string {
	t.Helper()
	ids := map[string]string{}
	for _, r := range c.stateResources() {
		if !strings.HasPrefix(r.Address, "svc_job.") {
			continue
		}
		if r.Tainted {
			t.Fatalf("%s is tainted", r.Address)
		}
		if id, _ := r.Values["id"].(string); id != "" {
			ids[r.Address] = id
		}
	}
	return ids
}

// stateResources returns every resource of the root module from `terraform show -json`.
func (c *terraformCLI) stateResources() []stateResource {
	c.t.Helper()
	var state struct {
		Values struct {
			RootModule struct {
				Resources []stateResource `json:"resources"`
			} `json:"root_module"`
		} `json:"values"`
	}
	if err := json.Unmarshal([]byte(c.run("show", "-json")), &state); err != nil {
		c.t.Fatal(err)
	}
	return state.Values.RootModule.Resources
}

// assertEveryJobInState fails unless every job the server created is in state once, and state
// names no other job.
func assertEveryJobInState(t *testing.T, created []string, ids map[string]string) {
	t.Helper()
	owner := map[string]string{}
	for where, id := range ids {
		if other, dup := owner[id]; dup {
			t.Fatalf("job %s is in state under %s and %s", id, other, where)
		}
		owner[id] = where
	}
	for _, id := range created {
		if owner[id] == "" {
			t.Fatalf("job %s was created but is not in state", id)
		}
	}
	if len(owner) != len(created) {
		t.Fatalf("state names %d jobs; the server created %d", len(owner), len(created))
	}
}
