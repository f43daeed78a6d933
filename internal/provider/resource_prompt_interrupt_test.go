package provider

import (
	"testing"
	"time"

	"github.com/svc-org/terraform-provider-svc/internal/emulator"
)

// Ctrl-C while a v1 prompt runs, then `terraform apply`: the prompt stays in state untainted,
// and the next apply follows the same prompt by its id (v1 has no key: it is never resubmitted).
func TestCLI_interruptedPromptResumes(t *testing.T) {
	skipUnlessAcc(t)
	t.Parallel()
	srv := newTestServer(t, emulator.Options{Token: v1AccKey, StepDuration: 100 * time.Millisecond})
	cli := newTerraformCLI(t, "")
	config := promptConfig(srv, samplerWorkflowHCL(40), "") // about 4 s of sampling
	cli.writeConfig(config)
	cli.interruptApply(func() bool { return srv.Requests(emulator.OpV1Status) > 0 })
	if res := cli.stateResource("svc_prompt.test"); res == nil || res.Tainted {
		t.Fatalf("state %+v; want the prompt, not tainted", res)
	}
	cli.run("apply", "-auto-approve", "-no-color")
	if res := cli.stateResource("svc_prompt.test"); res.Values["status"] != "success" {
		t.Fatalf("prompt after the resumed apply: %+v", res.Values)
	}
	if n := srv.Requests(emulator.OpV1Prompt); n != 1 {
		t.Fatalf("%d prompt submissions reached the server, want 1", n)
	}
}
