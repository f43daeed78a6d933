package provider

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/svc-org/terraform-provider-svc/internal/emulator"
)

// testAccProtoV6ProviderFactories runs the provider in-process for acceptance tests, behind the
// same layers as the plugin binary. Each server has its own provider instance, as each plugin
// process has: the layers read the settings that instance was configured with.
var testAccProtoV6ProviderFactories = map[string]func() (tfprotov6.ProviderServer, error){
	"svc": func() (tfprotov6.ProviderServer, error) { return protocol6Server("test", time.Now)(), nil },
}

func TestMain(m *testing.M) {
	// terraform-plugin-testing downloads Terraform unless told where it is; use the one on PATH.
	if os.Getenv("TF_ACC_TERRAFORM_PATH") == "" {
		if p, err := exec.LookPath("terraform"); err == nil {
			_ = os.Setenv("TF_ACC_TERRAFORM_PATH", p)
		}
	}
	if os.Getenv("TF_ACC_PROVIDER_NAMESPACE") == "" {
		_ = os.Setenv("TF_ACC_PROVIDER_NAMESPACE", "svc-org")
	}
	// The tests share one process and one working directory, where the default journal of
	// submissions would be one for all of them: a test's entries adoptable by another's identical
	// workflow. The journal is off unless a test names one (the journal's tests do).
	if _, set := os.LookupEnv(journalEnv); !set {
		_ = os.Setenv(journalEnv, "")
	}
	code := m.Run()
	if sharedPlugin.dir != "" {
		_ = os.RemoveAll(sharedPlugin.dir)
	}
	os.Exit(code)
}

// testServerModeEnv names the preset of the reference servers newTestServer starts for tests
// that pin none: "strict" (make test-strict) runs the suite against a server as little generous
// as the contract allows; empty or "generous" against the friendly one.
const testServerModeEnv = "SVC_EMULATOR_MODE"

// newTestServer starts a reference server for one test and stops it when the test ends. A test
// that sets opts.Mode pins it; otherwise the mode comes from SVC_EMULATOR_MODE.
func newTestServer(t *testing.T, opts emulator.Options) *emulator.Server {
	t.Helper()
	if opts.Mode == "" {
		opts.Mode = testServerMode(t)
	}
	srv := emulator.New(opts)
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	return srv
}

// New returns a constructor of the provider, as the framework's own server
// (providerserver.NewProtocol6) takes it: the tests hold the plugin's layers (NewProtocol6Server,
// which main serves) to it.
func New(version string) func() provider.Provider {
	return newWithClock(version, time.Now)
}

// newWithClock is New with the clock the provider compares expiry times with (a job's
// expires_at, for one); tests move it forward together with the reference server's clock.
func newWithClock(version string, now func() time.Time) func() provider.Provider {
	return func() provider.Provider { return newSvcProvider(version, now) }
}

// testServerMode is the mode SVC_EMULATOR_MODE names (generous when unset).
func testServerMode(t testing.TB) emulator.Mode {
	t.Helper()
	mode, err := parseTestServerMode(os.Getenv(testServerModeEnv))
	if err != nil {
		t.Fatalf("%s: %v", testServerModeEnv, err)
	}
	return mode
}

// parseTestServerMode reads a mode's name; the empty string is emulator.ModeGenerous.
func parseTestServerMode(name string) (emulator.Mode, error) {
	switch emulator.Mode(name) {
	case "", emulator.ModeGenerous:
		return emulator.ModeGenerous, nil
	case emulator.ModeStrict:
		return emulator.ModeStrict, nil
	}
	return "", fmt.Errorf("unknown emulator mode %q (want %q or %q)", name, emulator.ModeGenerous, emulator.ModeStrict)
}

func TestParseTestServerMode(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		want    emulator.Mode
		wantErr bool
	}{
		{name: "", want: emulator.ModeGenerous},
		{name: "generous", want: emulator.ModeGenerous},
		{name: "strict", want: emulator.ModeStrict},
		{name: "Strict", wantErr: true},
	} {
		got, err := parseTestServerMode(tc.name)
		if (err != nil) != tc.wantErr || got != tc.want {
			t.Errorf("parseTestServerMode(%q) = %q, %v; want %q (error: %v)", tc.name, got, err, tc.want, tc.wantErr)
		}
	}
}

// providerHCL is the one provider block of the acceptance tests: the terraform block, then the
// provider pointing at endpoint with maxRetries retries; each setting is one more line of the
// provider block, such as `api_key = "k"`.
func providerHCL(endpoint string, maxRetries int, settings ...string) string {
	return fmt.Sprintf(`
terraform {
  required_providers {
    svc = { source = "svc-org/svc" }
  }
}

provider "svc" {
  endpoint    = %q
  max_retries = %d
  %s
}
`, endpoint, maxRetries, strings.Join(settings, "\n  "))
}

