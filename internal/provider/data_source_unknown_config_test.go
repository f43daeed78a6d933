package provider

import (
	"fmt"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/svc-org/terraform-provider-svc/internal/emulator"
)

// Terraform reads data sources during plan even when the provider's settings are unknown. The
// data source must not read from the wrong service; it says how to defer the read, and with
// depends_on the read happens during apply and succeeds.
func TestAccDataSources_providerSettingsUnknownAtPlan(t *testing.T) {
	t.Parallel()
	srv := newTestServer(t, emulator.Options{})
	endpoint := fmt.Sprintf(`
resource "terraform_data" "endpoint" {
  input = %q
}

provider "svc" {
  endpoint = terraform_data.endpoint.output
}
`, srv.URL())
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config:      endpoint + `data "svc_models" "all" {}`,
				ExpectError: regexp.MustCompile(`(?s)data\.svc_models cannot be read during this plan.*depends_on`),
			},
			{
				Config: endpoint + `
data "svc_models" "all" {
  depends_on = [terraform_data.endpoint]
}
`,
				Check: resource.TestCheckResourceAttrSet("data.svc_models.all", "models.#"),
			},
		},
	})
}
