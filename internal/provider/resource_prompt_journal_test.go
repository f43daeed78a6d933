package provider

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/svc-org/terraform-provider-svc/internal/emulator"
)

// SIGKILL to Terraform's process group while three identical v1 prompts run: none reached state
// (the v1 interface takes no idempotency key), and the next apply follows each journaled prompt
// by its id instead of submitting the workflow again, so three prompts ran in all, not six, and
// each instance holds its own.
func TestCLI_sigkillMidPromptsFollowsTheJournaledPrompts(t *testing.T) {
	skipUnlessAcc(t)
	t.Parallel()
	srv := newTestServer(t, emulator.Options{Token: v1AccKey, StepDuration: 100 * time.Millisecond})
	tf := newBinaryTerraform(t, buildProvider(t))
	withoutJournalEnv(tf)
	tf.writeConfig(strings.Replace(promptConfig(srv, samplerWorkflowHCL(30), ""), `resource "svc_prompt" "test" {`,
		`resource "svc_prompt" "test" {
  count = 3`, 1))
	journal := filepath.Join(tf.dir, ".terraform", "svc-journal", "journal.jsonl")
	args := []string{"apply", "-auto-approve", "-input=false", "-no-color", "-parallelism=3"}
	ready := func() bool {
		b, _ := os.ReadFile(journal)
		return strings.Count(string(b), `"kind":"svc_prompt"`) >= 3
	}
	if out, err := tf.signalGroupOnce(syscall.SIGKILL, ready, args...); err == nil {
		t.Fatalf("the apply ended well despite SIGKILL:\n%s", out)
	}
	tf.setAsideTornState(t)
	out := tf.run(args...)
	if n := srv.Requests(emulator.OpV1Prompt); n != 3 {
		t.Fatalf("%d prompt submissions reached the server; want 3, none run twice:\n%s", n, out)
	}
	if n := strings.Count(oneLine(out), "Prompt adopted from the journal"); n < 1 {
		t.Errorf("no adoption reported:\n%s", out)
	}
	seen := map[string]bool{}
	for _, r := range tf.stateResources() {
		id, _ := r.Values["id"].(string)
		if r.Values["status"] != "success" || seen[id] {
			t.Errorf("%s: %v, id %q; want success, each its own prompt", r.Address, r.Values["status"], id)
		}
		seen[id] = true
	}
	if len(seen) != 3 {
		t.Fatalf("%d prompts in state; want 3", len(seen))
	}
}
