package provider

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/svc-org/terraform-provider-svc/internal/emulator"
)

// TestBenchJournalOverhead is what the journal of submissions costs a large batch: the apply of
// SVC_BENCH_JOURNAL_N rows (default 10,000) of 0.5 s jobs, with the journal off, in a local
// directory and (when SVC_BENCH_JOURNAL_BUCKET=1) in a bucket of the tests' S3 server, side by
// side, interleaved SVC_BENCH_JOURNAL_ROUNDS times (default 1), each on a server of its own.
// Run with SVC_BENCH=1; the table goes to the test log.
func TestBenchJournalOverhead(t *testing.T) {
	if os.Getenv("SVC_BENCH") == "" {
		t.Skip("set SVC_BENCH=1")
	}
	pluginDir := buildProvider(t)
	n := benchEnvInt("SVC_BENCH_JOURNAL_N", 10000)
	modes := []struct{ name, journal string }{{"journal off", ""}, {"journal in a local directory", "local"}}
	var b3 *testBucket
	if os.Getenv("SVC_BENCH_JOURNAL_BUCKET") == "1" {
		modes = append(modes, struct{ name, journal string }{"journal in a bucket", "bucket"})
		b3 = newTestBucket(t, "journal") // before the CLI: it sets the AWS SDK's environment
	}
	const workers = 32
	ideal := time.Duration(math.Ceil(float64(n)/workers)) * 500 * time.Millisecond
	var b strings.Builder
	fmt.Fprintf(&b, "Machine: %s, %s. Apply of %d rows of 0.5 s, server runs %d at once (`max_in_flight = %d`), ideal %.1f s; load average before: %s\n\n",
		cpuModel(), terraformVersion(), n, workers, benchBatchInFlight(workers), ideal.Seconds(), loadAverage())
	b.WriteString("| journal | wall time | ratio to off | requests | provider CPU | provider peak RSS |\n|---|---|---|---|---|---|\n")
	walls := map[string][]time.Duration{}
	for round := range benchEnvInt("SVC_BENCH_JOURNAL_ROUNDS", 1) {
		for _, m := range modes {
			srv := newTestServer(t, emulator.Options{Workers: workers, StepDuration: 50 * time.Millisecond, QueueLimit: 100000})
			tf := newBinaryTerraform(t, pluginDir)
			tf.env = append(tf.env, journalEnv+"="+benchJournalSetting(tf, b3, m.journal, round))
			writeBatchConfig(t, tf.dir, 10, benchBatchInFlight(workers))
			run := runMeasured(tf, srv, filepath.Join(pluginDir, "terraform-provider-svc"), []string{"apply", "-auto-approve", "-input=false", "-no-color",
				"-var", "endpoint=" + srv.URL(), "-var", "rows=" + strconv.Itoa(n)})
			if jobs := srv.JobCount(); jobs != n {
				t.Fatalf("%s: %d jobs on the server; want %d", m.name, jobs, n)
			}
			walls[m.name] = append(walls[m.name], run.wall)
			off := medianDuration(walls[modes[0].name])
			fmt.Fprintf(&b, "| %s | %.1f s | %.3f | %d | %.1f s | %.1f MiB |\n", m.name, run.wall.Seconds(),
				run.wall.Seconds()/off.Seconds(), run.requests, run.usage.cpu.Seconds(), float64(run.usage.peakRSS)/(1<<20))
		}
	}
	b.WriteString("\nMedians: ")
	for i, m := range modes {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s %.1f s", m.name, medianDuration(walls[m.name]).Seconds())
	}
	b.WriteString(".\n")
	t.Log("\n" + b.String())
}

// benchJournalSetting is SVC_JOURNAL for a journal mode: "" off, a directory in the working
// directory, or a prefix of its own (per round) in bucket.
func benchJournalSetting(tf *terraformCLI, bucket *testBucket, mode string, round int) string {
	switch mode {
	case "local":
		return filepath.Join(tf.dir, ".terraform", "svc-journal")
	case "bucket":
		return bucket.url(fmt.Sprintf("round-%d", round))
	}
	return ""
}

func medianDuration(ds []time.Duration) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}
