package provider

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
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
	jobs, parallelism, seeds := 40, 10, []int64{1}
	if os.Getenv("SVC_SOAK") != "" {
		jobs, parallelism, seeds = 200, 20, []int64{1, 2, 3}
	}
	for _, seed := range seeds {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			srv := newTestServer(t, emulator.Options{Workers: 8, StepDuration: 5 * time.Millisecond})
			srv.SetChaos(&emulator.Chaos{Seed: seed, Rate: 0.2})
			tf := newTerraformCLI(t, "")
			writeSoakConfig(t, tf.dir)
			vars := []string{"-var", "endpoint=" + srv.URL(), "-var", "jobs=" + strconv.Itoa(jobs)}
			tf.run("init", "-input=false", "-no-color")

			start := time.Now()
			applies := 1
			if out, err := tf.try(append([]string{"apply", "-auto-approve", "-input=false", "-no-color", "-parallelism=" + strconv.Itoa(parallelism)}, vars...)...); err != nil {
				t.Errorf("the first apply failed:\n%s", tail(out, 40))
				applies++
				tf.run(append([]string{"apply", "-auto-approve", "-input=false", "-no-color"}, vars...)...)
			}
			applyTime := time.Since(start)

			inState := stateJobIDs(t, tf)
			lost := 0
			for _, id := range srv.JobIDs() {
				if !inState[id] {
					lost++
				}
			}
			duplicates := srv.JobCount() - jobs
			if plan, err := tf.try(append([]string{"plan", "-detailed-exitcode", "-input=false", "-no-color"}, vars...)...); err != nil {
				t.Errorf("the second plan is not empty (or failed):\n%s", tail(plan, 40))
			}
			tf.run(append([]string{"apply", "-auto-approve", "-input=false", "-no-color"}, vars...)...)
			tf.run(append([]string{"destroy", "-auto-approve", "-input=false", "-no-color"}, vars...)...)

			t.Logf("soak seed=%d: jobs created %d/%d, duplicates %d, ids missing from state %d, applies needed %d, apply %.1fs; faults: %s",
				seed, srv.JobCount(), jobs, duplicates, lost, applies, applyTime.Seconds(), srv.ChaosSummary())
			if srv.JobCount() != jobs || duplicates != 0 || lost != 0 || len(inState) != jobs || applies != 1 {
				t.Fatalf("want %d jobs, none duplicated or lost, in one apply", jobs)
			}
			if len(srv.ChaosCounts()) == 0 {
				t.Fatal("no fault was injected: the soak proved nothing")
			}
		})
	}
}

func writeSoakConfig(t *testing.T, dir string) {
	t.Helper()
	const cfg = `
terraform {
  required_providers {
    svc = { source = "svc-org/svc" }
  }
}

variable "endpoint" { type = string }
variable "jobs" { type = number }

provider "svc" {
  endpoint = var.endpoint
}

resource "svc_job" "soak" {
  count = var.jobs
  workflow = jsonencode({
    "1" = { class_type = "EmptyImage", inputs = { width = 16, height = 16, batch_size = 1, color = count.index } }
    "2" = { class_type = "ImageNoiseSampler", inputs = { image = ["1", 0], seed = count.index, steps = 10, denoise = 0.5 } }
    "3" = { class_type = "SaveImage", inputs = { images = ["2", 0], filename_prefix = "soak" } }
  })
}
`
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
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
	var idx []int
	for i := range s {
		if s[i] == '\n' {
			idx = append(idx, i)
		}
	}
	if len(idx) <= lines {
		return s
	}
	sort.Ints(idx)
	return s[idx[len(idx)-lines-1]+1:]
}
