package provider

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/config"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/svc-org/terraform-provider-svc/internal/emulator"
)

// Registry fixtures: "jwt-alice" is alice's registry token; alice is a member of publisher
// "acme"; nodes "n1" and "n2" live in alice's repositories, "n3" in carol's; "ghp-alice" is
// alice's repository token.
const (
	testRegistryToken = "jwt-alice"
	testRepoToken     = "ghp-alice"
)

func newRegistryServer(t *testing.T) *emulator.Server {
	t.Helper()
	srv := newTestServer(t, emulator.Options{})
	srv.AddRegistryToken(testRegistryToken, "alice")
	srv.AddRegistryToken("jwt-bob", "bob")
	srv.AddPublisher("acme", "alice")
	srv.SetRepoOwner(testRepoToken, "alice")
	srv.AddNode("n1", "alice")
	srv.AddNode("n2", "alice")
	srv.AddNode("n3", "carol")
	return srv
}

// claimConfig is a provider with registry token token and one claim; extra goes into the claim.
func claimConfig(srv *emulator.Server, token, publisher, node, extra string) string {
	return providerConfig(srv, fmt.Sprintf("registry_token = %q", token)) + fmt.Sprintf(`
variable "repo_token" {
  type      = string
  sensitive = true
  ephemeral = true
  default   = null
}

resource "svc_registry_node_claim" "test" {
  publisher_id  = %q
  node_id       = %q
  repo_token_wo = var.repo_token
  %s
}
`, publisher, node, extra)
}

// wrapped lets the spaces of pattern match the line breaks Terraform puts into long diagnostics.
func wrapped(pattern string) string { return strings.ReplaceAll(pattern, " ", `\s+`) }

func repoToken(v string) config.Variables {
	return config.Variables{"repo_token": config.StringVariable(v)}
}

func TestAccNodeClaim_claimUpdateAndForget(t *testing.T) {
	requireCLIFeature(t, featureWriteOnly, featureEphemeralVariables)
	t.Parallel()
	srv := newRegistryServer(t)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy: func(*terraform.State) error {
			if !srv.NodeExists("n1") || srv.NodePublisher("n1") != "acme" {
				return fmt.Errorf("destroy without delete_node_on_destroy must leave the node claimed; exists %v, publisher %q",
					srv.NodeExists("n1"), srv.NodePublisher("n1"))
			}
			if n := srv.Requests(emulator.OpRegistryDelete); n != 0 {
				return fmt.Errorf("destroy sent %d delete requests, want none", n)
			}
			return nil
		},
		Steps: []resource.TestStep{
			{
				ConfigVariables: repoToken(testRepoToken),
				Config:          claimConfig(srv, testRegistryToken, "acme", "n1", "repo_token_wo_version = 1"),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr("svc_registry_node_claim.test", "id", "acme/n1"),
					resource.TestCheckResourceAttr("svc_registry_node_claim.test", "delete_node_on_destroy", "false"),
					resource.TestCheckNoResourceAttr("svc_registry_node_claim.test", "repo_token_wo"),
					func(*terraform.State) error {
						if got := srv.NodePublisher("n1"); got != "acme" {
							return fmt.Errorf("the registry shows n1 claimed by %q, want acme", got)
						}
						if got := srv.LastRequestHeader(emulator.OpRegistryClaim).Get("Authorization"); got != "Bearer "+testRegistryToken {
							return fmt.Errorf("claim sent Authorization %q, want the registry token as bearer", got)
						}
						return nil
					},
				),
			},
			{
				// A token rotation is recorded in place and sends nothing: the claim holds.
				ConfigVariables: repoToken("ghp-rotated"),
				Config:          claimConfig(srv, testRegistryToken, "acme", "n1", "repo_token_wo_version = 2"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("svc_registry_node_claim.test", plancheck.ResourceActionUpdate),
				}},
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr("svc_registry_node_claim.test", "repo_token_wo_version", "2"),
					func(*terraform.State) error {
						if n := srv.Requests(emulator.OpRegistryClaim); n != 1 {
							return fmt.Errorf("claim requests = %d, want 1 (the update must send nothing)", n)
						}
						return nil
					},
				),
			},
			{
				// Changing the node replaces the claim.
				ConfigVariables: repoToken(testRepoToken),
				Config:          claimConfig(srv, testRegistryToken, "acme", "n2", "repo_token_wo_version = 2"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("svc_registry_node_claim.test", plancheck.ResourceActionDestroyBeforeCreate),
				}},
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr("svc_registry_node_claim.test", "id", "acme/n2"),
					func(*terraform.State) error {
						if srv.NodePublisher("n2") != "acme" {
							return fmt.Errorf("n2 not claimed")
						}
						return nil
					},
				),
			},
			{
				// Back to n1, which this configuration claimed before: the registry refuses, as
				// it should, and the error says how to adopt it.
				ConfigVariables: repoToken(testRepoToken),
				Config:          claimConfig(srv, testRegistryToken, "acme", "n1", ""),
				ExpectError:     regexp.MustCompile(wrapped(`HTTP 409 NODE_ALREADY_CLAIMED(?s:.*)terraform import <address> acme/n1`)),
			},
		},
	})
}

