package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/svc-org/terraform-provider-svc/internal/client"
	"github.com/svc-org/terraform-provider-svc/internal/emulator"
)

// clockTicks is the unit of utime and stime in /proc/<pid>/stat (USER_HZ, 100 on Linux).
const clockTicks = 100

// benchSizes is the list of batch sizes of the scaling table: SVC_BENCH_N (comma-separated),
// else 100, 1,000 and 3,000.
func benchSizes(t *testing.T) []int {
	spec := os.Getenv("SVC_BENCH_N")
	if spec == "" {
		spec = "100,1000,3000"
	}
	var sizes []int
	for _, f := range strings.Split(spec, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			t.Fatalf("SVC_BENCH_N: %q is not a list of positive numbers", spec)
		}
		sizes = append(sizes, n)
	}
	return sizes
}

func benchEnvInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
		return n
	}
	return def
}

// pluginUsage is what the provider's plugin processes used during one Terraform command.
type pluginUsage struct {
	cpu     time.Duration // user + system time, summed over the processes
	peakRSS uint64        // highest VmHWM of any of them (bytes)
}

// watchPlugin samples, every 10 ms, every process running the binary exe (Terraform may start
// the provider more than once per command) and keeps each one's last CPU time (utime + stime
// from /proc/<pid>/stat) and peak resident set (VmHWM). A process's CPU after its last sample
// is lost: at most one sampling period per process.
func watchPlugin(exe string) func() pluginUsage {
	stop := make(chan struct{})
	done := make(chan pluginUsage)
	go func() {
		cpu := map[string]time.Duration{}
		var peak uint64
		for {
			for pid, u := range pluginProcesses(exe) {
				cpu[pid] = u.cpu
				peak = max(peak, u.peakRSS)
			}
			select {
			case <-stop:
				var total time.Duration
				for _, c := range cpu {
					total += c
				}
				done <- pluginUsage{cpu: total, peakRSS: peak}
				return
			case <-time.After(10 * time.Millisecond):
			}
		}
	}()
	return func() pluginUsage { close(stop); return <-done }
}

// pluginProcesses reads the CPU time and peak RSS of each process whose executable is exe.
func pluginProcesses(exe string) map[string]pluginUsage {
	entries, _ := os.ReadDir("/proc")
	out := map[string]pluginUsage{}
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		if target, err := os.Readlink(filepath.Join("/proc", e.Name(), "exe")); err != nil || target != exe {
			continue
		}
		var u pluginUsage
		if stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat")); err == nil {
			// Fields after the command name (which may hold spaces) start at state: utime and
			// stime are the 12th and 13th of them.
			if i := strings.LastIndexByte(string(stat), ')'); i > 0 {
				f := strings.Fields(string(stat[i+1:]))
				if len(f) > 12 {
					ut, _ := strconv.ParseInt(f[11], 10, 64)
					st, _ := strconv.ParseInt(f[12], 10, 64)
					u.cpu = time.Duration(ut+st) * time.Second / clockTicks
				}
			}
		}
		if status, err := os.ReadFile(filepath.Join("/proc", e.Name(), "status")); err == nil {
			u.peakRSS = vmHWM(status)
		}
		out[e.Name()] = u
	}
	return out
}

// scalingRun is one Terraform command of the scaling table.
type scalingRun struct {
	wall     time.Duration
	requests int
	usage    pluginUsage
	// cliCPU is the Terraform CLI's own CPU time: wait4 counts, in its user and system time,
	// the time of the children it reaped (the provider's plugin processes), taken off here.
	cliCPU time.Duration
}

