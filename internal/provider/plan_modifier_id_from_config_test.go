package provider

import (
	"path/filepath"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
)

// Ids that follow from the configuration are known in the first plan, not "known after apply".
func TestAccIDsKnownAtPlan(t *testing.T) {
	t.Parallel()
	srv := newRegistryServer(t)
	file := filepath.Join(t.TempDir(), "f.bin")
	asset := srv.PutAsset("f.bin", "application/octet-stream", []byte("bytes"))
	config := claimConfig(srv, testRegistryToken, "acme", "n1", "") + `
resource "svc_registry_node_translation" "test" {
  node_id    = "n1"
  depends_on = [svc_registry_node_claim.test]
  data    = jsonencode({ fr = { title = "Bonjour" } })
}

resource "svc_output_file" "f" {
  asset_id = "` + asset + `"
  path     = "` + file + `"
}
`
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			ConfigVariables: repoToken(testRepoToken),
			Config:          config,
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectKnownValue("svc_registry_node_claim.test", tfjsonpath.New("id"), knownvalue.StringExact("acme/n1")),
				plancheck.ExpectKnownValue("svc_registry_node_translation.test", tfjsonpath.New("id"), knownvalue.StringExact("n1")),
				plancheck.ExpectKnownValue("svc_output_file.f", tfjsonpath.New("id"), knownvalue.StringExact(file)),
			}},
			Check: resource.ComposeAggregateTestCheckFunc(
				resource.TestCheckResourceAttr("svc_registry_node_claim.test", "id", "acme/n1"),
				resource.TestCheckResourceAttr("svc_registry_node_translation.test", "id", "n1"),
				resource.TestCheckResourceAttr("svc_output_file.f", "id", file),
			),
		}},
	})
}
