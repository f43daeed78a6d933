package provider

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/svc-org/terraform-provider-svc/internal/emulator"
)

// TestBenchBatchToBucket applies SVC_BENCH_BUCKET_N rows (default 1,000) of jobs that finish at
// once as one svc_job_batch into a local directory and into a bucket of versitygw, side by side
// (local then bucket, SVC_BENCH_BUCKET_ROUNDS times, default 2), with the provider built as a
// real plugin, and tabulates each apply, the plan of the finished batch and its destroy. Run
// with SVC_BENCH=1; the table goes to the test log.
func TestBenchBatchToBucket(t *testing.T) {
	if os.Getenv("SVC_BENCH") == "" {
		t.Skip("set SVC_BENCH=1")
	}
	n := benchEnvInt("SVC_BENCH_BUCKET_N", 1000)
	pluginDir := buildProvider(t)
	exe := filepath.Join(pluginDir, "terraform-provider-svc")
	b := newTestBucket(t, "bench")
	var out strings.Builder
	fmt.Fprintf(&out, "Machine: %s, %s.\n\n", cpuModel(), terraformVersion())
	out.WriteString("| round | destination | apply | plan of the finished batch | destroy | provider CPU (apply) | provider peak RSS (apply) |\n|---|---|---|---|---|---|---|\n")
	var sums [2]float64
	for round := range benchEnvInt("SVC_BENCH_BUCKET_ROUNDS", 2) {
		for i, dest := range []string{"local directory", "bucket"} {
			srv := newTestServer(t, emulator.Options{Workers: 32, QueueLimit: 100000})
			tf := newBinaryTerraform(t, pluginDir)
			outputDir := filepath.Join(tf.dir, "out")
			if i == 1 {
				outputDir = b.url(fmt.Sprintf("round-%d", round))
			}
			writeBatchConfigInto(t, tf.dir, outputDir)
			vars := []string{"-input=false", "-no-color", "-var", "endpoint=" + srv.URL(), "-var", "rows=" + strconv.Itoa(n)}
			apply := runMeasured(tf, srv, exe, append([]string{"apply", "-auto-approve"}, vars...))
			plan := runMeasured(tf, srv, exe, append([]string{"plan", "-detailed-exitcode"}, vars...))
			destroy := runMeasured(tf, srv, exe, append([]string{"destroy", "-auto-approve"}, vars...))
			sums[i] += apply.wall.Seconds()
			fmt.Fprintf(&out, "| %d | %s | %.1f s | %.1f s | %.1f s | %.1f s | %.1f MiB |\n", round+1, dest, apply.wall.Seconds(), plan.wall.Seconds(),
				destroy.wall.Seconds(), apply.usage.cpu.Seconds(), float64(apply.usage.peakRSS)/(1<<20))
		}
	}
	fmt.Fprintf(&out, "\nApply into the bucket / into the local directory, summed over the rounds: %.2f×.\n", sums[1]/sums[0])
	t.Log("\n" + out.String())
	if left := b.objects(); len(left) != 0 {
		t.Fatalf("the destroys left %d objects", len(left))
	}
}

// writeBatchConfigInto writes writeBatchConfig's batch of one-step jobs (max_in_flight 64) with
// its outputs downloaded to outputDir.
func writeBatchConfigInto(t *testing.T, dir, outputDir string) {
	t.Helper()
	writeBatchConfig(t, dir, 1, 64)
	p := filepath.Join(dir, "main.tf")
	cfg, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	withDir := strings.Replace(string(cfg), "  max_in_flight = 64\n", fmt.Sprintf("  max_in_flight = 64\n  output_dir    = %q\n", outputDir), 1)
	if withDir == string(cfg) {
		t.Fatal("writeBatchConfig's configuration has no max_in_flight line to put output_dir after")
	}
	if err := os.WriteFile(p, []byte(withDir), 0o600); err != nil {
		t.Fatal(err)
	}
}
