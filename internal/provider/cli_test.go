package provider

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6/tf6server"
)

// terraformCLI runs the real Terraform CLI against this provider served in-process (the way
// terraform-plugin-testing does it, through TF_REATTACH_PROVIDERS). terraform-plugin-testing's
// state checks cannot read resources created with for_each, which the examples and the soak
// use, so those tests drive Terraform directly.
type terraformCLI struct {
	t   testing.TB
	dir string
	env []string
}

// newTerraformCLI copies the configuration directory src (if any) into a temporary working
// directory and starts the provider for it.
func newTerraformCLI(t *testing.T, src string) *terraformCLI {
	t.Helper()
	dir := t.TempDir()
	if src != "" {
		entries, err := os.ReadDir(src)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if e.IsDir() {
				continue
			}
			b, err := os.ReadFile(filepath.Join(src, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, e.Name()), b, 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	return &terraformCLI{t: t, dir: dir, env: append(os.Environ(),
		"TF_REATTACH_PROVIDERS="+serveProviderForCLI(t),
		"TF_IN_AUTOMATION=1", "CHECKPOINT_DISABLE=1", "TF_CLI_CONFIG_FILE=/dev/null",
		"TF_DATA_DIR="+filepath.Join(dir, ".terraform"),
	)}
}

// serveProviderForCLI serves the provider in this process until the test ends and returns the
// TF_REATTACH_PROVIDERS value pointing Terraform at it.
func serveProviderForCLI(t *testing.T) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	reattach := make(chan *plugin.ReattachConfig, 1)
	closed := make(chan struct{})
	go func() {
		_ = tf6server.Serve(providerAddress(), NewProtocol6Server("test"),
			tf6server.WithDebug(ctx, reattach, closed),
			tf6server.WithGoPluginLogger(hclog.New(&hclog.LoggerOptions{Output: io.Discard})),
			tf6server.WithoutLogStderrOverride(),
			tf6server.WithLoggingSink(t)) // provider logs follow TF_LOG / TF_ACC_LOG_PATH, as in resource.Test
	}()
	var cfg *plugin.ReattachConfig
	select {
	case cfg = <-reattach:
	case <-time.After(10 * time.Second):
		cancel()
		t.Fatal("the provider did not start")
	}
	t.Cleanup(func() { cancel(); <-closed })
	info, err := json.Marshal(map[string]any{providerAddress(): map[string]any{
		"Protocol": cfg.Protocol, "ProtocolVersion": cfg.ProtocolVersion, "Pid": cfg.Pid, "Test": cfg.Test,
		"Addr": map[string]string{"Network": cfg.Addr.Network(), "String": cfg.Addr.String()},
	}})
	if err != nil {
		t.Fatal(err)
	}
	return string(info)
}

// run runs terraform with args in the working directory and returns its combined output; a
// non-zero exit fails the test.
func (c *terraformCLI) run(args ...string) string {
	c.t.Helper()
	out, err := c.try(args...)
	if err != nil {
		c.t.Fatalf("terraform %v: %v\n%s", args, err, out)
	}
	return out
}

// try is run without failing the test.
func (c *terraformCLI) try(args ...string) (string, error) {
	cmd, out := c.command(args...)
	err := cmd.Run()
	return out.String(), err
}

// command prepares the CLI under test (cliPath) with args in the working directory; its
// combined output goes to the buffer.
func (c *terraformCLI) command(args ...string) (*exec.Cmd, *bytes.Buffer) {
	cmd := exec.Command(cliPath(), args...)
	cmd.Dir, cmd.Env = c.dir, c.env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	return cmd, &out
}

// writeConfig writes config as the working directory's main.tf.
func (c *terraformCLI) writeConfig(config string) {
	c.t.Helper()
	if err := os.WriteFile(filepath.Join(c.dir, "main.tf"), []byte(config), 0o600); err != nil {
		c.t.Fatal(err)
	}
}

// cliPath is the CLI the tests run: TF_ACC_TERRAFORM_PATH, else terraform on PATH.
func cliPath() string {
	if p := os.Getenv("TF_ACC_TERRAFORM_PATH"); p != "" {
		return p
	}
	return "terraform"
}

// providerAddress is the address the CLI gives source "svc-org/svc": its default registry host
// (registry.opentofu.org for OpenTofu, registry.terraform.io for Terraform) comes from
// TF_ACC_PROVIDER_HOST, as terraform-plugin-testing reads it.
func providerAddress() string {
	host := os.Getenv("TF_ACC_PROVIDER_HOST")
	if host == "" {
		host = "registry.terraform.io"
	}
	return host + "/svc-org/svc"
}

func skipUnlessAcc(t testing.TB) {
	if os.Getenv("TF_ACC") == "" {
		t.Skip("acceptance tests need TF_ACC=1")
	}
}