// benchScaling is the scaling table: for each batch size, apply, plan (with and without
// refresh) and destroy of svc_job (jobs that finish at once) against the same commands on
// terraform_data, Terraform's own floor.
func benchScaling(t *testing.T, pluginDir string) string {
	exe := filepath.Join(pluginDir, "terraform-provider-svc")
	var b strings.Builder
	b.WriteString("## Scaling: the provider's cost next to Terraform's own\n\n")
	b.WriteString("Jobs that finish at once (one sampler step, no step time) on a reference server running 8 at a time; Terraform's default `-parallelism=10`. " +
		"`terraform_data` is the same count of resources with no provider at all. " +
		"Provider CPU is user + system time of the provider's plugin processes (every process running the built binary, sampled from `/proc/<pid>/stat` every 10 ms; Terraform may start the provider more than once per command), divided by N. " +
		"Requests are every request the server received during the command, divided by N. Peak RSS is the highest `VmHWM` of those processes.\n\n")
	b.WriteString("| N | command | `svc_job` wall | `terraform_data` wall | ratio | requests per job | provider CPU per resource | provider peak RSS |\n|---|---|---|---|---|---|---|---|\n")
	for _, n := range benchSizes(t) {
		srv := newTestServer(t, emulator.Options{Workers: 8})
		tf := newBinaryTerraform(t, pluginDir)
		writeJobsConfig(t, tf.dir, 1)
		floor := newBinaryTerraform(t, pluginDir)
		writeDataConfig(t, floor.dir)
		vars := []string{"-var", "endpoint=" + srv.URL(), "-var", "jobs=" + strconv.Itoa(n)}
		floorVars := []string{"-var", "jobs=" + strconv.Itoa(n)}
		commands := []struct {
			name      string
			args      []string
			floorArgs []string
		}{
			{"apply", []string{"apply", "-auto-approve"}, []string{"apply", "-auto-approve"}},
			{"plan (refresh)", []string{"plan"}, []string{"plan"}},
			{"plan -refresh=false", []string{"plan", "-refresh=false"}, []string{"plan", "-refresh=false"}},
			{"destroy", []string{"destroy", "-auto-approve"}, []string{"destroy", "-auto-approve"}},
		}
		for _, c := range commands {
			run := runMeasured(tf, srv, exe, append(append(c.args, "-input=false", "-no-color"), vars...))
			floorRun := runMeasured(floor, nil, "", append(append(c.floorArgs, "-input=false", "-no-color"), floorVars...))
			b.WriteString(scalingRow(n, c.name, run, floorRun))
			if c.name == "apply" && n <= 1000 {
				b.WriteString(applyWithoutWaitRow(t, pluginDir, srv, n, floorRun))
			}
		}
	}
	b.WriteString("\n")
	return b.String()
}

// applyWithoutWaitRow applies n more jobs with wait_for_completion = false, in a directory of
// its own (its state is dropped, not destroyed): the provider's cost of an apply without the
// wait (plan, submit, state), set beside the terraform_data apply floorRun.
func applyWithoutWaitRow(t *testing.T, pluginDir string, srv *emulator.Server, n int, floorRun scalingRun) string {
	tf := newBinaryTerraform(t, pluginDir)
	writeJobsConfig(t, tf.dir, 1)
	args := []string{"apply", "-auto-approve", "-input=false", "-no-color", "-var", "endpoint=" + srv.URL(), "-var", "jobs=" + strconv.Itoa(n), "-var", "wait=false"}
	run := runMeasured(tf, srv, filepath.Join(pluginDir, "terraform-provider-svc"), args)
	return scalingRow(n, "apply, not waiting (`wait_for_completion = false`)", run, floorRun)
}

// scalingRow is one line of the scaling table: run of n svc_job beside floorRun, the same
// command on as many terraform_data.
func scalingRow(n int, command string, run, floorRun scalingRun) string {
	return fmt.Sprintf("| %d | %s | %.2f s | %.2f s | %.2f | %.2f | %.2f ms | %.1f MiB |\n", n, command,
		run.wall.Seconds(), floorRun.wall.Seconds(), run.wall.Seconds()/floorRun.wall.Seconds(),
		float64(run.requests)/float64(n), float64(run.usage.cpu)/float64(time.Millisecond)/float64(n),
		float64(run.usage.peakRSS)/(1<<20))
}

