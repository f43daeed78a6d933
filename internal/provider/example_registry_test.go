package provider

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/hashicorp/go-plugin"
	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6/tf6server"
)

// TestAccExample_publishAndTranslateApply applies and destroys examples/registry/main.tf with the
// Terraform CLI, exactly as a user would (endpoint and registry token from the environment), the
// provider served in-process. terraform-plugin-testing cannot read back state holding for_each
// instances, hence the CLI.
func TestAccExample_publishAndTranslateApply(t *testing.T) {
	tfPath := os.Getenv("TF_ACC_TERRAFORM_PATH")
	if os.Getenv("TF_ACC") == "" || tfPath == "" {
		t.Skip("acceptance test: set TF_ACC=1 and have terraform on PATH")
	}
	// Not parallel: the provider runs in this process and reads its settings from its environment.
	srv := newRegistryServer(t)
	srv.AddNode("acme-upscaler", "alice")
	srv.AddNode("acme-denoiser", "alice")

	dir := t.TempDir()
	example, err := os.ReadFile("../../examples/registry/main.tf")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), example, 0o600); err != nil {
		t.Fatal(err)
	}

	t.Setenv("SVC_ENDPOINT", srv.URL())
	t.Setenv("SVC_REGISTRY_TOKEN", testRegistryToken)
	env := append(os.Environ(),
		"TF_REATTACH_PROVIDERS="+serveProviderInProcess(t),
		"CHECKPOINT_DISABLE=1",
		"TF_IN_AUTOMATION=1",
	)
	tf := func(args ...string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, tfPath, args...)
		cmd.Dir, cmd.Env = dir, env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("terraform %s: %v\n%s", args[0], err, out)
		}
	}
	vars := []string{"-var", "publisher_id=acme", "-var", "repo_token=" + testRepoToken}

	tf("init", "-input=false", "-no-color")
	tf(append([]string{"apply", "-input=false", "-no-color", "-auto-approve"}, vars...)...)
	for node, want := range map[string]string{
		"acme-upscaler": `{"de":{"title":"Hochskalierer"},"fr":{"description":"Agrandit une image sans perte de détails.","title":"Agrandisseur"}}`,
		"acme-denoiser": `{"fr":{"title":"Débruiteur"},"ja":{"title":"ノイズ除去"}}`,
	} {
		if got := srv.NodePublisher(node); got != "acme" {
			t.Errorf("%s claimed by %q, want acme", node, got)
		}
		if got := string(srv.NodeTranslations(node)); got != want {
			t.Errorf("translations of %s = %s, want %s", node, got, want)
		}
	}
	tf(append([]string{"destroy", "-input=false", "-no-color", "-auto-approve"}, vars...)...)
	if srv.NodePublisher("acme-upscaler") != "acme" || srv.Requests("registry.delete") != 0 {
		t.Error("destroy must keep the nodes claimed (delete_node_on_destroy is false in the example)")
	}
}

// serveProviderInProcess serves the provider in debug mode for the test's lifetime and returns
// the TF_REATTACH_PROVIDERS value that points Terraform at it.
func serveProviderInProcess(t *testing.T) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	reattach := make(chan *plugin.ReattachConfig, 1)
	closed := make(chan struct{})
	const addr = "registry.terraform.io/svc-org/svc"
	go func() {
		_ = tf6server.Serve(addr, providerserver.NewProtocol6(New("test")()), tf6server.WithDebug(ctx, reattach, closed),
			tf6server.WithLoggingSink(t)) // provider logs follow TF_LOG / TF_ACC_LOG_PATH, as in the other tests
	}()
	var cfg *plugin.ReattachConfig
	select {
	case cfg = <-reattach:
	case <-time.After(10 * time.Second):
		cancel()
		t.Fatal("the provider did not start")
	}
	t.Cleanup(func() {
		cancel()
		<-closed
	})
	b, err := json.Marshal(map[string]any{addr: map[string]any{
		"Protocol":        cfg.Protocol,
		"ProtocolVersion": cfg.ProtocolVersion,
		"Pid":             cfg.Pid,
		"Test":            true,
		"Addr":            map[string]string{"Network": cfg.Addr.Network(), "String": cfg.Addr.String()},
	}})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
