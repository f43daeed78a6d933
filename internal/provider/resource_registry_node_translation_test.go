package provider

import (
	"fmt"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/svc-org/terraform-provider-svc/internal/emulator"
)

func translationConfig(srv *emulator.Server, node, data string) string {
	return providerConfig(srv, fmt.Sprintf("registry_token = %q", testRegistryToken)) + fmt.Sprintf(`
resource "svc_registry_node_translation" "test" {
  node_id = %q
  data    = %s
}
`, node, data)
}

// checkTranslations compares the registry's translations of node with want (compact JSON,
// keys sorted).
func checkTranslations(srv *emulator.Server, node, want string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		if got := string(srv.NodeTranslations(node)); got != want {
			return fmt.Errorf("registry translations of %s = %s, want %s", node, got, want)
		}
		return nil
	}
}

func TestAccNodeTranslation_createUpdateAndForget(t *testing.T) {
	t.Parallel()
	srv := newRegistryServer(t)
	srv.SetNodePublisher("n1", "acme")
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy: func(*terraform.State) error {
			// Destroy forgets the resource; the registry keeps the translations.
			return checkTranslations(srv, "n1", `{"de":{"title":"Hallo Welt"},"fr":{"description":"Une image","title":"Salut"}}`)(nil)
		},
		Steps: []resource.TestStep{
			{
				Config: translationConfig(srv, "n1", `jsonencode({ fr = { title = "Bonjour" }, de = { title = "Hallo" } })`),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr("svc_registry_node_translation.test", "id", "n1"),
					checkTranslations(srv, "n1", `{"de":{"title":"Hallo"},"fr":{"title":"Bonjour"}}`),
				),
			},
			{
				Config: translationConfig(srv, "n1", `jsonencode({ fr = { title = "Salut", description = "Une image" }, de = { title = "Hallo Welt" } })`),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("svc_registry_node_translation.test", plancheck.ResourceActionUpdate),
				}},
				Check: resource.ComposeAggregateTestCheckFunc(
					checkTranslations(srv, "n1", `{"de":{"title":"Hallo Welt"},"fr":{"description":"Une image","title":"Salut"}}`),
					func(*terraform.State) error {
						if n := srv.Requests(emulator.OpRegistryTranslations); n != 2 {
							return fmt.Errorf("translation posts = %d, want 2 (create, update)", n)
						}
						return nil
					},
				),
			},
		},
	})
	if n := srv.Requests(emulator.OpRegistryTranslations); n != 2 {
		t.Fatalf("translation posts = %d, want 2", n)
	}
}

func TestAccNodeTranslation_planTimeRejection(t *testing.T) {
	t.Parallel()
	srv := newRegistryServer(t)
	srv.SetNodePublisher("n1", "acme")
	tests := []struct{ name, data, want string }{
		{"array", `jsonencode(["fr"])`, `data is a JSON array, not an object`},
		{"string", `jsonencode("fr")`, `data is a JSON string, not an object`},
		{"language mapped to a string", `jsonencode({ fr = "Bonjour", de = { title = "Hallo" } })`, `language "fr" maps to a JSON string, not an object`},
		{"invalid JSON", `"{not json"`, `invalid JSON at line 1, column 2`},
	}
	t.Cleanup(func() { // runs once the parallel subtests are done
		if n := srv.Requests(emulator.OpRegistryTranslations); n != 0 {
			t.Errorf("%d translation posts were sent for configurations rejected at plan time", n)
		}
	})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			resource.Test(t, resource.TestCase{
				ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
				Steps: []resource.TestStep{{
					Config:      translationConfig(srv, "n1", tt.data),
					PlanOnly:    true,
					ExpectError: regexp.MustCompile(wrapped(tt.want)),
				}},
			})
		})
	}
}

func TestAccNodeTranslation_serviceError(t *testing.T) {
	t.Parallel()
	srv := newRegistryServer(t) // n2 is unclaimed: alice may not translate it
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config:      translationConfig(srv, "n2", `jsonencode({ fr = { title = "Bonjour" } })`),
			ExpectError: regexp.MustCompile(wrapped(`Posting node translations failed(?s:.*)HTTP 403 PUBLISHER_PERMISSION_DENIED: you are not a member of the publisher of node "n2" \(request id `)),
		}},
	})
}