// runMeasured runs one Terraform command and measures its wall time, the requests srv received
// (if any), what the plugin processes running exe used (if any) and the CLI's own CPU time.
func runMeasured(tf *terraformCLI, srv *emulator.Server, exe string, args []string) scalingRun {
	before := 0
	if srv != nil {
		before = requestsTotal(srv)
	}
	watch := func() pluginUsage { return pluginUsage{} }
	if exe != "" {
		watch = watchPlugin(exe)
	}
	cmd, out := tf.command(args...)
	start := time.Now()
	if err := cmd.Run(); err != nil {
		tf.t.Fatalf("terraform %v: %v\n%s", args, err, out)
	}
	r := scalingRun{wall: time.Since(start), usage: watch()}
	r.cliCPU = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime() - r.usage.cpu
	if srv != nil {
		r.requests = requestsTotal(srv) - before
	}
	return r
}

// writeDataConfig writes var.jobs terraform_data resources holding the same workflow text as
// writeJobsConfig's jobs: Terraform's own cost for as many resources.
func writeDataConfig(t *testing.T, dir string) {
	t.Helper()
	cfg := `
variable "jobs" { type = number }

resource "terraform_data" "many" {
  count = var.jobs
  input = jsonencode({
    "1" = { class_type = "EmptyImage", inputs = { width = 8, height = 8, batch_size = 1, color = count.index } }
    "2" = { class_type = "ImageNoiseSampler", inputs = { image = ["1", 0], seed = count.index, steps = 1, denoise = 0.5 } }
    "3" = { class_type = "SaveImage", inputs = { images = ["2", 0], filename_prefix = "job" } }
  })
}
`
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
}

// benchBatchApply applies SVC_BENCH_APPLY_N (default 1,000) jobs of 0.5 s on 8 server slots and
// compares the wall time with the ideal (the server busy all along).
func benchBatchApply(t *testing.T, pluginDir string) string {
	n := benchEnvInt("SVC_BENCH_APPLY_N", 1000)
	srv := newTestServer(t, emulator.Options{Workers: 8, StepDuration: 50 * time.Millisecond})
	tf := newBinaryTerraform(t, pluginDir)
	writeJobsConfig(t, tf.dir, 10) // 10 steps of 50 ms: 0.5 s per job
	args := []string{"apply", "-auto-approve", "-input=false", "-no-color", "-parallelism=16", "-var", "endpoint=" + srv.URL(), "-var", "jobs=" + strconv.Itoa(n)}
	run := runMeasured(tf, srv, filepath.Join(pluginDir, "terraform-provider-svc"), args)
	ideal := time.Duration(math.Ceil(float64(n)/8)) * 500 * time.Millisecond
	return fmt.Sprintf("| apply, %d jobs of 0.5 s, server runs 8 at once (`-parallelism=16`) | %.2f s | %.2f s | %.2f | %.2f | %.2f ms | %.1f MiB |\n",
		n, run.wall.Seconds(), ideal.Seconds(), run.wall.Seconds()/ideal.Seconds(), float64(run.requests)/float64(n),
		float64(run.usage.cpu)/float64(time.Millisecond)/float64(n), float64(run.usage.peakRSS)/(1<<20))
}

// flatStrategy is one way of waiting on a server whose progress does not move.
type flatStrategy struct {
	name string
	// wait returns a function waiting for one job; it is made once per batch, so a strategy
	// may learn across the batch's jobs as the provider does within one apply.
	newWait func() func(ctx context.Context, c *client.Client, job *client.Job, shape string) (*client.Job, error)
}

var flatStrategies = []flatStrategy{
	{name: "polling, learning run times per workflow shape (provider default)", newWait: func() func(context.Context, *client.Client, *client.Job, string) (*client.Job, error) {
		durations := client.NewDurationEstimator()
		return func(ctx context.Context, c *client.Client, job *client.Job, shape string) (*client.Job, error) {
			return c.WaitJob(ctx, job, client.WaitOptions{Durations: durations, Shape: shape})
		}
	}},
	{name: "polling, no learning", newWait: func() func(context.Context, *client.Client, *client.Job, string) (*client.Job, error) {
		return func(ctx context.Context, c *client.Client, job *client.Job, _ string) (*client.Job, error) {
			return c.WaitJob(ctx, job, client.WaitOptions{})
		}
	}},
	{name: "fixed 2 s poll (baseline)", newWait: func() func(context.Context, *client.Client, *client.Job, string) (*client.Job, error) {
		fixed := waitStrategies[len(waitStrategies)-1].wait
		return func(ctx context.Context, c *client.Client, job *client.Job, _ string) (*client.Job, error) {
			return fixed(ctx, c, job)
		}
	}},
}