func TestAccNodeClaim_serviceErrors(t *testing.T) {
	requireCLIFeature(t, featureWriteOnly, featureEphemeralVariables)
	t.Parallel()
	tests := []struct {
		name, token, publisher, node, repoToken string
		want                                    string
	}{
		// Headed as a credential error, the advice given once.
		{"unauthorized", "jwt-unknown", "acme", "n1", testRepoToken,
			`check registry_token \(SVC_REGISTRY_TOKEN\)(?s:.*)` +
				`Set registry_token in the provider block \(or SVC_REGISTRY_TOKEN; it defaults to api_key\) to a valid key\.\s+` +
				`claim node: HTTP 401 UNAUTHORIZED: a valid bearer token \(a JWT or a prefixed API key\) is required \(request id [0-9a-f-]{36}\)`},
		{"publisher not found", testRegistryToken, "nope", "n1", testRepoToken,
			`HTTP 403 PUBLISHER_PERMISSION_DENIED: publisher "nope" does not exist or you are not one of its members \(request id `},
		{"caller not a member", "jwt-bob", "acme", "n1", testRepoToken,
			`HTTP 403 PUBLISHER_PERMISSION_DENIED: publisher "acme" does not exist or you are not one of its members`},
		{"node not found", testRegistryToken, "acme", "ghost", testRepoToken,
			`HTTP 404 NODE_NOT_FOUND: node "ghost" does not exist \(request id `},
		{"node already claimed", testRegistryToken, "acme", "n2", testRepoToken,
			`HTTP 409 NODE_ALREADY_CLAIMED: node "n2" is already claimed by publisher "other" \(request id `},
		{"repository token invalid", testRegistryToken, "acme", "n1", "ghp-forged",
			`HTTP 400 INVALID_REPO_TOKEN: REPO_TOKEN is missing or not a valid repository token \(request id `},
		{"repository token not the repository owner's", testRegistryToken, "acme", "n3", testRepoToken,
			`HTTP 400 INVALID_REPO_TOKEN: REPO_TOKEN does not belong to the owner of node "n3"'s repository`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := newRegistryServer(t)
			srv.SetNodePublisher("n2", "other")
			resource.Test(t, resource.TestCase{
				ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
				Steps: []resource.TestStep{{
					ConfigVariables: repoToken(tt.repoToken),
					Config:          claimConfig(srv, tt.token, tt.publisher, tt.node, ""),
					ExpectError:     regexp.MustCompile(claimErrorHeading(tt.name) + `(?s:.*)` + wrapped(tt.want)),
				}},
			})
			if n := srv.Requests(emulator.OpRegistryClaim); n != 1 {
				t.Fatalf("claim requests = %d, want exactly 1 (a refusal is not retried)", n)
			}
			if tt.node != "n2" && srv.NodePublisher(tt.node) != "" {
				t.Fatalf("a refused claim left %s claimed", tt.node)
			}
		})
	}
}

