package provider

import (
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/svc-org/terraform-provider-svc/internal/emulator"
)

// A v2 key is single-use: the service rejects any later request with it (422
// idempotency_key_reuse) and never runs it again. So a submission whose answer was lost is
// resent under the same key, never a new one: if the first never arrived the job is created
// now, once; if it did, the 422 says so, and only then is the outcome unknown, reported with
// its key.
var lostSubmissions = []struct {
	name  string
	fault emulator.Fault
	// created: the first submission created its job before its answer was lost.
	created bool
}{
	{name: "503 before the service saw it", fault: emulator.Fault{Status: 503, Body: `{"error":{"code":"upstream_error","message":"upstream unavailable"}}`}},
	{name: "proxy HTML 502 before the service saw it", fault: emulator.Fault{Status: 502, Body: "<html><body><h1>502 Bad Gateway</h1></body></html>"}},
	{name: "connection reset before the service saw it", fault: emulator.Fault{Drop: true}},
	{name: "503 after the job was created", fault: emulator.Fault{AfterHandling: true, Status: 503, Body: `{"error":{"code":"upstream_error","message":"upstream timed out"}}`}, created: true},
	{name: "connection reset after the job was created", fault: emulator.Fault{AfterHandling: true, Drop: true}, created: true},
}

func TestAccJob_lostSubmissionResentUnderItsKey(t *testing.T) {
	t.Parallel()
	const key = "6a0b7c1e-0000-4000-8000-0000000000aa"
	for _, lost := range lostSubmissions {
		t.Run(lost.name, func(t *testing.T) {
			t.Parallel()
			srv := newTestServer(t, emulator.Options{})
			f := lost.fault
			f.Op, f.Nth = emulator.OpSubmitJob, 1
			srv.Inject(f)
			step := resource.TestStep{
				Config: jobConfig(srv, imageWorkflowHCL(1), `idempotency_key = "`+key+`"`),
				Check:  resource.TestCheckResourceAttr("svc_job.test", "status", "succeeded"),
			}
			if lost.created {
				step.Check = nil
				step.ExpectError = regexp.MustCompile(`(?s)may\s+exist.*idempotency_key_reuse.*` + key)
			}
			resource.Test(t, resource.TestCase{ProtoV6ProviderFactories: testAccProtoV6ProviderFactories, Steps: []resource.TestStep{step}})
			if keys, jobs := srv.SubmitKeys(), srv.JobCount(); len(keys) != 2 || keys[0] != key || keys[1] != key || jobs != 1 {
				t.Fatalf("submissions under keys %q, %d jobs; want the key %s twice and one job", keys, jobs, key)
			}
		})
	}
}

// The same for a row of svc_job_batch: the row whose answer was lost is resent under its own
// key; it succeeds, or, when the 422 says the first arrived, stays unknown with its key named
// (not resent, the next plan empty), and every other row runs once.
func TestAccJobBatch_lostSubmissionResentUnderItsKey(t *testing.T) {
	t.Parallel()
	for _, lost := range lostSubmissions {
		t.Run(lost.name, func(t *testing.T) {
			t.Parallel()
			srv := newTestServer(t, emulator.Options{})
			f := lost.fault
			f.Op, f.Nth = emulator.OpSubmitJob, 2
			srv.Inject(f)
			config := batchConfig(srv, batchTextTemplate, batchRowsHCL(3, ""), "max_in_flight = 1")
			check := resource.ComposeAggregateTestCheckFunc(
				resource.TestCheckResourceAttr(batchRes, "succeeded", "3"),
				resource.TestCheckResourceAttr(batchRes, "failed", "0"),
			)
			if lost.created {
				check = resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr(batchRes, "results.r1.status", "unknown"),
					resource.TestMatchResourceAttr(batchRes, "results.r1.error", regexp.MustCompile(`idempotency_key_reuse.*\[Idempotency-Key [0-9a-f-]{36}\]$`)),
					resource.TestCheckResourceAttr(batchRes, "succeeded", "2"),
				)
			}
			resource.Test(t, resource.TestCase{
				ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
				Steps:                    []resource.TestStep{{Config: config, Check: check}, {Config: config, PlanOnly: true}},
			})
			keys := srv.SubmitKeys()
			if len(keys) != 4 || keys[1] != keys[2] || keys[0] == keys[1] || keys[3] == keys[1] || keys[0] == keys[3] || srv.JobCount() != 3 {
				t.Fatalf("submissions under keys %q, %d jobs; want the second key twice, the others once, and 3 jobs", keys, srv.JobCount())
			}
		})
	}
}
