package provider

// A job record's outputs are bounded before they reach state: each asset once, at most
// maxOutputsInState, the count of the rest in the warning creating the job gives.

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/svc-org/terraform-provider-svc/internal/emulator"
)

// A record that lists each output three times (same asset id) yields each output once.
func TestAccJob_repeatedOutputsKeptOnce(t *testing.T) {
	t.Parallel()
	srv := newTestServer(t, emulator.Options{})
	srv.Inject(emulator.Fault{Op: emulator.OpGetJob, RepeatOutputs: 3})
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: jobConfig(srv, imageWorkflowHCL(2), ""),
			Check: resource.ComposeAggregateTestCheckFunc(
				resource.TestCheckResourceAttr("svc_job.test", "outputs.#", "2"),
			),
		}},
	})
}

// A record with 20,000 outputs: the apply finishes well within its 30 s create timeout, state
// keeps 1,000 of them and the apply's warning counts the rest, the next plan is quick and shows no change, and the
// provider (a plugin process of its own) stays under 256 MiB.
func TestAccJob_twentyThousandOutputsBounded(t *testing.T) {
	skipUnlessAcc(t)
	const listed = 20000
	srv := newTestServer(t, emulator.Options{})
	srv.Inject(emulator.Fault{Op: emulator.OpGetJob, Outputs: listed})
	pluginDir := buildProvider(t)
	bin := filepath.Join(pluginDir, "terraform-provider-svc")
	tf := newBinaryTerraform(t, pluginDir)
	config := jobConfig(srv, imageWorkflowHCL(1), `timeouts = { create = "30s" }`) + `
output "kept" { value = length(svc_job.test.outputs) }
`
	tf.writeConfig(config)

	peak := watchPeakRSSOf(bin)
	start := time.Now()
	out, err := tf.try("apply", "-auto-approve", "-input=false", "-no-color")
	applyTime, applyRSS := time.Since(start), peak()
	t.Logf("%d outputs: apply %.1f s, provider peak RSS %.1f MiB", listed, applyTime.Seconds(), float64(applyRSS)/(1<<20))
	if err != nil {
		t.Fatalf("apply: %v\n%s", err, out)
	}
	if !strings.Contains(out, "Not every output is in state") || !strings.Contains(out, fmt.Sprintf("listed %d more", listed-maxOutputsInState)) {
		t.Errorf("apply did not warn that outputs were left out:\n%s", out)
	}

	peak = watchPeakRSSOf(bin)
	start = time.Now()
	out, err = tf.try("plan", "-input=false", "-no-color", "-detailed-exitcode")
	planTime, planRSS := time.Since(start), peak()
	t.Logf("%d outputs: no-change plan %.1f s, provider peak RSS %.1f MiB", listed, planTime.Seconds(), float64(planRSS)/(1<<20))
	if err != nil {
		t.Fatalf("plan shows a change or failed (%v):\n%s", err, out)
	}

	var outputs map[string]struct{ Value int }
	if err := json.Unmarshal([]byte(tf.run("output", "-json")), &outputs); err != nil {
		t.Fatal(err)
	}
	if outputs["kept"].Value != maxOutputsInState {
		t.Fatalf("state keeps %d outputs; want %d", outputs["kept"].Value, maxOutputsInState)
	}
	if applyTime > 30*time.Second || planTime > 30*time.Second {
		t.Fatalf("apply %s, plan %s: want each well under the 30 s create timeout", applyTime, planTime)
	}
	for _, rss := range []uint64{applyRSS, planRSS} {
		if rss == 0 || rss > 256<<20 {
			t.Fatalf("provider peak RSS %.1f MiB, want above 0 and under 256 MiB", float64(rss)/(1<<20))
		}
	}
}