// benchFlatProgress runs 40 jobs of 3 s, 10 at a time (Terraform's default parallelism), on a
// server with 8 slots that serves no events and whose progress stays flat while a job runs,
// once per strategy (each against its own server, all at once).
func benchFlatProgress(t *testing.T) string {
	const jobs, slots, parallel, steps = 40, 8, 10, 60 // 60 steps of 50 ms: 3 s
	ideal := time.Duration(math.Ceil(float64(jobs)/slots)) * 3 * time.Second
	type result struct {
		wall     time.Duration
		requests float64
	}
	results := make([]result, len(flatStrategies))
	var wg sync.WaitGroup
	for i, s := range flatStrategies {
		wg.Add(1)
		go func() {
			defer wg.Done()
			srv := newTestServer(t, emulator.Options{Workers: slots, StepDuration: 50 * time.Millisecond, EventsDisabled: true, FlatProgress: true})
			c, err := client.New(client.Config{Endpoint: srv.URL()})
			if err != nil {
				t.Error(err)
				return
			}
			wait := s.newWait()
			start := time.Now()
			runBatch(t, jobs, parallel, func(k int) error { return runFlatJob(c, wait, k, steps) })
			results[i] = result{wall: time.Since(start), requests: float64(requestsTotal(srv)) / jobs}
		}()
	}
	wg.Wait()
	var b strings.Builder
	b.WriteString("## A server that says little\n\n")
	fmt.Fprintf(&b, "%d jobs of 3 s (one workflow shape, different seeds), %d at a time, on a server with %d slots that serves no events (`501`) and whose progress stays at 0 while a job runs (`EventsDisabled`, `FlatProgress`). Ideal: %.0f s.\n\n", jobs, parallel, slots, ideal.Seconds())
	b.WriteString("| strategy | wall time | vs ideal | requests per job |\n|---|---|---|---|\n")
	for i, r := range results {
		fmt.Fprintf(&b, "| %s | %.2f s | %.2f | %.2f |\n", flatStrategies[i].name, r.wall.Seconds(), r.wall.Seconds()/ideal.Seconds(), r.requests)
	}
	b.WriteString("\n")
	return b.String()
}

// runBatch calls run for 0..n-1, at most parallel at once, and reports failures on t.
func runBatch(t *testing.T, n, parallel int, run func(k int) error) {
	next := make(chan int)
	var wg sync.WaitGroup
	for range parallel {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range next {
				if err := run(k); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	for k := range n {
		next <- k
	}
	close(next)
	wg.Wait()
}

func runFlatJob(c *client.Client, wait func(context.Context, *client.Client, *client.Job, string) (*client.Job, error), seed, steps int) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	wf := json.RawMessage(fmt.Sprintf(`{"1":{"class_type":"EmptyImage","inputs":{"width":8,"height":8,"batch_size":1,"color":0}},`+
		`"2":{"class_type":"ImageNoiseSampler","inputs":{"image":["1",0],"seed":%d,"steps":%d,"denoise":0.5}},`+
		`"3":{"class_type":"SaveImage","inputs":{"images":["2",0],"filename_prefix":"b"}}}`, seed, steps))
	job, err := c.SubmitJob(ctx, client.SubmitJobInput{Workflow: wf})
	if err != nil {
		return err
	}
	final, err := wait(ctx, c, job, client.WorkflowShape(wf))
	if err == nil && final.Status != client.JobSucceeded {
		err = fmt.Errorf("job %s ended %s", final.ID, final.Status)
	}
	return err
}
