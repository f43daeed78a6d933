package provider

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/svc-org/terraform-provider-svc/internal/emulator"
)

// The service goes away in the middle of an apply of 12 svc_job (all at once) and a 40-row
// svc_job_batch (8 rows in flight), from 1 s after the first submission: a gateway answers
// every request 503 with Retry-After for 20 s, or the service restarts and refuses every
// connection for 60 s, its jobs running on meanwhile. The create timeout (30 minutes) says to
// wait, so the apply rides it out: it exits 0 with no warning, every job was created once and
// succeeded, nothing is tainted, and the next plan is empty. The times are real (the
// provider's waits honour Retry-After and back off on the wall clock), and the test is mostly
// idle.
func TestCLI_serviceOutageIsRiddenOut(t *testing.T) {
	skipUnlessAcc(t)
	t.Parallel()
	const jobs, rows = 12, 40
	tests := []struct {
		name string
		arm  func(srv *emulator.Server)
		// happened fails the test unless the fault struck as armed, before the apply ended.
		happened func(t *testing.T, srv *emulator.Server, applyEnd time.Time)
	}{
		{
			name: "20 s of 503 with Retry-After",
			arm:  func(srv *emulator.Server) { srv.OutageAfterSubmission(time.Second, 20*time.Second, 2) },
			happened: func(t *testing.T, srv *emulator.Server, applyEnd time.Time) {
				outages := srv.Outages()
				if len(outages) != 1 || sum(outages[0].PerSecond) == 0 || applyEnd.Before(outages[0].To) {
					t.Fatalf("outages %+v, apply ended %s; want one that answered requests, before the apply ended", outages, applyEnd)
				}
				t.Logf("the outage answered %d requests in 20 s, per second: %v; the apply ended %.1f s after it", sum(outages[0].PerSecond),
					outages[0].PerSecond, applyEnd.Sub(outages[0].To).Seconds())
			},
		},
		{
			name: "60 s of refused connections",
			arm:  func(srv *emulator.Server) { srv.RestartAfterSubmission(time.Second, 60*time.Second) },
			happened: func(t *testing.T, srv *emulator.Server, applyEnd time.Time) {
				downtimes, err := srv.Downtimes()
				if err != nil || len(downtimes) != 1 || downtimes[0].To.Sub(downtimes[0].From) < 60*time.Second || applyEnd.Before(downtimes[0].To) {
					t.Fatalf("downtimes %+v (%v), apply ended %s; want 60 s down, over before the apply ended", downtimes, err, applyEnd)
				}
				t.Logf("the apply ended %.1f s after the service was back", applyEnd.Sub(downtimes[0].To).Seconds())
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := newTestServer(t, emulator.Options{Workers: jobs + 8, StepDuration: 100 * time.Millisecond}) // a job runs 2 s
			tt.arm(srv)
			cli := newTerraformCLI(t, "")
			cli.writeConfig(jobsAndBatchConfig(srv, jobs, rows, 8, 20))

			start := time.Now()
			out := cli.run("apply", "-auto-approve", "-no-color", fmt.Sprintf("-parallelism=%d", jobs+1))
			t.Logf("apply: %.1f s", time.Since(start).Seconds())
			tt.happened(t, srv, time.Now())
			if strings.Contains(out, "Warning") {
				t.Errorf("the apply warned:\n%s", out)
			}
			assertAllRanOnce(t, cli, srv, jobs, rows)
			if out, err := cli.try("plan", "-no-color", "-detailed-exitcode"); err != nil {
				t.Fatalf("the next plan is not empty (%v):\n%s", err, out)
			}
		})
	}
}

// assertAllRanOnce fails unless the server created jobs+rows jobs, each in state once (under a
// svc_job or a row of svc_job_batch.b), each succeeded, nothing tainted.
func assertAllRanOnce(t *testing.T, cli *terraformCLI, srv *emulator.Server, jobs, rows int) {
	t.Helper()
	ids := allJobIDsInState(t, cli)
	_, statuses := batchRowIDs(t, cli)
	if len(ids) != jobs+rows || statuses["succeeded"] != rows {
		t.Fatalf("%d ids in state, rows %v; want %d, every row succeeded", len(ids), statuses, jobs+rows)
	}
	assertEveryJobInState(t, srv.JobIDs(), ids)
	for _, id := range ids {
		if st, _ := srv.JobStatus(id); st != "succeeded" {
			t.Fatalf("job %s is %s; want succeeded", id, st)
		}
	}
	if c := srv.Requests(emulator.OpCancelJob); c != 0 {
		t.Fatalf("%d cancels; want none", c)
	}
}

// During an outage, a batch of 1,000 rows with 64 in flight sends a handful of requests per
// second, not 64 waits' worth, in every second of it, the first included: its waits learn
// together that the service is down (after one failure a single scout goes at a time, after
// three one probe at a time finds the service back), and its requests leave one by one, a few
// at most unanswered (two when a burst begins, as the rows' first reads do), so that few are
// under way when the outage begins, however slowly answers come back on a loaded machine.
// Counted at the server, per second of the outage, on the friendly and the strict server (whose
// reads of unfinished jobs ask Retry-After), nearby and 50 ms away. make test runs a 20 s outage;
// SVC_SOAK=1 (make soak) the full 60 s. The provider is the built plugin, as users run it.
func TestCLI_batchOutageRequestRate(t *testing.T) {
	skipUnlessAcc(t)
	t.Parallel()
	tests := []struct {
		name    string
		latency time.Duration // before the server sees each request
	}{
		{name: "nearby"},
		{name: "50 ms away", latency: 50 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			assertBatchOutageRequestRate(t, tt.latency)
		})
	}
}

