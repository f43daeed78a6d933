package provider

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// cliFeature is a language feature the CLI under test may lack. Whether it has it is found by
// asking the CLI to validate a configuration using the feature and the same configuration
// without it, not by its version number: OpenTofu and Terraform number their releases
// independently.
type cliFeature struct {
	name          string
	with, without string // main.tf using the feature, and the same without it

	once        sync.Once
	unsupported string // the CLI's answer when only the configuration using the feature failed
	probeErr    string // set when even the configuration without the feature failed
}

const probeProviderBlock = `terraform {
  required_providers {
    svc = { source = "svc-org/svc" }
  }
}
`

const probeClaim = `resource "svc_registry_node_claim" "probe" {
  publisher_id = "acme"
  node_id      = "n1"
}
`

var (
	featureWriteOnly = &cliFeature{
		name: "write-only arguments (Terraform 1.11, OpenTofu 1.11)",
		with: probeProviderBlock + `resource "svc_registry_node_claim" "probe" {
  publisher_id  = "acme"
  node_id       = "n1"
  repo_token_wo = "t"
}
`,
		without: probeProviderBlock + `resource "svc_registry_node_claim" "probe" {
  publisher_id = "acme"
  node_id      = "n1"
}
`,
	}
	featureEphemeralVariables = &cliFeature{
		name:    "ephemeral input variables (Terraform 1.10, OpenTofu 1.11)",
		with:    "variable \"v\" {\n  type      = string\n  default   = \"x\"\n  ephemeral = true\n}\n",
		without: "variable \"v\" {\n  type    = string\n  default = \"x\"\n}\n",
	}
	featureEphemeralResources = &cliFeature{
		name:    "ephemeral resources (Terraform 1.10, OpenTofu 1.11)",
		with:    probeProviderBlock + "ephemeral \"svc_output_url\" \"probe\" {\n  asset_id = \"a1\"\n}\n",
		without: probeProviderBlock + "locals {\n  asset_id = \"a1\"\n}\n",
	}
	featureResourceIdentity = &cliFeature{
		name: "resource identity (Terraform 1.12, OpenTofu 1.12)",
		with: probeProviderBlock + probeClaim + `import {
  to       = svc_registry_node_claim.probe
  identity = { publisher_id = "acme", node_id = "n1" }
}
`,
		without: probeProviderBlock + probeClaim + `import {
  to = svc_registry_node_claim.probe
  id = "acme/n1"
}
`,
	}
	featureActions = &cliFeature{
		name: "actions (Terraform 1.14; OpenTofu 1.12 has none)",
		with: probeProviderBlock + `action "svc_job_cancel" "probe" {
  config {
    id = "0b0c8f2e-0000-4000-8000-000000000000"
  }
}
`,
		without: probeProviderBlock,
	}
	featureProviderFunctions = &cliFeature{
		name:    "provider-defined functions (Terraform 1.8, OpenTofu 1.7)",
		with:    probeProviderBlock + "output \"o\" {\n  value = provider::svc::asset_ref(\"a1\")\n}\n",
		without: probeProviderBlock + "output \"o\" {\n  value = \"a1\"\n}\n",
	}
)

// requireCLIFeature skips the test, saying why, when the CLI under test lacks one of features;
// it fails the test when the probe itself does not work.
func requireCLIFeature(t *testing.T, features ...*cliFeature) {
	t.Helper()
	for _, f := range features {
		f.once.Do(func() { f.probe(t) })
		if f.probeErr != "" {
			t.Fatalf("probing the CLI for %s: even the configuration without it fails:\n%s", f.name, f.probeErr)
		}
		if f.unsupported != "" {
			t.Skipf("the CLI under test (%s) does not support %s:\n%s", cliPath(), f.name, f.unsupported)
		}
	}
}

// probe validates f.without, then f.with, in a scratch directory (the provider served in this
// process, so no init is needed).
func (f *cliFeature) probe(t *testing.T) {
	cli := newTerraformCLI(t, "")
	validate := func(config string) (string, error) {
		if err := os.WriteFile(filepath.Join(cli.dir, "main.tf"), []byte(config), 0o600); err != nil {
			return "", err
		}
		return cli.try("validate", "-no-color")
	}
	if out, err := validate(f.without); err != nil {
		f.probeErr = strings.TrimSpace(out + "\n" + err.Error())
		return
	}
	if out, err := validate(f.with); err != nil {
		f.unsupported = strings.TrimSpace(out)
	}
}

// The probes tell a feature the CLI lacks from one it has, and a broken probe from both.
func TestCLIFeatureProbes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		feature         *cliFeature
		wantUnsupported bool
		wantProbeErr    bool
	}{
		// Every CLI this project supports has these.
		{feature: &cliFeature{with: featureWriteOnly.with, without: featureWriteOnly.without}},
		{feature: &cliFeature{with: featureEphemeralVariables.with, without: featureEphemeralVariables.without}},
		{feature: &cliFeature{with: featureProviderFunctions.with, without: featureProviderFunctions.without}},
		{feature: &cliFeature{with: featureEphemeralResources.with, without: featureEphemeralResources.without}},
		// No CLI has this one.
		{feature: &cliFeature{with: "variable \"v\" {\n  not_a_feature = true\n}\n", without: "variable \"v\" {}\n"}, wantUnsupported: true},
		{feature: &cliFeature{with: "variable \"v\" {}\n", without: "variable {\n"}, wantProbeErr: true},
	}
	for i, tt := range tests {
		tt.feature.probe(t)
		if (tt.feature.unsupported != "") != tt.wantUnsupported || (tt.feature.probeErr != "") != tt.wantProbeErr {
			t.Errorf("probe %d: unsupported %q, probe error %q; want unsupported %v, probe error %v",
				i, tt.feature.unsupported, tt.feature.probeErr, tt.wantUnsupported, tt.wantProbeErr)
		}
	}
}
