package provider

import (
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/svc-org/terraform-provider-svc/internal/emulator"
)

// A runner stops Terraform with little patience: `docker stop` sends SIGTERM to the process
// group and SIGKILL 10 s later; GitHub Actions' cancel sends SIGINT, SIGTERM 7.5 s later (which
// Terraform takes as "exit now", saving nothing) and SIGKILL 2.5 s after that. Whatever is under
// way (waits only; submissions with the service up; submissions riding out 30 s of 503 with
// Retry-After, or of refused connections), Terraform exits within 5 s of the first signal, every
// job the server created is in state under its row or resource (or its submission's key, as an
// unknown outcome), and the next apply creates no job twice and ends with every job succeeded.
func TestCLI_runnerStopEndsWithinItsGrace(t *testing.T) {
	skipUnlessAcc(t)
	t.Parallel()
	pluginDir := buildProvider(t)
	const outage = 30 * time.Second
	type workload struct {
		name    string
		total   int
		config  func(srv *emulator.Server) string
		args    []string
		inState func(t *testing.T, tf *terraformCLI) map[string]string
		// wave is how many jobs are created when the first wave of submissions is in.
		wave int
	}
	workloads := []workload{
		{
			name: "a 200-row batch", total: 200, wave: 32,
			config: func(srv *emulator.Server) string {
				return batchConfig(srv, batchSamplerTemplate(20),
					`{ for i in range(200) : "r${i}" => { "2" = { seed = i } } }`, "max_in_flight = 32")
			},
			inState: func(t *testing.T, tf *terraformCLI) map[string]string {
				ids, _ := batchRowIDs(t, tf)
				return ids
			},
		},
		{
			name: "10 svc_job", total: 10, wave: 5, args: []string{"-parallelism=10"},
			config: func(srv *emulator.Server) string {
				return providerConfig(srv, "") + fmt.Sprintf(`
resource "svc_job" "test" {
  count    = 10
  workflow = %s
}
`, samplerWorkflowHCL(20))
			},
			inState: jobIDsInState,
		},
	}
	type moment struct {
		name string
		step time.Duration // the emulator's step: a job runs 20 of them
		arm  func(srv *emulator.Server, w workload)
		// ready says when to stop: when it reports true.
		ready func(srv *emulator.Server, w workload) bool
	}
	downFor3s := func(from time.Time) bool { return !from.IsZero() && time.Since(from) >= 3*time.Second }
	moments := []moment{
		{
			name: "waits only", step: 200 * time.Millisecond, // jobs run 4 s
			ready: func(srv *emulator.Server, w workload) bool { return srv.JobCount() >= min(w.wave*2, w.total) },
		},
		{
			name: "submissions, service up", step: 50 * time.Millisecond,
			ready: func(srv *emulator.Server, w workload) bool { return srv.JobCount() >= w.wave+w.wave/4 },
		},
		{
			name: "submissions riding out 503", step: 50 * time.Millisecond,
			arm: func(srv *emulator.Server, w workload) {
				srv.OutageAfterRequest(emulator.OpSubmitJob, w.wave, outage, 2)
			},
			ready: func(srv *emulator.Server, _ workload) bool {
				o := srv.Outages()
				return len(o) > 0 && downFor3s(o[0].From)
			},
		},
		{
			name: "submissions riding out refused connections", step: 50 * time.Millisecond,
			// The restart comes while submissions go on, and answers those under way first.
			arm: func(srv *emulator.Server, _ workload) { srv.RestartAfterSubmission(time.Second, outage) },
			ready: func(srv *emulator.Server, _ workload) bool {
				d, _ := srv.Downtimes()
				return len(d) > 0 && downFor3s(d[0].From)
			},
		},
	}
	for _, r := range []runnerStop{dockerStop, githubCancel} {
		for _, m := range moments {
			for _, w := range workloads {
				t.Run(r.name+"/"+m.name+"/"+w.name, func(t *testing.T) {
					t.Parallel()
					srv := newTestServer(t, emulator.Options{Workers: 64, StepDuration: m.step})
					if m.arm != nil {
						m.arm(srv, w)
					}
					tf := newBinaryTerraform(t, pluginDir)
					tf.writeConfig(w.config(srv))
					args := append([]string{"apply", "-auto-approve", "-input=false", "-no-color"}, w.args...)

					out, took, _ := tf.stopLikeRunner(r, func() bool { return m.ready(srv, w) }, args...)
					if took > 5*time.Second {
						t.Errorf("Terraform exited %.1f s after the first signal; want within 5 s:\n%s", took.Seconds(), out)
					}
					t.Logf("Terraform exited %.1f s after the first signal, %d jobs created", took.Seconds(), srv.JobCount())
					defer func() {
						if t.Failed() {
							t.Logf("the stopped apply's output:\n%s", out)
						}
					}()
					created := srv.JobIDs()
					assertEveryJobInState(t, created, w.inState(t, tf))

					waitForTheServiceBack(t, srv)
					tf.run(args...)
					ids := w.inState(t, tf)
					if jobs := srv.JobCount(); jobs != w.total || len(ids) != w.total {
						t.Fatalf("%d jobs on the server, %d in state; want %d each: no job twice", jobs, len(ids), w.total)
					}
					assertEveryJobInState(t, srv.JobIDs(), ids)
					for _, id := range srv.JobIDs() {
						if st, _ := srv.JobStatus(id); st != "succeeded" {
							t.Errorf("job %s is %s; want succeeded", id, st)
						}
					}
				})
			}
		}
	}
}

