package provider

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/svc-org/terraform-provider-svc/internal/emulator"
)

// A batch whose first output download is cut short as the service goes away for 20 s (503 with
// Retry-After) rides it out inside the create timeout: every row succeeded and has its file in
// output_dir, the apply exits 0 with no warning, the next plan is empty. The times are real:
// the test is mostly idle.
func TestAccJobBatch_outputDirRidesOutAnOutage(t *testing.T) {
	skipUnlessAcc(t)
	t.Parallel()
	const rows = 6
	const outage = 20 * time.Second
	srv := newTestServer(t, emulator.Options{Workers: rows})
	srv.Inject(emulator.Fault{Op: emulator.OpAssetContent, Nth: 1, Cut: true, CutAfter: 2})
	srv.OutageAfterRequest(emulator.OpAssetContent, 1, outage, 2)
	cli := newTerraformCLI(t, "")
	dir := filepath.Join(cli.dir, "out")
	cli.writeConfig(batchConfig(srv, batchTextTemplate, batchRowsHCL(rows, ""), fmt.Sprintf("output_dir = %q", dir)))

	start := time.Now()
	out := cli.run("apply", "-auto-approve", "-no-color")
	t.Logf("apply: %.1f s", time.Since(start).Seconds())
	outages := srv.Outages()
	if len(outages) != 1 || sum(outages[0].PerSecond) == 0 || time.Now().Before(outages[0].To) {
		t.Fatalf("outages %+v; want one that answered requests, before the apply ended", outages)
	}
	t.Logf("the outage answered %d requests in %s, per second: %v", sum(outages[0].PerSecond), outage, outages[0].PerSecond)
	if strings.Contains(out, "Warning") {
		t.Errorf("the apply warned:\n%s", out)
	}
	ids, statuses := batchRowIDs(t, cli)
	if len(ids) != rows || statuses["succeeded"] != rows || srv.JobCount() != rows {
		t.Fatalf("%d ids in state, rows %v, %d jobs; want %d, every row succeeded", len(ids), statuses, srv.JobCount(), rows)
	}
	for i := range rows {
		files, _ := filepath.Glob(filepath.Join(dir, fmt.Sprint("r", i), "*"))
		if len(files) != 1 {
			t.Fatalf("row r%d: files %v; want one", i, files)
		}
		if b, err := os.ReadFile(files[0]); err != nil || string(b) != fmt.Sprint("row ", i) {
			t.Fatalf("row r%d's file holds %q (%v); want %q", i, b, err, fmt.Sprint("row ", i))
		}
	}
	if out, err := cli.try("plan", "-no-color", "-detailed-exitcode"); err != nil {
		t.Fatalf("the next plan is not empty (%v):\n%s", err, out)
	}
}
