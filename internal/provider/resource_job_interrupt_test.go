package provider

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/svc-org/terraform-provider-svc/internal/emulator"
)

// Ctrl-C during an apply that waits for a job: the job keeps running on the service, its id is
// in state (tainted, so the next apply replaces it unless untainted), and the error says what
// happened and what to do. Driven through the real CLI, since only it turns SIGINT into a stop.
func TestCLI_interruptedApplyKeepsTheJob(t *testing.T) {
	skipUnlessAcc(t)
	t.Parallel()
	srv := newTestServer(t, emulator.Options{StepDuration: 50 * time.Millisecond})
	cli := newTerraformCLI(t, "")
	config := jobConfig(srv, slowWorkflowHCL, "")
	if err := os.WriteFile(filepath.Join(cli.dir, "main.tf"), []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}

	path := os.Getenv("TF_ACC_TERRAFORM_PATH")
	if path == "" {
		path = "terraform"
	}
	cmd := exec.Command(path, "apply", "-auto-approve", "-no-color")
	cmd.Dir, cmd.Env = cli.dir, cli.env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Interrupt once the job runs on the service.
	deadline := time.Now().Add(30 * time.Second)
	for !jobRunning(srv) {
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			t.Fatalf("the job never started running:\n%s", out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err == nil {
		t.Fatalf("the interrupted apply succeeded:\n%s", out.String())
	}
	for _, want := range []string{"Terraform was interrupted", "untaint"} {
		if !strings.Contains(strings.Join(strings.Fields(out.String()), " "), want) {
			t.Errorf("the apply's output does not say %q:\n%s", want, out.String())
		}
	}

	var state struct {
		Values struct {
			RootModule struct {
				Resources []struct {
					Address string         `json:"address"`
					Tainted bool           `json:"tainted"`
					Values  map[string]any `json:"values"`
				} `json:"resources"`
			} `json:"root_module"`
		} `json:"values"`
	}
	if err := json.Unmarshal([]byte(cli.run("show", "-json")), &state); err != nil {
		t.Fatal(err)
	}
	ids := srv.JobIDs()
	res := state.Values.RootModule.Resources
	if len(ids) != 1 || len(res) != 1 || res[0].Values["id"] != ids[0] || !res[0].Tainted {
		t.Fatalf("state %+v; want the one job %v, tainted", res, ids)
	}
	if st, _ := srv.JobStatus(ids[0]); st != "running" {
		t.Errorf("job status after the interrupt %q; it should run on", st)
	}
}

func jobRunning(srv *emulator.Server) bool {
	for _, id := range srv.JobIDs() {
		if st, _ := srv.JobStatus(id); st == "running" {
			return true
		}
	}
	return false
}
