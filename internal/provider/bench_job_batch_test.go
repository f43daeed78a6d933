package provider

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/svc-org/terraform-provider-svc/internal/emulator"
)

// TestBenchJobBatch measures svc_job_batch with the provider built as a real plugin: an apply of
// SVC_BENCH_BATCH_N rows (default 10,000) of 0.5 s jobs on a server running 32 at once, against
// the ideal (the server busy all along); the plan and the destroy of the finished batch (time and
// requests); the provider's CPU and peak RSS; the state file per row. Then
// SVC_BENCH_BATCH_COMPARE_N rows (default 3,000) of jobs that finish at once, applied and
// destroyed as one svc_job_batch and as as many svc_job. Run with SVC_BENCH=1; the table goes to
// the test log (and SVC_BENCH_BATCH_OUT, when set). SVC_BENCH_BATCH_LARGE=0 or
// SVC_BENCH_BATCH_COMPARE=0 skips a part. SVC_BENCH_BATCH_INSTANT=1 adds an apply, a plan and a
// destroy of SVC_BENCH_BATCH_N rows of jobs that finish at once on the CLI the tests run
// (TF_ACC_TERRAFORM_PATH): a batch that size passes each CLI's plugin protocol limits.
// SVC_BENCH_BATCH_BASELINE=<git ref> (main, say) replaces the first part by the apply alone, of
// the ref's build and of this tree's, interleaved SVC_BENCH_BATCH_ROUNDS times (default 1), each
// on a server of its own, with the apply's timeline as the server saw it.
// SVC_BENCH_BATCH_SETTLED_BASELINE=<git ref> adds the plan and the destroy of one finished batch
// of SVC_BENCH_BATCH_N rows by the ref's build and this tree's, in turn on the same state.
// SVC_BENCH_BATCH_ADDED_BASELINE=<git ref> adds the plan and the apply of SVC_BENCH_BATCH_ADDED
// rows (default 10) added to that finished batch, by the ref's build and this tree's, in turn; a
// directory that holds a terraform-provider-svc is taken for the ref's build as it is (a plugin
// built for the comparison).
func TestBenchJobBatch(t *testing.T) {
	if os.Getenv("SVC_BENCH") == "" {
		t.Skip("set SVC_BENCH=1")
	}
	pluginDir := buildProvider(t)
	var b strings.Builder
	fmt.Fprintf(&b, "Machine: %s, %s.\n\n", cpuModel(), terraformVersion())
	if ref := os.Getenv("SVC_BENCH_BATCH_BASELINE"); ref != "" {
		b.WriteString(benchBatchApplyVersus(t, ref, pluginDir, benchEnvInt("SVC_BENCH_BATCH_N", 10000), benchEnvInt("SVC_BENCH_BATCH_ROUNDS", 1)))
	} else if os.Getenv("SVC_BENCH_BATCH_LARGE") != "0" {
		b.WriteString(benchBatchLarge(t, pluginDir, benchEnvInt("SVC_BENCH_BATCH_N", 10000)))
	}
	if n := benchEnvInt("SVC_BENCH_BATCH_COMPARE_N", 3000); os.Getenv("SVC_BENCH_BATCH_COMPARE") != "0" {
		b.WriteString(benchBatchVersusJobs(t, pluginDir, n))
	}
	if ref := os.Getenv("SVC_BENCH_BATCH_SETTLED_BASELINE"); ref != "" {
		b.WriteString(benchBatchSettledVersus(t, ref, pluginDir, benchEnvInt("SVC_BENCH_BATCH_N", 10000)))
	}
	if ref := os.Getenv("SVC_BENCH_BATCH_ADDED_BASELINE"); ref != "" {
		b.WriteString(benchBatchAddedVersus(t, ref, pluginDir, benchEnvInt("SVC_BENCH_BATCH_N", 10000), benchEnvInt("SVC_BENCH_BATCH_ADDED", 10)))
	}
	if os.Getenv("SVC_BENCH_BATCH_JOURNAL") == "1" {
		b.WriteString(benchBatchJournal(t, pluginDir, benchEnvInt("SVC_BENCH_BATCH_N", 10000)))
	}
	if os.Getenv("SVC_BENCH_BATCH_INSTANT") == "1" {
		b.WriteString(benchBatchInstant(t, pluginDir, benchEnvInt("SVC_BENCH_BATCH_N", 10000)))
	}
	t.Log("\n" + b.String())
	if p := os.Getenv("SVC_BENCH_BATCH_OUT"); p != "" {
		if err := os.WriteFile(p, []byte(b.String()), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// writeBatchConfig writes a configuration of one svc_job_batch of var.rows rows of a small
// image job whose sampler runs the given steps.
func writeBatchConfig(t *testing.T, dir string, steps, maxInFlight int) {
	t.Helper()
	// range() makes at most 1,024 values: the row numbers come from a product of two ranges.
	cfg := countedConfigHeader("rows") + fmt.Sprintf(`
locals {
  ids = [for p in setproduct(range(ceil(var.rows / 100)), range(100)) : p[0] * 100 + p[1] if p[0] * 100 + p[1] < var.rows]
}

resource "svc_job_batch" "many" {
  workflow = jsonencode({
    "1" = { class_type = "EmptyImage", inputs = { width = 8, height = 8, batch_size = 1, color = 0 } }
    "2" = { class_type = "ImageNoiseSampler", inputs = { image = ["1", 0], seed = 0, steps = %d, denoise = 0.5 } }
    "3" = { class_type = "SaveImage", inputs = { images = ["2", 0], filename_prefix = "job" } }
  })
  rows          = { for i in local.ids : "row-${i}" => { "2" = { seed = i } } }
  max_in_flight = %d
}
`, steps, maxInFlight)
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
}

// benchBatchInFlight is the max_in_flight of the 0.5 s jobs' batch on a server running workers
// at once: SVC_BENCH_BATCH_IN_FLIGHT, by default four times workers, so that the server's queue
// holds the jobs it starts while the ends of those it ran are noticed (on a server without an
// event stream, a read apart: a second on the strict server, which asks for one).
func benchBatchInFlight(workers int) int {
	return benchEnvInt("SVC_BENCH_BATCH_IN_FLIGHT", 4*workers)
}

func benchBatchLarge(t *testing.T, pluginDir string, n int) string {
	const workers = 32
	srv := newTestServer(t, emulator.Options{Workers: workers, StepDuration: 50 * time.Millisecond, QueueLimit: 100000})
	tf := newBinaryTerraform(t, pluginDir)
	inFlight := benchBatchInFlight(workers)
	writeBatchConfig(t, tf.dir, 10, inFlight) // 10 steps of 50 ms: 0.5 s per job
	exe := filepath.Join(pluginDir, "terraform-provider-svc")
	vars := []string{"-input=false", "-no-color", "-var", "endpoint=" + srv.URL(), "-var", "rows=" + strconv.Itoa(n)}
	var b strings.Builder
	b.WriteString("| svc_job_batch | wall time | ideal | ratio | requests | provider CPU | CLI CPU | provider peak RSS |\n|---|---|---|---|---|---|---|---|\n")
	apply := runMeasured(tf, srv, exe, append([]string{"apply", "-auto-approve"}, vars...))
	ideal := time.Duration(math.Ceil(float64(n)/workers)) * 500 * time.Millisecond
	fmt.Fprintf(&b, "| apply, %d rows of 0.5 s, server runs %d at once (`max_in_flight = %d`) | %.1f s | %.1f s | %.3f | %d | %.1f s | %.1f s | %.1f MiB |\n",
		n, workers, inFlight, apply.wall.Seconds(), ideal.Seconds(), apply.wall.Seconds()/ideal.Seconds(), apply.requests,
		apply.usage.cpu.Seconds(), apply.cliCPU.Seconds(), float64(apply.usage.peakRSS)/(1<<20))
	st, err := os.Stat(filepath.Join(tf.dir, "terraform.tfstate"))
	if err != nil {
		t.Fatal(err)
	}
	for _, cmd := range [][]string{{"plan", "-detailed-exitcode"}, {"destroy", "-auto-approve"}} {
		runs := runSettledBatch(t, tf, srv, exe, append(cmd, vars...))
		run := median(runs)
		fmt.Fprintf(&b, "| %s of the finished batch (median of %d; slowest %.2f s) | %.2f s | | | %d | %.2f s | %.2f s | %.1f MiB |\n",
			cmd[0], len(runs), slowest(runs).wall.Seconds(), run.wall.Seconds(), run.requests, run.usage.cpu.Seconds(), run.cliCPU.Seconds(), float64(run.usage.peakRSS)/(1<<20))
	}
	fmt.Fprintf(&b, "\nState file after the apply: %d bytes, %.0f bytes per row (one output each).\n\n", st.Size(), float64(st.Size())/float64(n))
	return b.String()
}

// runSettledBatch runs a command on the finished batch SVC_BENCH_BATCH_SETTLED_ROUNDS times
// (default 3), each on the state the apply left: a destroy's state is put back after it.
func runSettledBatch(t *testing.T, tf *terraformCLI, srv *emulator.Server, exe string, args []string) []scalingRun {
	t.Helper()
	var runs []scalingRun
	for range benchEnvInt("SVC_BENCH_BATCH_SETTLED_ROUNDS", 3) {
		runs = append(runs, runOnState(t, tf, srv, exe, args))
	}
	return runs
}

// runOnState runs a command once on the state the directory holds, and puts that state back.
func runOnState(t *testing.T, tf *terraformCLI, srv *emulator.Server, exe string, args []string) scalingRun {
	t.Helper()
	statePath := filepath.Join(tf.dir, "terraform.tfstate")
	state, err := os.ReadFile(statePath)
	if err != nil {
		t.Fatal(err)
	}
	run := runMeasured(tf, srv, exe, args)
	if err := os.WriteFile(statePath, state, 0o600); err != nil {
		t.Fatal(err)
	}
	return run
}

// slowest is the run of longest wall time.
func slowest(runs []scalingRun) scalingRun {
	return slices.MaxFunc(runs, func(a, b scalingRun) int { return int(a.wall - b.wall) })
}

// benchBatchVersusJobs applies and destroys n rows of jobs that finish at once, as one
// svc_job_batch and as n svc_job (count), against one server each running 32 at once.
func benchBatchVersusJobs(t *testing.T, pluginDir string, n int) string {
	exe := filepath.Join(pluginDir, "terraform-provider-svc")
	var b strings.Builder
	b.WriteString("| N | command | `svc_job_batch` wall | `svc_job` × N wall | ratio | `svc_job_batch` CPU (provider + CLI) | `svc_job` CPU (provider + CLI) | state bytes per row (batch / jobs) |\n|---|---|---|---|---|---|---|---|\n")
	batchSrv := newTestServer(t, emulator.Options{Workers: 32, QueueLimit: 100000})
	batchTF := newBinaryTerraform(t, pluginDir)
	writeBatchConfig(t, batchTF.dir, 1, 64)
	jobSrv := newTestServer(t, emulator.Options{Workers: 32, QueueLimit: 100000})
	jobTF := newBinaryTerraform(t, pluginDir)
	writeJobsConfig(t, jobTF.dir, 1)
	batchVars := []string{"-input=false", "-no-color", "-var", "endpoint=" + batchSrv.URL(), "-var", "rows=" + strconv.Itoa(n)}
	jobVars := []string{"-input=false", "-no-color", "-parallelism=64", "-var", "endpoint=" + jobSrv.URL(), "-var", "jobs=" + strconv.Itoa(n)}
	for _, cmd := range [][]string{{"apply", "-auto-approve"}, {"destroy", "-auto-approve"}} {
		batchRun := runMeasured(batchTF, batchSrv, exe, append(cmd, batchVars...))
		perRowBatch, perRowJob := stateBytesPerRow(batchTF.dir, n), stateBytesPerRow(jobTF.dir, n)
		jobRun := runMeasured(jobTF, jobSrv, exe, append(cmd, jobVars...))
		if cmd[0] == "apply" {
			perRowJob = stateBytesPerRow(jobTF.dir, n)
		}
		fmt.Fprintf(&b, "| %d | %s | %.1f s | %.1f s | %.1f× | %.1f s + %.1f s | %.1f s + %.1f s | %.0f / %.0f |\n", n, cmd[0],
			batchRun.wall.Seconds(), jobRun.wall.Seconds(), jobRun.wall.Seconds()/batchRun.wall.Seconds(),
			batchRun.usage.cpu.Seconds(), batchRun.cliCPU.Seconds(), jobRun.usage.cpu.Seconds(), jobRun.cliCPU.Seconds(), perRowBatch, perRowJob)
	}
	return b.String()
}

func stateBytesPerRow(dir string, n int) float64 {
	st, err := os.Stat(filepath.Join(dir, "terraform.tfstate"))
	if err != nil {
		return 0
	}
	return float64(st.Size()) / float64(n)
}

// benchBatchApplyVersus applies n rows of 0.5 s jobs on a server running 32 at once with the
// build of the git ref and with this tree's (pluginDir), one after the other, rounds times, and
// tabulates each apply beside its timeline: how long until the first submission (Terraform's
// plan and the apply's start), the span the server ran jobs (its first start to its last end),
// how busy its slots were over that span, and the time from the last end to the command's end
// (the results built, the state written).
func benchBatchApplyVersus(t *testing.T, ref, pluginDir string, n, rounds int) string {
	const workers = 32
	builds := []struct{ name, dir string }{{ref, buildProviderAt(t, ref)}, {"this tree", pluginDir}}
	ideal := time.Duration(math.Ceil(float64(n)/workers)) * 500 * time.Millisecond
	var b strings.Builder
	fmt.Fprintf(&b, "Apply of %d rows of 0.5 s, server runs %d at once (`max_in_flight = %d`), ideal %.1f s; load average before: %s\n\n",
		n, workers, benchBatchInFlight(workers), ideal.Seconds(), loadAverage())
	var ops []string
	b.WriteString("| build | wall time | ratio | requests | provider CPU | CLI CPU | provider peak RSS | to first submit | server span | slots busy | after last end |\n|---|---|---|---|---|---|---|---|---|---|---|\n")
	for range rounds {
		for _, build := range builds {
			srv := newTestServer(t, emulator.Options{Workers: workers, StepDuration: 50 * time.Millisecond, QueueLimit: 100000})
			tf := newBinaryTerraform(t, build.dir)
			writeBatchConfig(t, tf.dir, 10, benchBatchInFlight(workers))
			exe := filepath.Join(build.dir, "terraform-provider-svc")
			start := time.Now()
			run := runMeasured(tf, srv, exe, []string{"apply", "-auto-approve", "-input=false", "-no-color",
				"-var", "endpoint=" + srv.URL(), "-var", "rows=" + strconv.Itoa(n)})
			end := start.Add(run.wall)
			sp := srv.Span(time.Time{})
			span := sp.LastCompleted.Sub(sp.FirstStarted)
			fmt.Fprintf(&b, "| %s | %.1f s | %.3f | %d | %.1f s | %.1f s | %.1f MiB | %.1f s | %.1f s | %.1f %% | %.1f s |\n",
				build.name, run.wall.Seconds(), run.wall.Seconds()/ideal.Seconds(), run.requests, run.usage.cpu.Seconds(),
				run.cliCPU.Seconds(), float64(run.usage.peakRSS)/(1<<20), sp.FirstCreated.Sub(start).Seconds(), span.Seconds(),
				100*sp.Busy.Seconds()/(workers*span.Seconds()), end.Sub(sp.LastCompleted).Seconds())
			ops = append(ops, fmt.Sprintf("%s: %d submissions, %d reads, %d event streams", build.name,
				srv.Requests(emulator.OpSubmitJob), srv.Requests(emulator.OpGetJob), srv.Requests(emulator.OpJobEvents)))
			srv.Close()
		}
	}
	return b.String() + "\nRequests by kind: " + strings.Join(ops, "; ") + ".\n\n"
}

// benchBatchInstant applies n rows of jobs that finish at once, plans the finished batch (which
// must be no change, without a request) and destroys it, on the CLI the tests run: every
// message that carries the whole batch passes that CLI's plugin protocol limits.
func benchBatchInstant(t *testing.T, pluginDir string, n int) string {
	srv := newTestServer(t, emulator.Options{Workers: 32, QueueLimit: 100000})
	tf := newBinaryTerraform(t, pluginDir)
	writeBatchConfig(t, tf.dir, 1, 64)
	exe := filepath.Join(pluginDir, "terraform-provider-svc")
	vars := []string{"-input=false", "-no-color", "-var", "endpoint=" + srv.URL(), "-var", "rows=" + strconv.Itoa(n)}
	var b strings.Builder
	fmt.Fprintf(&b, "%s, %d rows of jobs that finish at once:\n\n| command | wall time | requests | provider CPU | CLI CPU | provider peak RSS |\n|---|---|---|---|---|---|\n", terraformVersion(), n)
	var stateBytes int64
	for _, cmd := range [][]string{{"apply", "-auto-approve"}, {"plan", "-detailed-exitcode"}, {"destroy", "-auto-approve"}} {
		var run scalingRun
		name := cmd[0]
		if name == "apply" {
			run = runMeasured(tf, srv, exe, append(cmd, vars...))
		} else {
			runs := runSettledBatch(t, tf, srv, exe, append(cmd, vars...))
			run, name = median(runs), fmt.Sprintf("%s (median of %d)", name, len(runs))
		}
		fmt.Fprintf(&b, "| %s | %.2f s | %d | %.2f s | %.2f s | %.1f MiB |\n",
			name, run.wall.Seconds(), run.requests, run.usage.cpu.Seconds(), run.cliCPU.Seconds(), float64(run.usage.peakRSS)/(1<<20))
		if cmd[0] == "apply" {
			st, err := os.Stat(filepath.Join(tf.dir, "terraform.tfstate"))
			if err != nil {
				t.Fatal(err)
			}
			stateBytes = st.Size()
		}
	}
	fmt.Fprintf(&b, "\nState file after the apply: %d bytes; the plan found no change (exit code 0).\n\n", stateBytes)
	return b.String()
}

// benchBatchSettledVersus plans and destroys one finished batch of n rows (jobs that finish at
// once, applied by this tree's build) with the ref's build and this tree's, in turn,
// SVC_BENCH_BATCH_SETTLED_ROUNDS times each, every run on the state the apply left.
func benchBatchSettledVersus(t *testing.T, ref, pluginDir string, n int) string {
	srv := newTestServer(t, emulator.Options{Workers: 32, QueueLimit: 100000})
	tf := newBinaryTerraform(t, pluginDir)
	writeBatchConfig(t, tf.dir, 1, 64)
	vars := []string{"-input=false", "-no-color", "-var", "endpoint=" + srv.URL(), "-var", "rows=" + strconv.Itoa(n)}
	runMeasured(tf, srv, filepath.Join(pluginDir, "terraform-provider-svc"), append([]string{"apply", "-auto-approve"}, vars...))
	builds := []struct{ name, dir string }{{ref, buildProviderAt(t, ref)}, {"this tree", pluginDir}}
	var b strings.Builder
	fmt.Fprintf(&b, "Plan and destroy of one finished batch of %d rows, each build in turn on the same state; load average before: %s\n\n", n, loadAverage())
	b.WriteString("| command | build | runs (wall) | median | requests | provider CPU | CLI CPU |\n|---|---|---|---|---|---|---|\n")
	for _, cmd := range [][]string{{"plan", "-detailed-exitcode"}, {"destroy", "-auto-approve"}, {"destroy", "-refresh=false", "-auto-approve"}} {
		runs := map[string][]scalingRun{}
		for range benchEnvInt("SVC_BENCH_BATCH_SETTLED_ROUNDS", 3) {
			for _, build := range builds {
				bt := newBinaryTerraformIn(t, build.dir, tf.dir)
				runs[build.name] = append(runs[build.name], runOnState(t, bt, srv, filepath.Join(build.dir, "terraform-provider-svc"), append(cmd, vars...)))
			}
		}
		for _, build := range builds {
			var walls []string
			for _, r := range runs[build.name] {
				walls = append(walls, fmt.Sprintf("%.2f", r.wall.Seconds()))
			}
			m := median(runs[build.name])
			fmt.Fprintf(&b, "| %s | %s | %s s | %.2f s | %d | %.2f s | %.2f s |\n", strings.Join(slices.DeleteFunc(slices.Clone(cmd), unlabelledFlag), " "), build.name, strings.Join(walls, ", "),
				m.wall.Seconds(), m.requests, m.usage.cpu.Seconds(), m.cliCPU.Seconds())
		}
	}
	return b.String() + "\n"
}

// benchBatchAddedVersus plans and applies added rows (jobs that finish at once) added to one
// finished batch of n rows (applied by this tree's build), with the ref's build and this tree's
// in turn, SVC_BENCH_BATCH_SETTLED_ROUNDS times each, every run on the state the first apply
// left, and gives the apply's wall time over the plan's, pair by pair.
func benchBatchAddedVersus(t *testing.T, ref, pluginDir string, n, added int) string {
	srv := newTestServer(t, emulator.Options{Workers: 32, QueueLimit: 100000})
	tf := newBinaryTerraform(t, pluginDir)
	writeBatchConfig(t, tf.dir, 1, 64)
	vars := func(rows int) []string {
		return []string{"-input=false", "-no-color", "-var", "endpoint=" + srv.URL(), "-var", "rows=" + strconv.Itoa(rows)}
	}
	runMeasured(tf, srv, filepath.Join(pluginDir, "terraform-provider-svc"), append([]string{"apply", "-auto-approve"}, vars(n)...))
	builds := []struct{ name, dir string }{{ref, providerAt(t, ref)}, {"this tree", pluginDir}}
	var b strings.Builder
	fmt.Fprintf(&b, "Plan and apply of %d rows added to one finished batch of %d rows (%s server), each build in turn on the same state; load average before: %s\n\n",
		added, n, testServerMode(t), loadAverage())
	b.WriteString("| build | plan runs (wall) | apply runs (wall) | plan median | apply median | apply / plan, pair by pair (min / median / max) | apply provider CPU (median) | CPU of the CLI and plugins: plan / apply (median), ratio |\n|---|---|---|---|---|---|---|---|\n")
	addedRuns := map[string][][2]scalingRun{} // each build's plan and apply runs
	for range benchEnvInt("SVC_BENCH_BATCH_SETTLED_ROUNDS", 3) {
		for _, build := range builds {
			bt := newBinaryTerraformIn(t, build.dir, tf.dir)
			exe := filepath.Join(build.dir, "terraform-provider-svc")
			addedRuns[build.name] = append(addedRuns[build.name], [2]scalingRun{
				runOnState(t, bt, srv, exe, append([]string{"plan"}, vars(n+added)...)),
				runOnState(t, bt, srv, exe, append([]string{"apply", "-auto-approve"}, vars(n+added)...)),
			})
		}
	}
	for _, build := range builds {
		b.WriteString(addedRow(build.name, addedRuns[build.name]))
	}
	return b.String() + "\n"
}

// addedRow is one build's row of benchBatchAddedVersus's table.
func addedRow(name string, pairs [][2]scalingRun) string {
	var plans, applies []scalingRun
	var plansWall, appliesWall []string
	var ratios, planCPU, applyCPU []float64
	for _, p := range pairs {
		plans, applies = append(plans, p[0]), append(applies, p[1])
		plansWall, appliesWall = append(plansWall, fmt.Sprintf("%.2f", p[0].wall.Seconds())), append(appliesWall, fmt.Sprintf("%.2f", p[1].wall.Seconds()))
		ratios = append(ratios, p[1].wall.Seconds()/p[0].wall.Seconds())
		planCPU, applyCPU = append(planCPU, (p[0].cliCPU+p[0].usage.cpu).Seconds()), append(applyCPU, (p[1].cliCPU+p[1].usage.cpu).Seconds())
	}
	slices.Sort(ratios)
	slices.Sort(planCPU)
	slices.Sort(applyCPU)
	cpuPlan, cpuApply := planCPU[len(planCPU)/2], applyCPU[len(applyCPU)/2]
	return fmt.Sprintf("| %s | %s s | %s s | %.2f s | %.2f s | %.2f / **%.2f** / %.2f | %.2f s | %.2f / %.2f s, %.2f |\n", name, strings.Join(plansWall, ", "), strings.Join(appliesWall, ", "),
		median(plans).wall.Seconds(), median(applies).wall.Seconds(), ratios[0], ratios[len(ratios)/2], ratios[len(ratios)-1], median(applies).usage.cpu.Seconds(),
		cpuPlan, cpuApply, cpuApply/cpuPlan)
}

// unlabelledFlag is a flag a table's command label leaves out: it changes nothing measured.
func unlabelledFlag(arg string) bool { return arg == "-auto-approve" || arg == "-detailed-exitcode" }

// benchBatchJournal applies a batch of n rows of jobs that finish at once without the journal of
// submissions and with it (its default place), each in a new working directory, and says what
// the journal cost: wall time, the provider's CPU, and the journal's lines and size.
func benchBatchJournal(t *testing.T, pluginDir string, n int) string {
	exe := filepath.Join(pluginDir, "terraform-provider-svc")
	var b strings.Builder
	fmt.Fprintf(&b, "%s, one apply of %d rows of jobs that finish at once (max_in_flight = 64), load average before: %s\n\n"+
		"| journal | wall time | requests | provider CPU | journal lines | journal bytes |\n|---|---|---|---|---|---|\n", terraformVersion(), n, loadAverage())
	for _, on := range []bool{false, true} {
		srv := newTestServer(t, emulator.Options{Workers: 32, QueueLimit: 100000})
		tf := newBinaryTerraform(t, pluginDir)
		if on {
			withoutJournalEnv(tf)
		}
		writeBatchConfig(t, tf.dir, 1, 64)
		vars := []string{"-input=false", "-no-color", "-var", "endpoint=" + srv.URL(), "-var", "rows=" + strconv.Itoa(n)}
		run := runMeasured(tf, srv, exe, append([]string{"apply", "-auto-approve"}, vars...))
		lines, size := 0, int64(0)
		if data, err := os.ReadFile(filepath.Join(tf.dir, ".terraform", "svc-journal", "journal.jsonl")); err == nil {
			lines, size = strings.Count(string(data), "\n"), int64(len(data))
		}
		fmt.Fprintf(&b, "| %v | %.2f s | %d | %.2f s | %d | %d |\n", map[bool]string{false: "off", true: "on"}[on],
			run.wall.Seconds(), run.requests, run.usage.cpu.Seconds(), lines, size)
	}
	return b.String() + "\n"
}