// providerConfig is the provider block pointing at srv, with quick retries.
func providerConfig(srv *emulator.Server, extra string) string {
	return providerHCL(srv.URL(), 2, extra)
}

// imageWorkflowHCL is an API-format workflow: an empty image, inverted, saved batch times.
func imageWorkflowHCL(batch int) string {
	return fmt.Sprintf(`jsonencode({
    "1" = { class_type = "EmptyImage", inputs = { width = 8, height = 8, batch_size = %d, color = 16711680 } }
    "2" = { class_type = "ImageInvert", inputs = { image = ["1", 0] } }
    "3" = { class_type = "SaveImage", inputs = { images = ["2", 0], filename_prefix = "acc" } }
  })`, batch)
}

// samplerWorkflowHCL is an image through a sampler of the given steps: with the server's
// StepDuration it sets how long the job runs.
func samplerWorkflowHCL(steps int) string {
	return fmt.Sprintf(`jsonencode({
    "1" = { class_type = "EmptyImage", inputs = { width = 8, height = 8, batch_size = 1, color = 0 } }
    "2" = { class_type = "ImageNoiseSampler", inputs = { image = ["1", 0], seed = 1, steps = %d, denoise = 1.0 } }
    "3" = { class_type = "SaveImage", inputs = { images = ["2", 0], filename_prefix = "sampled" } }
  })`, steps)
}

// slowWorkflowHCL has a sampler node with many steps, so the job stays running for a while.
const slowWorkflowHCL = `jsonencode({
    "1" = { class_type = "EmptyImage", inputs = { width = 8, height = 8, batch_size = 1, color = 0 } }
    "2" = { class_type = "ImageNoiseSampler", inputs = { image = ["1", 0], seed = 1, steps = 10000, denoise = 1.0 } }
    "3" = { class_type = "SaveImage", inputs = { images = ["2", 0], filename_prefix = "slow" } }
  })`

// submissions checks that exactly want requests reached the emulator operation op.
func submissions(srv *emulator.Server, op string, want int) resource.TestCheckFunc {
	return func(*terraform.State) error {
		if n := srv.Requests(op); n != want {
			return fmt.Errorf("%d requests reached %s, want %d", n, op, want)
		}
		return nil
	}
}

// checkRuns checks that the emulator's router ran model exactly want times.
func checkRuns(srv *emulator.Server, model string, want int) resource.TestCheckFunc {
	return func(*terraform.State) error {
		if n := srv.RouterRuns(model); n != want {
			return fmt.Errorf("%s ran %d times on the server, want %d", model, n, want)
		}
		return nil
	}
}

// captureStateJSON stores the whole state, as JSON, into *dst: a secret must appear nowhere in it.
func captureStateJSON(dst *string) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		b, err := json.Marshal(s)
		*dst = string(b)
		return err
	}
}

// traceLogFile makes the test's Terraform runs, and the provider, log at TRACE into a file of
// the test and returns its path. It sets process-wide environment, so the test cannot be
// parallel.
func traceLogFile(t *testing.T) string {
	t.Helper()
	logPath := filepath.Join(t.TempDir(), "trace.log")
	t.Setenv("TF_LOG", "TRACE")
	t.Setenv("TF_ACC_LOG_PATH", logPath)
	return logPath
}

// assertSecretsAbsent fails the test when a secret appears in the state or on any line of the
// trace log (the line is shown with the secret masked).
func assertSecretsAbsent(t *testing.T, stateJSON string, logs []byte, secrets ...string) {
	t.Helper()
	for _, secret := range secrets {
		if strings.Contains(stateJSON, secret) {
			t.Errorf("state contains a secret")
		}
		for _, line := range strings.Split(string(logs), "\n") {
			if strings.Contains(line, secret) {
				t.Errorf("TF_LOG=trace output contains a secret: %.300s", strings.ReplaceAll(line, secret, "<SECRET>"))
				break
			}
		}
	}
}

// A write-only attribute is never in a plan or in state, and Terraform shows it as
// "(write-only attribute)"; marking it Sensitive hides nothing more but records a sensitive path
// in every instance's state, which Terraform copies and rewrites for each resource it changes.
// svc_job, the resource of large batches, leaves its write-only credentials unmarked.
func TestJobWriteOnlyAttributesAreNotMarkedSensitive(t *testing.T) {
	attrs := protocolAttributes(t, protocolSchemas(t).ResourceSchemas["svc_job"])
	for _, name := range []string{"partner_api_key_wo", "partner_auth_token_wo"} {
		a, ok := attrs[name]
		if !ok || !a.WriteOnly {
			t.Fatalf("svc_job.%s is not a write-only attribute", name)
		}
		if a.Sensitive {
			t.Errorf("svc_job.%s is write-only and marked sensitive", name)
		}
	}
}