func TestAccNodeClaim_planTimeRejections(t *testing.T) {
	requireCLIFeature(t, featureWriteOnly, featureEphemeralVariables)
	t.Parallel()
	srv := newRegistryServer(t)
	tests := []struct {
		name, publisher, node string
		vars                  config.Variables
		want                  string
	}{
		{"node id with a slash", "acme", "a/b", repoToken(testRepoToken), `must not contain "/"`},
		{"empty publisher id", "", "n1", repoToken(testRepoToken), `publisher_id(?s:.*)at least 1`},
		{"dot-dot node id", "acme", "..", repoToken(testRepoToken), `node_id(?s:.*)value must be none of`},
		{"no repository token", "acme", "n1", nil, `Repository token required`},
		{"empty repository token", "acme", "n1", repoToken(" "), `Empty repository token`},
	}
	t.Cleanup(func() { // runs once the parallel subtests are done
		if n := srv.Requests(emulator.OpRegistryClaim); n != 0 {
			t.Errorf("%d claim requests were sent for configurations rejected at plan time", n)
		}
	})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			resource.Test(t, resource.TestCase{
				ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
				Steps: []resource.TestStep{{
					ConfigVariables: tt.vars,
					Config:          claimConfig(srv, testRegistryToken, tt.publisher, tt.node, ""),
					PlanOnly:        true,
					ExpectError:     regexp.MustCompile(wrapped(tt.want)),
				}},
			})
		})
	}
}

func TestAccNodeClaim_deleteNodeOnDestroy(t *testing.T) {
	requireCLIFeature(t, featureWriteOnly, featureEphemeralVariables)
	t.Parallel()
	srv := newRegistryServer(t)
	srv.AddNode("gone", "alice")
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy: func(*terraform.State) error {
			if srv.NodeExists("n1") {
				return fmt.Errorf("delete_node_on_destroy = true, but the registry still has n1")
			}
			return nil
		},
		Steps: []resource.TestStep{
			{
				ConfigVariables: repoToken(testRepoToken),
				Config:          claimConfig(srv, testRegistryToken, "acme", "n1", "delete_node_on_destroy = true"),
				Check: func(*terraform.State) error {
					if !srv.NodeExists("n1") || srv.NodePublisher("n1") != "acme" {
						return fmt.Errorf("n1 not claimed")
					}
					return nil
				},
			},
		},
	})
	if got := srv.LastRequestHeader(emulator.OpRegistryDelete).Get("Authorization"); got != "Bearer "+testRegistryToken {
		t.Fatalf("delete sent Authorization %q", got)
	}
}

func TestAccNodeClaim_deleteOfAnAbsentNodeSucceeds(t *testing.T) {
	requireCLIFeature(t, featureWriteOnly, featureEphemeralVariables)
	t.Parallel()
	srv := newRegistryServer(t)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				ConfigVariables: repoToken(testRepoToken),
				Config:          claimConfig(srv, testRegistryToken, "acme", "n1", "delete_node_on_destroy = true"),
				Check: func(*terraform.State) error {
					srv.SetNodePublisher("n1", "") // someone else removed it from acme: the registry answers 404
					return nil
				},
			},
		},
	})
	if n := srv.Requests(emulator.OpRegistryDelete); n != 1 {
		t.Fatalf("delete requests = %d, want 1", n)
	}
}

func TestAccNodeClaim_import(t *testing.T) {
	requireCLIFeature(t, featureWriteOnly, featureEphemeralVariables)
	t.Parallel()
	srv := newRegistryServer(t)
	srv.SetNodePublisher("n1", "acme") // claimed outside Terraform
	cfg := claimConfig(srv, testRegistryToken, "acme", "n1", "")
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config:        cfg,
				ResourceName:  "svc_registry_node_claim.test",
				ImportState:   true,
				ImportStateId: "acme/bad/id",
				ExpectError:   regexp.MustCompile(wrapped(`Import svc_registry_node_claim by "<publisher_id>/<node_id>"`)),
			},
			{
				// An import block adopts the claim; applying it sends nothing and needs no token.
				Config: cfg + `
import {
  to = svc_registry_node_claim.test
  id = "acme/n1"
}
`,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("svc_registry_node_claim.test", plancheck.ResourceActionNoop),
				}},
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr("svc_registry_node_claim.test", "id", "acme/n1"),
					resource.TestCheckResourceAttr("svc_registry_node_claim.test", "publisher_id", "acme"),
					resource.TestCheckResourceAttr("svc_registry_node_claim.test", "node_id", "n1"),
				),
			},
			{
				Config:            cfg,
				ResourceName:      "svc_registry_node_claim.test",
				ImportState:       true,
				ImportStateId:     "acme/n1",
				ImportStateVerify: true,
			},
		},
	})
	if n := srv.Requests(emulator.OpRegistryClaim); n != 0 {
		t.Fatalf("import sent %d claim requests, want none", n)
	}
}