// assertBatchOutageRequestRate applies a batch of 1,000 rows, 64 in flight, through an outage
// beginning 1 s after the first submission, against a server latency away, and fails unless every
// second of the outage met at most 5 requests and every row succeeded once.
func assertBatchOutageRequestRate(t *testing.T, latency time.Duration) {
	const rows, inFlight, maxPerSecond = 1000, 64, 5
	outage := 20 * time.Second
	if os.Getenv("SVC_SOAK") != "" {
		outage = 60 * time.Second
	}
	srv := newTestServer(t, emulator.Options{Workers: inFlight, StepDuration: 100 * time.Millisecond, Latency: latency}) // a job runs 3 s
	srv.OutageAfterSubmission(time.Second, outage, 2)
	cli := newBinaryTerraform(t, buildProvider(t))
	cli.writeConfig(batchConfig(srv, batchSamplerTemplate(30),
		fmt.Sprintf(`{ for i in range(%d) : "r${i}" => { "2" = { seed = i } } }`, rows), fmt.Sprintf("max_in_flight = %d", inFlight)))

	done := cli.start("apply", "-auto-approve", "-no-color")
	// Once the outage is over, the rows left run at once: the rate is what is measured here.
	waitFor(t, func() bool { return len(srv.Outages()) == 1 }, "nothing was submitted")
	end := srv.Outages()[0].To
	for time.Now().Before(end) {
		select {
		case res := <-done:
			t.Fatalf("the apply ended during the outage (%v):\n%s", res.err, res.out)
		case <-time.After(time.Until(end)):
		}
	}
	srv.CompleteJobs()
	res := <-done
	if res.err != nil {
		t.Fatalf("apply: %v\n%s", res.err, res.out)
	}

	perSecond := srv.Outages()[0].PerSecond
	t.Logf("%d rows, %d in flight, %s outage: %d requests answered 503, per second: %v", rows, inFlight, outage, sum(perSecond), perSecond)
	if len(perSecond) == 0 {
		t.Errorf("the outage answered no request")
	}
	for sec, n := range perSecond {
		if n > maxPerSecond {
			t.Errorf("second %d of the outage: %d requests; want at most %d", sec, n, maxPerSecond)
		}
	}
	ids, statuses := batchRowIDs(t, cli)
	if jobs := srv.JobCount(); jobs != rows || len(ids) != rows || statuses["succeeded"] != rows {
		t.Fatalf("%d jobs, %d ids in state, rows %v; want %d of each, every row succeeded", jobs, len(ids), statuses, rows)
	}
	assertEveryJobInState(t, srv.JobIDs(), ids)
}

func sum(ns []int) int {
	total := 0
	for _, n := range ns {
		total += n
	}
	return total
}

// jobsAndBatchConfig is jobs svc_job and a batch of rows (inFlight at a time), every job of the
// given sampler steps, against srv.
func jobsAndBatchConfig(srv *emulator.Server, jobs, rows, inFlight, steps int) string {
	return providerConfig(srv, "") + fmt.Sprintf(`
resource "svc_job" "test" {
  count    = %d
  workflow = %s
}

resource "svc_job_batch" "b" {
  workflow      = %s
  rows          = { for i in range(%d) : "r${i}" => { "2" = { seed = i } } }
  max_in_flight = %d
}
`, jobs, samplerWorkflowHCL(steps), batchSamplerTemplate(steps), rows, inFlight)
}

// A 10 s create timeout inside a 30 s outage that began once the job was created: the error
// names the failing answers (the 503s) beside the timeout, the job is kept in state (tainted,
// as after any create timeout), and the untaint-and-apply the error suggests waits for that
// same job once the service is back, submitting nothing.
func TestCLI_createTimeoutInAnOutageNamesIt(t *testing.T) {
	skipUnlessAcc(t)
	t.Parallel()
	srv := newTestServer(t, emulator.Options{StepDuration: 250 * time.Millisecond}) // the job runs 5 s
	srv.OutageAfterSubmission(time.Second, 30*time.Second, 2)
	cli := newTerraformCLI(t, "")
	cli.writeConfig(providerConfig(srv, "") + fmt.Sprintf(`
resource "svc_job" "test" {
  workflow = %s
  timeouts = { create = "10s" }
}
`, samplerWorkflowHCL(20)))

	out, err := cli.try("apply", "-auto-approve", "-no-color")
	if err == nil {
		t.Fatalf("the apply ended well inside the outage:\n%s", out)
	}
	for _, want := range []string{"create timeout (10s) passed with the service failing", "503", "terraform untaint"} {
		if !strings.Contains(strings.Join(strings.Fields(out), " "), want) {
			t.Errorf("the error does not say %q:\n%s", want, out)
		}
	}
	res := cli.stateResource("svc_job.test")
	if res == nil || !res.Tainted || res.Values["id"] == "" {
		t.Fatalf("svc_job.test in state: %+v; want its job, tainted", res)
	}
	waitForTheServiceBack(t, srv)
	cli.run("untaint", "svc_job.test")
	cli.run("apply", "-auto-approve", "-no-color")
	if jobs := srv.JobCount(); jobs != 1 {
		t.Fatalf("%d jobs on the server; want the one, waited for again", jobs)
	}
	if res := cli.stateResource("svc_job.test"); res == nil || res.Tainted || res.Values["status"] != "succeeded" {
		t.Fatalf("svc_job.test in state: %+v; want it succeeded, untainted", res)
	}
}
