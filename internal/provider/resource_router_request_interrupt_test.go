package provider

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/svc-org/terraform-provider-svc/internal/emulator"
)

// Ctrl-C while a model request runs, then `terraform apply`: the request stays in state
// untainted with its key, and the next apply waits for the same run (queued: by its id; sync:
// the same key and input, which the router answers from the original run). The model runs once.
func TestCLI_interruptedModelRequestResumes(t *testing.T) {
	skipUnlessAcc(t)
	t.Parallel()
	for _, tt := range []struct{ mode, sentOp string }{
		{mode: "queued", sentOp: emulator.OpRequestStatus},
		{mode: "sync", sentOp: emulator.OpInvokeModel},
	} {
		t.Run(tt.mode, func(t *testing.T) {
			t.Parallel()
			srv := newTestServer(t, emulator.Options{Router: emulator.RouterOptions{SlowDuration: 4 * time.Second}})
			cli := newTerraformCLI(t, "")
			config := routerRequestConfig(srv, 2, fmt.Sprintf(`
  model = "demo/slow"
  input = jsonencode({ prompt = "x" })
  mode  = %q
`, tt.mode))
			cli.writeConfig(config)
			cli.interruptApply(func() bool { return srv.Requests(tt.sentOp) > 0 })
			if res := cli.stateResource(routerRes); res == nil || res.Tainted || res.Values["idempotency_key"] == nil {
				t.Fatalf("state %+v; want the request, not tainted, with its key", res)
			}
			cli.run("apply", "-auto-approve", "-no-color")
			res := cli.stateResource(routerRes)
			if res.Values["status"] != "COMPLETED" || res.Values["result_sha256"] == nil {
				t.Fatalf("request after the resumed apply: %+v", res.Values)
			}
			if n := srv.RouterRuns(emulator.ModelSlow); n != 1 {
				t.Fatalf("the model ran %d times, want 1", n)
			}
		})
	}
}

// Ctrl-C while a queued request's submission is unanswered (the router holds its answer): the
// stop ends at once (the submission gets 2 s for its answer, no more), the request stays in
// state untainted under its key, and the next apply resends that same key and waits for the
// run. The model runs once.
func TestCLI_unansweredModelRequestIsResentUnderItsKey(t *testing.T) {
	skipUnlessAcc(t)
	t.Parallel()
	srv := newTestServer(t, emulator.Options{})
	srv.Inject(emulator.Fault{Op: emulator.OpSubmitRequest, Nth: 1, Delay: time.Minute})
	cli := newTerraformCLI(t, "")
	cli.writeConfig(routerRequestConfig(srv, 2, `
  model = "demo/echo"
  input = jsonencode({ prompt = "x" })
  mode  = "queued"
`))
	start := time.Now()
	cli.interruptApply(func() bool { return srv.Requests(emulator.OpSubmitRequest) > 0 })
	if took := time.Since(start); took > 20*time.Second {
		t.Errorf("the interrupted apply took %s; the held submission kept it", took)
	}
	res := cli.stateResource(routerRes)
	if res == nil || res.Tainted || res.Values["idempotency_key"] == nil || !strings.HasPrefix(fmt.Sprint(res.Values["id"]), "unanswered-") {
		t.Fatalf("state %+v; want the request kept by its key, not tainted", res)
	}
	key := res.Values["idempotency_key"]
	cli.run("apply", "-auto-approve", "-no-color")
	res = cli.stateResource(routerRes)
	if res.Values["status"] != "COMPLETED" || res.Values["idempotency_key"] != key || strings.HasPrefix(fmt.Sprint(res.Values["id"]), "unanswered-") {
		t.Fatalf("request after the next apply: %+v; want it completed under key %v", res.Values, key)
	}
	if n := srv.RouterRuns(emulator.ModelEcho); n != 1 {
		t.Fatalf("the model ran %d times, want 1", n)
	}
}
