package provider

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/svc-org/terraform-provider-svc/internal/emulator"
)

// TestSoakServiceFaults is the soak of what a long run meets besides a flaky request: svc_job
// resources and a svc_job_batch applied by the built plugin (so that a signal reaches it) under
// random faults (TestSoak's chaos), an outage of the whole service (503 with Retry-After) from
// 1 s after the first submission, SIGTERM to Terraform's process group once the outage is over
// and a seed-chosen share of the jobs exists, then, in the next apply, a restart (connections
// refused, the jobs running on) once that apply submits. The interrupted apply leaves every
// created job in state; the next apply, one, ends with every job created once and none lost,
// and a plan after it is empty. (A refresh is one read, not a wait: a service down while the
// next plan refreshes fails that plan, and nothing else; so the restart waits for the submits.)
//
// make test runs a short version (one seed, 3 s outage, 3 s restart); make soak (SVC_SOAK=1)
// three seeds at full size, with a 20 s outage and a 60 s restart.
func TestSoakServiceFaults(t *testing.T) {
	skipUnlessAcc(t)
	t.Parallel() // mostly idle, waiting out the faults; its servers are its own
	jobs, parallelism, seeds := soakScale(12, 100)
	rows, inFlight, outage, down := 40, 8, 3*time.Second, 3*time.Second
	if os.Getenv("SVC_SOAK") != "" {
		rows, inFlight, outage, down = 500, 32, 20*time.Second, 60*time.Second
	}
	total := jobs + rows
	pluginDir := buildProvider(t)
	for _, seed := range seeds {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			srv := newTestServer(t, emulator.Options{Workers: parallelism + inFlight, StepDuration: 100 * time.Millisecond}) // a job runs 1 s
			srv.SetChaos(&emulator.Chaos{Seed: seed, Rate: 0.2})
			srv.OutageAfterSubmission(time.Second, outage, 1)
			tf := newBinaryTerraform(t, pluginDir)
			tf.writeConfig(jobsAndBatchConfig(srv, jobs, rows, inFlight, 10))
			apply := []string{"apply", "-auto-approve", "-input=false", "-no-color", "-parallelism=" + strconv.Itoa(parallelism+1)}

			// SIGTERM once a seed-chosen share (a quarter to three quarters) of the jobs exist.
			termAt := total * int(25+seed*17%50) / 100
			start := time.Now()
			out, err := tf.terminateGroupOnce(func() bool {
				outages := srv.Outages()
				return srv.JobCount() >= termAt && len(outages) == 1 && time.Now().After(outages[0].To)
			}, apply...)
			if err == nil {
				t.Fatalf("the apply ended well despite SIGTERM:\n%s", tail(out, 40))
			}
			created := srv.JobIDs()
			assertEveryJobInState(t, created, allJobIDsInState(t, tf))

			done := tf.start(apply...)
			waitFor(t, func() bool { return srv.JobCount() > len(created) }, "the apply after SIGTERM submitted nothing")
			if err := srv.Restart(down); err != nil {
				t.Fatal(err)
			}
			applies := 1
			res := <-done
			if res.err != nil {
				t.Errorf("the apply after SIGTERM failed:\n%s", tail(res.out, 40))
				tf.run(apply...)
				applies++
			}
			defer func() {
				if t.Failed() && res.err == nil {
					t.Logf("the apply after SIGTERM:\n%s", tail(res.out, 60))
				}
			}()
			applyTime := time.Since(start)
			faults := srv.ChaosSummary()
			srv.SetChaos(nil) // as in TestSoak: the faults are for the applies under test
			ids := allJobIDsInState(t, tf)
			assertEveryJobInState(t, srv.JobIDs(), ids)
			soakPlanEmpty(t, tf, nil)
			outages := srv.Outages()
			downtimes, _ := srv.Downtimes()
			t.Logf("service faults soak seed=%d: SIGTERM at %d jobs; jobs created %d/%d, in state %d, applies after SIGTERM %d, %.1f s; outage answered %d requests, %d restart(s); faults: %s",
				seed, len(created), srv.JobCount(), total, len(ids), applies, applyTime.Seconds(), sumOutages(outages), len(downtimes), faults)
			if srv.JobCount() != total || len(ids) != total || applies != 1 {
				t.Fatalf("want %d jobs, each created once and in state, in one apply after SIGTERM; what has none:\n%s", total, withoutAJob(tf))
			}
			if faults == "" || sumOutages(outages) == 0 || len(downtimes) != 1 {
				t.Fatal("a fault did not strike during the applies: the soak proved nothing")
			}
			tf.run("destroy", "-auto-approve", "-input=false", "-no-color")
		})
	}
}

// allJobIDsInState returns every job id in state: each svc_job's, by address, and each row's of
// svc_job_batch.b, by row key. A tainted resource fails the test.
func allJobIDsInState(t *testing.T, tf *terraformCLI) map[string]string {
	t.Helper()
	ids := jobIDsInState(t, tf)
	if tf.stateResource(batchRes) == nil {
		return ids
	}
	rowIDs, _ := batchRowIDs(t, tf)
	for key, id := range rowIDs {
		ids[batchRes+"/"+key] = id
	}
	return ids
}

// withoutAJob describes each svc_job without a job id and each row of svc_job_batch.b that did
// not succeed, as state holds them: what a failure of the soak needs to be understood.
func withoutAJob(tf *terraformCLI) string {
	var b strings.Builder
	for _, r := range tf.stateResources() {
		if id, _ := r.Values["id"].(string); strings.HasPrefix(r.Address, "svc_job.") && id == "" {
			fmt.Fprintf(&b, "%s: status %v, idempotency_key %v, tainted %v\n", r.Address, r.Values["status"], r.Values["idempotency_key"], r.Tainted)
		}
		results, _ := r.Values["results"].(map[string]any)
		for key, v := range results {
			if row, _ := v.(map[string]any); row["status"] != "succeeded" {
				fmt.Fprintf(&b, "%s row %s: %v\n", r.Address, key, row)
			}
		}
	}
	return b.String()
}

func sumOutages(outages []emulator.OutageReport) int {
	total := 0
	for _, o := range outages {
		total += sum(o.PerSecond)
	}
	return total
}
