package provider

import (
	"regexp"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/svc-org/terraform-provider-svc/internal/emulator"
)

// lostAnswers are the ways a response is lost after the service did the work.
var lostAnswers = []struct {
	name  string
	fault emulator.Fault
	// timeout makes the provider give up before the answer comes.
	timeout bool
}{
	{name: "500 after the work was accepted", fault: emulator.Fault{Status: 500, Body: `{"detail":"upstream hiccup"}`}},
	{name: "proxy HTML 502 after the work was accepted", fault: emulator.Fault{Status: 502, Body: "<html><body><h1>502 Bad Gateway</h1></body></html>"}},
	{name: "connection reset after the work was accepted", fault: emulator.Fault{Drop: true}},
	{name: "no answer before the timeout", fault: emulator.Fault{Delay: 2 * time.Second, Status: 500}, timeout: true},
}

// Router calls carry a replaying key: after a lost answer the provider resends the same key and
// body and collects the one run; when it runs out of time it names the key to reuse.
func TestAccRouterRequest_unknownOutcomes(t *testing.T) {
	t.Parallel()
	modes := []struct {
		mode string
		op   string
	}{{"queued", emulator.OpSubmitRequest}, {"sync", emulator.OpInvokeModel}}
	for _, m := range modes {
		for _, lost := range lostAnswers {
			t.Run(m.mode+"/"+lost.name, func(t *testing.T) {
				t.Parallel()
				srv := newTestServer(t, emulator.Options{})
				f := lost.fault
				f.Op, f.Nth, f.AfterHandling = m.op, 1, true
				srv.Inject(f)
				body := `
  model = "demo/echo"
  mode  = "` + m.mode + `"
  input = jsonencode({ prompt = "once only" })
`
				step := resource.TestStep{
					Config: routerRequestConfig(srv, 3, body),
					Check:  resource.TestCheckResourceAttr(routerRes, "status", "COMPLETED"),
				}
				if lost.timeout {
					step.Config = routerRequestConfig(srv, 3, body+`  timeouts = { create = "1s" }
`)
					step.Check = nil
					step.ExpectError = regexp.MustCompile(`(?s)Idempotency-Key.*[0-9a-f-]{36}`)
				}
				resource.Test(t, resource.TestCase{ProtoV6ProviderFactories: testAccProtoV6ProviderFactories, Steps: []resource.TestStep{step}})
				if n := srv.RouterRuns(emulator.ModelEcho); n != 1 {
					t.Fatalf("the model ran %d times, want exactly 1", n)
				}
			})
		}
	}
}

// A v1 prompt has no idempotency key: after a lost answer it is never resubmitted, and the
// error says the prompt may be running.
func TestAccPrompt_unknownOutcomes(t *testing.T) {
	t.Parallel()
	for _, lost := range lostAnswers {
		t.Run(lost.name, func(t *testing.T) {
			t.Parallel()
			srv := newTestServer(t, emulator.Options{Token: v1AccKey})
			f := lost.fault
			f.Op, f.Nth, f.AfterHandling = emulator.OpV1Prompt, 1, true
			srv.Inject(f)
			extra := ""
			if lost.timeout {
				extra = `timeouts = { create = "1s" }`
			}
			resource.Test(t, resource.TestCase{
				ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
				Steps: []resource.TestStep{{
					Config:      promptConfig(srv, imageWorkflowHCL(1), extra),
					ExpectError: regexp.MustCompile(`(?s)may\s+or\s+may\s+not\s+be\s+running.*does\s+not\s+resubmit`),
				}},
			})
			if n, jobs := srv.Requests(emulator.OpV1Prompt), srv.JobCount(); n != 1 || jobs != 1 {
				t.Fatalf("%d submissions and %d prompts on the server, want exactly 1 of each", n, jobs)
			}
		})
	}
}
