package provider

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/svc-org/terraform-provider-svc/internal/emulator"
)

// settledBuild is one build of the provider in the settled-jobs comparison, or terraform_data
// (pluginDir ""): Terraform's own floor for as many resources holding the same workflow.
type settledBuild struct {
	name      string
	pluginDir string
	tf        *terraformCLI
	vars      []string
}

// benchSettledJobs compares, on one server and one machine, builds of the provider planning
// and destroying SVC_BENCH_SETTLED_N (default 1,000) finished jobs once their signed URLs have
// expired, beside terraform_data holding the same workflow: the build under test, and the build
// of the git revision SVC_BENCH_BASE_REF (say main) when set. Each command runs for every build
// in turn, SVC_BENCH_ROUNDS times (default 3), so that the load of the machine falls on all
// alike; the table gives each build's median wall time, and the CPU time of Terraform and of
// the provider's plugin processes, which the load disturbs less. SVC_BENCH_SETTLED_DESTROY=0
// leaves out the destroy (a minute per build).
func benchSettledJobs(t *testing.T, pluginDir string) string {
	n, rounds := benchEnvInt("SVC_BENCH_SETTLED_N", 1000), benchEnvInt("SVC_BENCH_ROUNDS", 3)
	srv := newTestServer(t, emulator.Options{Workers: 8})
	builds := []*settledBuild{{name: "this build", pluginDir: pluginDir}}
	if ref := os.Getenv("SVC_BENCH_BASE_REF"); ref != "" {
		builds = append([]*settledBuild{{name: "`" + ref + "`", pluginDir: buildProviderAt(t, ref)}}, builds...)
	}
	builds = append(builds, &settledBuild{name: "`terraform_data`"})
	stateBytes := map[string]int{}
	for _, b := range builds {
		b.tf = newBinaryTerraform(t, orElse(b.pluginDir, pluginDir))
		b.vars = []string{"-var", "jobs=" + strconv.Itoa(n)}
		if b.pluginDir == "" {
			writeDataConfig(t, b.tf.dir)
		} else {
			writeJobsConfig(t, b.tf.dir, 1)
			b.vars = append(b.vars, "-var", "endpoint="+srv.URL())
		}
		b.tf.run(append([]string{"apply", "-auto-approve", "-input=false", "-no-color"}, b.vars...)...)
		state, err := os.ReadFile(filepath.Join(b.tf.dir, "terraform.tfstate"))
		if err != nil {
			t.Fatal(err)
		}
		stateBytes[b.name] = len(state) / n
	}
	// Every signed URL the jobs were given has expired before the first plan.
	time.Sleep(emulator.StrictURLTTL + time.Second)

	var out strings.Builder
	fmt.Fprintf(&out, "## Finished jobs after their URLs expired: builds side by side\n\n"+
		"%d finished `svc_job` (one output each) per build, and as many `terraform_data` holding the same workflow, on the reference server in its %s mode; "+
		"each command runs for every build in turn, %d rounds (median wall; CPU summed over the rounds and divided by them). Terraform CPU is the CLI's own (its user + system time less the plugin processes' it reaped); "+
		"provider CPU that of the plugin processes. Load average before the runs: %s.\n\n",
		n, testServerMode(t), rounds, loadAverage())
	out.WriteString("| command | build | wall | vs `terraform_data` | requests | Terraform CPU | provider CPU | state per resource |\n|---|---|---|---|---|---|---|---|\n")
	commands := [][]string{{"plan"}, {"plan", "-refresh=false"}, {"destroy", "-auto-approve"}}
	if os.Getenv("SVC_BENCH_SETTLED_DESTROY") == "0" {
		commands = commands[:2]
	}
	for _, command := range commands {
		times := runSettledRounds(builds, srv, command, rounds)
		floor := median(times["`terraform_data`"])
		for _, b := range builds {
			runs := times[b.name]
			m := median(runs)
			fmt.Fprintf(&out, "| `terraform %s` | %s | %.2f s | %.2f | %d | %.2f s | %.2f s | %d B |\n", strings.Join(command, " "), b.name,
				m.wall.Seconds(), m.wall.Seconds()/floor.wall.Seconds(), m.requests, mean(runs, func(r scalingRun) time.Duration { return r.cliCPU }).Seconds(),
				mean(runs, func(r scalingRun) time.Duration { return r.usage.cpu }).Seconds(), stateBytes[b.name])
		}
	}
	out.WriteString("\n")
	return out.String()
}

// runSettledRounds runs command rounds times for every build in turn (destroy once: it empties
// the state), and returns each build's runs.
func runSettledRounds(builds []*settledBuild, srv *emulator.Server, command []string, rounds int) map[string][]scalingRun {
	if command[0] == "destroy" {
		rounds = 1
	}
	times := map[string][]scalingRun{}
	for range rounds {
		for _, b := range builds {
			args := append(append(slices.Clone(command), "-input=false", "-no-color"), b.vars...)
			var server *emulator.Server
			exe := ""
			if b.pluginDir != "" {
				server, exe = srv, filepath.Join(b.pluginDir, "terraform-provider-svc")
			}
			times[b.name] = append(times[b.name], runMeasured(b.tf, server, exe, args))
		}
	}
	return times
}

// median is the run of median wall time.
func median(runs []scalingRun) scalingRun {
	s := slices.Clone(runs)
	slices.SortFunc(s, func(a, b scalingRun) int { return int(a.wall - b.wall) })
	return s[len(s)/2]
}

func mean(runs []scalingRun, of func(scalingRun) time.Duration) time.Duration {
	var sum time.Duration
	for _, r := range runs {
		sum += of(r)
	}
	return sum / time.Duration(len(runs))
}

// orElse is a, or b when a is empty.
func orElse(a, b string) string {
	if a == "" {
		return b
	}
	return a
}

// buildProviderAt builds the provider as it is at the git revision ref into a temporary plugin
// directory (its sources taken with git archive, this checkout left as it is).
// providerAt is the directory of ref's provider plugin: ref itself when it is a directory that
// already holds a terraform-provider-svc (a plugin built for a comparison, such as one that
// answers with what it was sent), otherwise buildProviderAt's build of the git ref.
func providerAt(t *testing.T, ref string) string {
	t.Helper()
	if st, err := os.Stat(filepath.Join(ref, "terraform-provider-svc")); err == nil && st.Mode().IsRegular() {
		return ref
	}
	return buildProviderAt(t, ref)
}

func buildProviderAt(t *testing.T, ref string) string {
	t.Helper()
	src, dir := t.TempDir(), t.TempDir()
	archive := exec.Command("sh", "-c", "git archive --format=tar \"$0\" | tar -x -C \"$1\"", ref, src)
	archive.Dir = filepath.Join("..", "..")
	if out, err := archive.CombinedOutput(); err != nil {
		t.Fatalf("git archive %s: %v\n%s", ref, err, out)
	}
	build := exec.Command("go", "build", "-o", filepath.Join(dir, "terraform-provider-svc"), ".")
	build.Dir = src
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building %s: %v\n%s", ref, err, out)
	}
	return dir
}

// loadAverage is the machine's load average (1, 5 and 15 minutes), as /proc/loadavg gives it.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) >= 3 {
		return strings.Join(f[:3], ", ")
	}
	return "unknown"
}
