package provider

import (
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/svc-org/terraform-provider-svc/internal/emulator"
)

// SIGKILL to Terraform's process group while three identical model requests run: none reached
// state, and the next apply resends each journaled key (the router answers from the run it
// started), so the model runs three times in all, not six.
func TestCLI_sigkillMidModelRequestsRunsEachOnce(t *testing.T) {
	skipUnlessAcc(t)
	t.Parallel()
	pluginDir := buildProvider(t)
	for _, tt := range []struct {
		mode  string
		ready func(srv *emulator.Server, journal string) bool
	}{
		{mode: "queued", ready: func(_ *emulator.Server, journal string) bool { return journaledIDs(journal) >= 3 }},
		{mode: "sync", ready: func(srv *emulator.Server, _ string) bool { return srv.Requests(emulator.OpInvokeModel) >= 3 }},
	} {
		t.Run(tt.mode, func(t *testing.T) {
			t.Parallel()
			srv := newTestServer(t, emulator.Options{Router: emulator.RouterOptions{SlowDuration: 3 * time.Second}})
			tf := newBinaryTerraform(t, pluginDir)
			withoutJournalEnv(tf)
			tf.writeConfig(routerConfig(srv, 2, fmt.Sprintf(`
resource "svc_router_request" "test" {
  count = 3
  model = "demo/slow"
  input = jsonencode({ prompt = "x" })
  mode  = %q
}
`, tt.mode)))
			journal := filepath.Join(tf.dir, ".terraform", "svc-journal")
			args := []string{"apply", "-auto-approve", "-input=false", "-no-color"}
			if out, err := tf.signalGroupOnce(syscall.SIGKILL, func() bool { return tt.ready(srv, journal) }, args...); err == nil {
				t.Fatalf("the apply ended well despite SIGKILL:\n%s", out)
			}
			tf.setAsideTornState(t)
			out := tf.run(args...)
			if n := srv.RouterRuns(emulator.ModelSlow); n != 3 {
				t.Fatalf("the model ran %d times; want 3:\n%s", n, out)
			}
			seen := map[string]bool{}
			for _, r := range tf.stateResources() {
				if r.Values["status"] != "COMPLETED" || seen[r.Values["id"].(string)] {
					t.Errorf("%s: %v, id %v; want COMPLETED, each its own request", r.Address, r.Values["status"], r.Values["id"])
				}
				seen[r.Values["id"].(string)] = true
			}
			if len(seen) != 3 {
				t.Fatalf("%d requests in state; want 3", len(seen))
			}
			if !strings.Contains(oneLine(out), "adopted from the journal") {
				t.Errorf("the second apply did not say it adopted the requests:\n%s", out)
			}
		})
	}
}
