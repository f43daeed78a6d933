package provider

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/svc-org/terraform-provider-svc/internal/emulator"
)

// batchSamplerTemplate is a template whose jobs run steps sampler steps; rows set the seed.
func batchSamplerTemplate(steps int) string {
	return fmt.Sprintf(`jsonencode({
    "1" = { class_type = "EmptyImage", inputs = { width = 8, height = 8, batch_size = 1, color = 0 } }
    "2" = { class_type = "ImageNoiseSampler", inputs = { image = ["1", 0], seed = 1, steps = %d, denoise = 1.0 } }
    "3" = { class_type = "SaveImage", inputs = { images = ["2", 0], filename_prefix = "row" } }
  })`, steps)
}

// batchRowIDs reads each row's job id and status from the batch in state.
func batchRowIDs(t *testing.T, cli *terraformCLI) (ids map[string]string, statuses map[string]int) {
	t.Helper()
	res := cli.stateResource(batchRes)
	if res == nil || res.Tainted {
		t.Fatalf("batch in state: %+v; want it there, not tainted", res)
	}
	ids, statuses = map[string]string{}, map[string]int{}
	results, _ := res.Values["results"].(map[string]any)
	for key, v := range results {
		row, _ := v.(map[string]any)
		if id, _ := row["id"].(string); id != "" {
			ids[key] = id
		}
		status, _ := row["status"].(string)
		statuses[status]++
	}
	return ids, statuses
}

// Ctrl-C in the middle of a 500-row apply, then apply again: every job the service created is
// in state after the interrupt (none lost, nothing tainted), and the next apply waits for the
// running rows and submits the rest, so every row runs exactly once.
func TestCLI_batchInterruptedApplyRunsEveryRowOnce(t *testing.T) {
	skipUnlessAcc(t)
	t.Parallel()
	const rows = 500
	srv := newTestServer(t, emulator.Options{Workers: 16, StepDuration: 5 * time.Millisecond})
	cli := newTerraformCLI(t, "")
	cli.writeConfig(batchConfig(srv, batchSamplerTemplate(10),
		fmt.Sprintf(`{ for i in range(%d) : "r${i}" => { "2" = { seed = i } } }`, rows), "max_in_flight = 32"))

	start := time.Now()
	out, _ := cli.interruptOnce(func() bool { return srv.JobCount() >= rows/4 }, "apply", "-auto-approve", "-no-color")
	if !strings.Contains(oneLine(out), "Batch not finished") {
		t.Errorf("the interrupted apply does not say the batch is not finished:\n%s", out)
	}
	t.Logf("interrupted apply: %s", time.Since(start))
	ids, statuses := batchRowIDs(t, cli)
	created := srv.JobIDs()
	if len(ids) != len(created) || len(created) >= rows {
		t.Fatalf("after the interrupt, %d ids in state, %d jobs on the server (of %d rows): %v", len(ids), len(created), rows, statuses)
	}
	inState := map[string]bool{}
	for _, id := range ids {
		inState[id] = true
	}
	for _, id := range created {
		if !inState[id] {
			t.Fatalf("job %s was created but is not in state", id)
		}
	}

	start = time.Now()
	cli.run("apply", "-auto-approve", "-no-color")
	t.Logf("second apply: %s", time.Since(start))
	ids, statuses = batchRowIDs(t, cli)
	if n, jobs := srv.Requests(emulator.OpSubmitJob), srv.JobCount(); n != rows || jobs != rows || len(ids) != rows || statuses["succeeded"] != rows {
		t.Fatalf("%d submissions, %d jobs on the server, %d ids in state, statuses %v; want %d of each, all succeeded", n, jobs, len(ids), statuses, rows)
	}
	seen := map[string]bool{}
	for _, id := range ids {
		if seen[id] {
			t.Fatalf("job %s is in state for two rows", id)
		}
		seen[id] = true
	}
	if c := srv.Requests(emulator.OpCancelJob); c != 0 {
		t.Fatalf("%d cancels; want none", c)
	}
}