// runnerStop is how a runner stops a job: signals to the process group, each at its offset
// from the first.
type runnerStop struct {
	name    string
	signals []timedSignal
}

type timedSignal struct {
	at  time.Duration
	sig syscall.Signal
}

var (
	dockerStop   = runnerStop{"docker stop", []timedSignal{{0, syscall.SIGTERM}, {10 * time.Second, syscall.SIGKILL}}}
	githubCancel = runnerStop{"GitHub Actions cancel", []timedSignal{
		{0, syscall.SIGINT}, {7500 * time.Millisecond, syscall.SIGTERM}, {10 * time.Second, syscall.SIGKILL},
	}}
)

// stopLikeRunner runs terraform in a process group of its own and, once ready reports true,
// signals the group as r does, until Terraform exits; it returns the output, how long after the
// first signal Terraform exited, and its exit status.
func (c *terraformCLI) stopLikeRunner(r runnerStop, ready func() bool, args ...string) (string, time.Duration, error) {
	c.t.Helper()
	cmd, out := c.command(args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		c.t.Fatal(err)
	}
	// Closed once Terraform exited; waitErr is then its exit status (that of a process stopped on
	// purpose tells nothing, but an early end is reported with it).
	exited := make(chan struct{})
	var waitErr error
	go func() {
		waitErr = cmd.Wait()
		close(exited)
	}()
	deadline := time.Now().Add(90 * time.Second)
	for !ready() {
		select {
		case <-exited:
			c.t.Fatalf("terraform %v ended (%v) before the moment to stop it:\n%s", args, waitErr, out)
		default:
		}
		if time.Now().After(deadline) {
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-exited
			c.t.Fatalf("terraform %v: never ready to stop:\n%s", args, out)
		}
		time.Sleep(20 * time.Millisecond) // polling a condition, not a fixed wait
	}
	first := time.Now()
	for _, s := range r.signals {
		select {
		case <-exited:
			return out.String(), time.Since(first), waitErr
		case <-time.After(time.Until(first.Add(s.at))):
		}
		if err := syscall.Kill(-cmd.Process.Pid, s.sig); err != nil && !strings.Contains(err.Error(), "no such process") {
			c.t.Fatal(err)
		}
	}
	<-exited
	return out.String(), time.Since(first), waitErr
}

// waitForTheServiceBack returns once no outage or downtime of srv is under way: the next apply
// refreshes first, and a refresh reports a service that is down rather than ride it out.
func waitForTheServiceBack(t *testing.T, srv *emulator.Server) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !serviceBack(srv) {
		if time.Now().After(deadline) {
			t.Fatal("the service was not back within 60 s")
		}
		time.Sleep(100 * time.Millisecond) // polling a condition, not a fixed wait
	}
}

func serviceBack(srv *emulator.Server) bool {
	for _, o := range srv.Outages() {
		if time.Now().Before(o.To) {
			return false
		}
	}
	downtimes, _ := srv.Downtimes()
	for _, d := range downtimes {
		if d.To.IsZero() {
			return false
		}
	}
	return true
}