func TestAccNodeClaim_noTokensInStateOrLogs(t *testing.T) {
	requireCLIFeature(t, featureWriteOnly, featureEphemeralVariables)
	// Not parallel: it sets the process-wide log environment.
	const registryToken, repoSecret = "svc_regkey-0123456789abcdef", "ghp_repo-secret-9876543210"
	logPath := traceLogFile(t)
	// The registry token comes from the environment, the repository token through an ephemeral
	// variable into the write-only attribute.
	t.Setenv("SVC_REGISTRY_TOKEN", registryToken)
	srv := newRegistryServer(t)
	srv.AddRegistryToken(registryToken, "alice")
	srv.SetRepoOwner(repoSecret, "alice")
	var stateJSON string
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			ConfigVariables: repoToken(repoSecret),
			Config: providerConfig(srv, "") + `
variable "repo_token" {
  type      = string
  sensitive = true
  ephemeral = true
}

resource "svc_registry_node_claim" "test" {
  publisher_id           = "acme"
  node_id                = "n1"
  repo_token_wo          = var.repo_token
  delete_node_on_destroy = true
}
`,
			Check: resource.ComposeAggregateTestCheckFunc(
				resource.TestCheckNoResourceAttr("svc_registry_node_claim.test", "repo_token_wo"),
				captureStateJSON(&stateJSON),
			),
		}},
	})
	// The secrets were really used: the claim needs both (the registry token authenticates, only
	// the repository token of n1's owner lets it succeed), and the delete needs the first.
	if got := srv.LastRequestHeader(emulator.OpRegistryClaim).Get("Authorization"); got != "Bearer "+registryToken {
		t.Fatalf("the registry did not receive the registry token")
	}
	if srv.NodeExists("n1") || srv.Requests(emulator.OpRegistryDelete) != 1 {
		t.Fatalf("the claim or the delete did not happen; the test proves nothing")
	}
	logs, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(logs), "node claimed") || !strings.Contains(string(logs), "node deleted") {
		t.Fatalf("the trace log does not hold the provider's lines; the check below would prove nothing")
	}
	assertSecretsAbsent(t, stateJSON, logs, registryToken, repoSecret)
}

// A claim made by Terraform carries its identity; an import block with that identity adopts
// it again with no change planned, and no claim is sent but the first.
func TestAccNodeClaim_identity(t *testing.T) {
	requireCLIFeature(t, featureResourceIdentity, featureWriteOnly, featureEphemeralVariables)
	t.Parallel()
	srv := newRegistryServer(t)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: identityImport{
			address:      "svc_registry_node_claim.test",
			config:       claimConfig(srv, testRegistryToken, "acme", "n1", ""),
			createVars:   repoToken(testRepoToken),
			bare:         providerConfig(srv, fmt.Sprintf("registry_token = %q", testRegistryToken)),
			names:        nodeClaimIdentity,
			importAction: plancheck.ResourceActionNoop,
			badIdentity:  map[string]string{"publisher_id": `"acme"`, "node_id": `"n1/x"`},
		}.steps(),
	})
	if n := srv.Requests(emulator.OpRegistryClaim); n != 1 {
		t.Fatalf("%d claims sent, want 1 (the create; import sends none)", n)
	}
	if srv.NodePublisher("n1") != "acme" {
		t.Fatalf("n1 belongs to %q, want acme", srv.NodePublisher("n1"))
	}
}

// claimErrorHeading is the heading of a refused claim: a credential error for a token the registry
// did not accept, the operation otherwise.
func claimErrorHeading(name string) string {
	if name == "unauthorized" {
		return `Error: Credentials not accepted: `
	}
	return `Error: Claiming node failed`
}
