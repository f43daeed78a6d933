package provider

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/svc-org/terraform-provider-svc/internal/emulator"
)

// TestBenchmarkCompletionLatency measures how late an apply sees its jobs end, and what the
// wait costs in requests, against the reference server in both modes: strict (no event stream,
// progress that does not move, Retry-After: 1 on reads: the provider polls blind) and generous
// (the event stream wakes the wait). Each case is one `terraform apply` of svc_job resources
// with the provider built as a plugin binary, on a server of its own that runs every job at
// once: one job of 3 s, 12 s and 40 s, and five of 12 s in one apply (run times set by the
// sampler's steps, 100 ms each; a loaded server runs them a few percent longer).
//
// Lateness is, per job, from its completed_at to when the server first answered a read saying
// it had ended (emulator.Server.EndRead; the answer's way back, under a millisecond on
// loopback, is not in it). Requests per job are the submissions, reads and event-stream
// requests the server received, against a fixed 2 s poll's budget (run/2 + 4). With
// SVC_BENCH_BASELINE=<source tree of another build> (e.g. `git archive main`), every case also
// runs with that build, right after this one, so the two compare on one machine at one load.
//
//	SVC_BENCH=1 SVC_BENCH_BASELINE=/tmp/main-src go test ./internal/provider -run '^TestBenchmarkCompletionLatency$' -v -timeout 30m
func TestBenchmarkCompletionLatency(t *testing.T) {
	if os.Getenv("SVC_BENCH") == "" {
		t.Skip("set SVC_BENCH=1")
	}
	builds := []struct{ name, dir string }{{"this", buildProvider(t)}}
	if src := os.Getenv("SVC_BENCH_BASELINE"); src != "" {
		builds = append(builds, struct{ name, dir string }{"baseline", buildProviderFrom(t, src)})
	}
	cases := []struct {
		name string
		jobs int
		run  time.Duration
	}{
		{"one job of 3 s", 1, 3 * time.Second},
		{"one job of 12 s", 1, 12 * time.Second},
		{"one job of 40 s", 1, 40 * time.Second},
		{"five jobs of 12 s", 5, 12 * time.Second},
	}
	load := loadAverage()
	var b strings.Builder
	b.WriteString("| mode | case | build | run | lateness (each job) | bound | requests per job | budget | wall | provider CPU | terraform + provider CPU |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, mode := range []emulator.Mode{emulator.ModeStrict, emulator.ModeGenerous} {
		for _, c := range cases {
			for _, build := range builds {
				r := runLatencyCase(t, build.dir, mode, c.jobs, c.run)
				bound := max(time.Second, r.run/20)
				if mode == emulator.ModeGenerous {
					bound = 50 * time.Millisecond
				}
				fmt.Fprintf(&b, "| %s | %s | %s | %.2f s | %s | %s | %.1f | %.1f | %.1f s | %.2f s | %.2f s |\n",
					mode, c.name, build.name, r.run.Seconds(), formatLags(r.lags, bound), ms(bound),
					r.requestsPerJob, float64(r.run)/float64(2*time.Second)+4, r.wall.Seconds(), r.providerCPU.Seconds(), r.childCPU.Seconds())
			}
		}
	}
	t.Logf("load average before: %s; after: %s\n%s", load, loadAverage(), b.String())
}

// latencyRun is what one apply of a latency case measured.
type latencyRun struct {
	run            time.Duration   // the longest run (completed_at - started_at)
	lags           []time.Duration // per job: completed_at to the first read that said it ended
	requestsPerJob float64
	wall           time.Duration
	providerCPU    time.Duration // the plugin processes (sampled)
	childCPU       time.Duration // terraform and the plugin it ran (reaped children's rusage)
}

func runLatencyCase(t *testing.T, pluginDir string, mode emulator.Mode, jobs int, run time.Duration) latencyRun {
	t.Helper()
	srv := newTestServer(t, emulator.Options{Mode: mode, Workers: jobs, StepDuration: 100 * time.Millisecond})
	tf := newBinaryTerraform(t, pluginDir)
	writeJobsConfig(t, tf.dir, int(run/(100*time.Millisecond)))
	before := childrenCPU()
	watch := watchPlugin(filepath.Join(pluginDir, "terraform-provider-svc"))
	start := time.Now()
	tf.run("apply", "-auto-approve", "-input=false", "-no-color", "-var", "endpoint="+srv.URL(), "-var", fmt.Sprint("jobs=", jobs))
	r := latencyRun{wall: time.Since(start), providerCPU: watch().cpu, childCPU: childrenCPU() - before}
	requests := srv.Requests(emulator.OpSubmitJob) + srv.Requests(emulator.OpGetJob) + srv.Requests(emulator.OpJobEvents)
	r.requestsPerJob = float64(requests) / float64(jobs)
	for _, id := range srv.JobIDs() {
		started, completed, read, ok := srv.EndRead(id)
		if !ok {
			t.Fatalf("job %s: no read answered that it had ended", id)
		}
		r.lags = append(r.lags, read.Sub(completed))
		r.run = max(r.run, completed.Sub(started))
	}
	slices.Sort(r.lags)
	return r
}

// buildProviderFrom builds the provider of another source tree (a baseline) into a temporary
// plugin directory.
func buildProviderFrom(t *testing.T, src string) string {
	t.Helper()
	dir := t.TempDir()
	cmd := exec.Command("go", "build", "-o", filepath.Join(dir, "terraform-provider-svc"), ".")
	cmd.Dir = src
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building the baseline in %s: %v\n%s", src, err, out)
	}
	return dir
}

func formatLags(lags []time.Duration, bound time.Duration) string {
	parts := make([]string, len(lags))
	for i, l := range lags {
		parts[i] = ms(l)
		if l > bound {
			parts[i] = "**" + parts[i] + "**"
		}
	}
	return strings.Join(parts, ", ")
}

// childrenCPU is the user and system time of this process's reaped children.
func childrenCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
