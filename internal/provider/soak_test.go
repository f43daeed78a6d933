package provider

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/svc-org/terraform-provider-svc/internal/emulator"
)

// TestSoak applies many svc_job resources in one terraform apply against a server that injects
// random faults at a fixed seed (429 queue_full on submit; 503s, dropped connections and HTML
// 502 pages on reads; event streams cut mid-way or refused), then applies again and destroys.
// Nothing may be lost or run twice, and one apply must be enough.
//
// make test runs a short version; make soak (SVC_SOAK=1) runs 200 jobs at -parallelism=20 on
// three seeds.
func TestSoak(t *testing.T) {
	skipUnlessAcc(t)
	jobs, parallelism, seeds := soakScale(40, 200)
	for _, seed := range seeds {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			srv := newTestServer(t, emulator.Options{Workers: 8, StepDuration: 5 * time.Millisecond})
			srv.SetChaos(&emulator.Chaos{Seed: seed, Rate: 0.2})
			tf := newTerraformCLI(t, "")
			writeJobsConfig(t, tf.dir, 10)
			vars := []string{"-var", "endpoint=" + srv.URL(), "-var", "jobs=" + strconv.Itoa(jobs)}
			tf.run("init", "-input=false", "-no-color")

			start := time.Now()
			applies := soakApply(t, tf, parallelism, vars)
			applyTime := time.Since(start)
			// The faults are for the apply under test. The second plan, apply and destroy check
			// that what it left converges; with faults still on, a read could exhaust its
			// bounded retries there, which is the retry policy working, not a lost job.
			faults := srv.ChaosSummary()
			srv.SetChaos(nil)

			inState := stateJobIDs(t, tf)
			lost := 0
			for _, id := range srv.JobIDs() {
				if !inState[id] {
					lost++
				}
			}
			duplicates := srv.JobCount() - jobs
			soakPlanEmpty(t, tf, vars)
			tf.run(append([]string{"apply", "-auto-approve", "-input=false", "-no-color"}, vars...)...)
			tf.run(append([]string{"destroy", "-auto-approve", "-input=false", "-no-color"}, vars...)...)

			t.Logf("soak seed=%d: jobs created %d/%d, duplicates %d, ids missing from state %d, applies needed %d, apply %.1fs; faults: %s",
				seed, srv.JobCount(), jobs, duplicates, lost, applies, applyTime.Seconds(), faults)
			if srv.JobCount() != jobs || duplicates != 0 || lost != 0 || len(inState) != jobs || applies != 1 {
				t.Fatalf("want %d jobs, none duplicated or lost, in one apply", jobs)
			}
			if faults == "" {
				t.Fatal("no fault was injected: the soak proved nothing")
			}
		})
	}
}

// soakScale is a soak's size: short for make test, full (at -parallelism=20, on three seeds)
// with SVC_SOAK set.
func soakScale(short, full int) (n, parallelism int, seeds []int64) {
	if os.Getenv("SVC_SOAK") != "" {
		return full, 20, []int64{1, 2, 3}
	}
	return short, 10, []int64{1}
}

// soakApply runs the apply under test at the given parallelism and returns how many applies it
// took: a failed first apply is reported and applied once more, so that what it left can still
// be checked.
func soakApply(t *testing.T, tf *terraformCLI, parallelism int, vars []string) (applies int) {
	t.Helper()
	out, err := tf.try(append([]string{"apply", "-auto-approve", "-input=false", "-no-color", "-parallelism=" + strconv.Itoa(parallelism)}, vars...)...)
	if err == nil {
		return 1
	}
	t.Errorf("the first apply failed:\n%s", tail(out, 40))
	tf.run(append([]string{"apply", "-auto-approve", "-input=false", "-no-color"}, vars...)...)
	return 2
}

// soakPlanEmpty reports an error unless a plan after the apply under test shows no change.
func soakPlanEmpty(t *testing.T, tf *terraformCLI, vars []string) {
	t.Helper()
	if plan, err := tf.try(append([]string{"plan", "-detailed-exitcode", "-input=false", "-no-color"}, vars...)...); err != nil {
		t.Errorf("the second plan is not empty (or failed):\n%s", tail(plan, 40))
	}
}

// stateJobIDs returns the ids of the svc_job resources in the working directory's state.
func stateJobIDs(t *testing.T, tf *terraformCLI) map[string]bool {
	t.Helper()
	var state struct {
		Values struct {
			RootModule struct {
				Resources []struct {
					Type   string         `json:"type"`
					Values map[string]any `json:"values"`
				} `json:"resources"`
			} `json:"root_module"`
		} `json:"values"`
	}
	if err := json.Unmarshal([]byte(tf.run("show", "-json")), &state); err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	for _, r := range state.Values.RootModule.Resources {
		if id, _ := r.Values["id"].(string); r.Type == "svc_job" && id != "" {
			ids[id] = true
		}
	}
	return ids
}

func tail(s string, lines int) string {
	all := strings.Split(s, "\n")
	return strings.Join(all[max(0, len(all)-lines):], "\n")
}

// TestSoakRouter is the soak for router requests, half queued and half synchronous: 429
// rate_limited and 503 before the call, answers lost after the run was accepted, and 503s,
// drops and HTML 502 pages on status and collect. The replaying key must turn every fault into
// exactly one run.
func TestSoakRouter(t *testing.T) {
	skipUnlessAcc(t)
	requests, parallelism, seeds := soakScale(20, 100)
	for _, seed := range seeds {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			srv := newTestServer(t, emulator.Options{})
			srv.SetChaos(&emulator.Chaos{Seed: seed, Rate: 0.2})
			tf := newTerraformCLI(t, "")
			cfg := countedConfigHeader("requests") + `
resource "svc_router_request" "soak" {
  count = var.requests
  model = "demo/echo"
  mode  = count.index % 2 == 0 ? "queued" : "sync"
  input = jsonencode({ prompt = "request ${count.index}" })
}
`
			tf.writeConfig(cfg)
			vars := []string{"-var", "endpoint=" + srv.URL(), "-var", "requests=" + strconv.Itoa(requests)}
			tf.run("init", "-input=false", "-no-color")
			applies := soakApply(t, tf, parallelism, vars)
			runs := srv.RouterRuns(emulator.ModelEcho)
			faults := srv.ChaosSummary()
			srv.SetChaos(nil) // as for jobs: the faults are for the apply under test
			soakPlanEmpty(t, tf, vars)
			tf.run(append([]string{"destroy", "-auto-approve", "-input=false", "-no-color"}, vars...)...)
			t.Logf("router soak seed=%d: runs %d/%d, duplicates %d, applies needed %d; faults: %s",
				seed, runs, requests, runs-requests, applies, faults)
			if runs != requests || applies != 1 {
				t.Fatalf("want %d runs in one apply", requests)
			}
			if faults == "" {
				t.Fatal("no fault was injected: the soak proved nothing")
			}
		})
	}
}
