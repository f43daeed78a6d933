package provider

import (
	"bytes"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
)

// These tests follow the README's "Running the reference server by hand": the built
// svc-emulator binary, started with the documented flags, and an example applied through the
// real CLI.

// TestAccEmulatorBinary_registryExample applies examples/registry against svc-emulator seeded
// with examples/registry/emulator-seed.json, with the tokens that seed names.
func TestAccEmulatorBinary_registryExample(t *testing.T) {
	skipUnlessAcc(t)
	requireCLIFeature(t, featureWriteOnly)
	// Not parallel: the provider runs in this process and reads its settings from its environment.
	base := startEmulatorBinary(t, "-seed", filepath.Join("..", "..", "examples", "registry", "emulator-seed.json"))
	t.Setenv("SVC_ENDPOINT", base)
	t.Setenv("SVC_REGISTRY_TOKEN", "dev-registry-token")
	cli := newTerraformCLI(t, filepath.Join("..", "..", "examples", "registry"))
	vars := []string{"-var", "publisher_id=acme", "-var", "repo_token=dev-repo-token"}

	cli.run("init", "-input=false", "-no-color")
	cli.run(append([]string{"apply", "-input=false", "-no-color", "-auto-approve"}, vars...)...)
	out := cli.run("output", "-no-color", "-json", "claimed_nodes")
	for _, node := range []string{"acme-upscaler", "acme-denoiser"} {
		if !strings.Contains(out, node) {
			t.Errorf("claimed_nodes = %s, want %s in it", out, node)
		}
		// The server holds the claim: claiming the node again is refused as already claimed.
		if status := claimNode(t, base, "acme", node, "dev-registry-token", "dev-repo-token"); status != http.StatusConflict {
			t.Errorf("claiming %s again: %d, want 409 (already claimed)", node, status)
		}
	}
	cli.run(append([]string{"destroy", "-input=false", "-no-color", "-auto-approve"}, vars...)...)
}

// TestAccEmulatorBinary_failingNodeExample applies examples/failing-node: the apply fails with
// the node, its message and the traceback's last line; the job stays in state, tainted.
func TestAccEmulatorBinary_failingNodeExample(t *testing.T) {
	skipUnlessAcc(t)
	t.Parallel()
	base := startEmulatorBinary(t)
	cli := newTerraformCLI(t, filepath.Join("..", "..", "examples", "failing-node"))
	vars := []string{"-var", "endpoint=" + base}

	cli.run("init", "-input=false", "-no-color")
	out, err := cli.try(append([]string{"apply", "-input=false", "-no-color", "-auto-approve"}, vars...)...)
	if err == nil {
		t.Fatalf("apply succeeded; want the RaiseError node to fail it:\n%s", out)
	}
	for _, want := range []string{
		`Node "3" \(RaiseError\) raised node_execution_error: CUDA out of memory \(simulated\)`,
		`Traceback \(last lines\):`,
		`\n\s*RuntimeError: CUDA out of memory \(simulated\)\n`,
		"the resource is tainted",
	} {
		if !regexp.MustCompile(wrapped(want)).MatchString(out) {
			t.Errorf("apply output lacks %q:\n%s", want, out)
		}
	}
	// Terraform says "is tainted, so must be replaced"; OpenTofu "is tainted, so it must be replaced".
	tainted := regexp.MustCompile(`svc_job\.fails is tainted, so (it )?must be replaced`)
	if plan, _ := cli.try(append([]string{"plan", "-input=false", "-no-color"}, vars...)...); !tainted.MatchString(plan) {
		t.Errorf("the failed job is not in state, tainted:\n%s", plan)
	}
	cli.run(append([]string{"destroy", "-input=false", "-no-color", "-auto-approve"}, vars...)...)
}

// startEmulatorBinary builds cmd/svc-emulator, starts it on a free port with args until the
// test ends, and returns the URL it announces. It must stop cleanly on SIGTERM.
func startEmulatorBinary(t *testing.T, args ...string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "svc-emulator")
	goBuild(t, "./cmd/svc-emulator", bin)
	cmd := exec.Command(bin, append([]string{"-listen", "127.0.0.1:0"}, args...)...)
	announced := &firstLineWriter{line: make(chan string, 1)}
	cmd.Stdout, cmd.Stderr = announced, os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		if err := <-exited; err != nil {
			t.Errorf("svc-emulator did not stop cleanly on SIGTERM: %v", err)
		}
	})
	select {
	case line := <-announced.line:
		base, found := strings.CutPrefix(line, "svc-emulator listening on ")
		if !found {
			t.Fatalf("svc-emulator announced %q", line)
		}
		return base
	case err := <-exited:
		exited <- err // for the cleanup
		t.Fatalf("svc-emulator exited before listening: %v", err)
		return ""
	}
}

// firstLineWriter hands the first line written to it to line and discards the rest.
type firstLineWriter struct {
	buf  []byte
	sent bool
	line chan string
}

func (w *firstLineWriter) Write(p []byte) (int, error) {
	if !w.sent {
		w.buf = append(w.buf, p...)
		if i := bytes.IndexByte(w.buf, '\n'); i >= 0 {
			w.sent = true
			w.line <- string(w.buf[:i])
		}
	}
	return len(p), nil
}

// claimNode posts a claim to the registry and returns the status.
func claimNode(t *testing.T, base, publisher, node, bearer, repoToken string) int {
	t.Helper()
	req, err := http.NewRequest("POST", base+"/publishers/"+publisher+"/nodes/"+node+"/claim-my-node",
		strings.NewReader(`{"REPO_TOKEN":"`+repoToken+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+bearer)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}
