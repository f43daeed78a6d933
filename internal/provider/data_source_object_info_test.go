package provider

import (
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/svc-org/terraform-provider-svc/internal/emulator"
)

// A class with no required or no optional inputs has empty lists, not null ones: length() of a
// null list fails the configuration.
func TestAccObjectInfoDataSource_classWithoutInputs(t *testing.T) {
	t.Parallel()
	srv := newTestServer(t, emulator.Options{Token: v1AccKey})
	srv.Inject(emulator.Fault{Op: emulator.OpV1ObjectInfo, Status: 200, Body: `{
	  "Bare":      {"input": {}, "output": [], "output_node": true, "category": "x"},
	  "OnlyNeeds": {"input": {"required": {"a": ["INT"]}}, "output": ["INT"]},
	  "OnlyMay":   {"input": {"optional": {"b": ["INT"]}}, "output": ["INT"]}
	}`})
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: providerConfig(srv, fmt.Sprintf("api_key = %q", v1AccKey)) + `
data "svc_object_info" "all" {}

locals {
  c = data.svc_object_info.all.classes
}

output "counts" {
  value = join(",", [for name in ["Bare", "OnlyNeeds", "OnlyMay"] :
    "${name}:${length(local.c[name].required_inputs)}/${length(local.c[name].optional_inputs)}/${length(local.c[name].outputs)}"])
}
`,
			Check: resource.ComposeAggregateTestCheckFunc(
				resource.TestCheckOutput("counts", "Bare:0/0/0,OnlyNeeds:1/0/1,OnlyMay:0/1/1"),
				resource.TestCheckResourceAttr("data.svc_object_info.all", "classes.Bare.required_inputs.#", "0"),
				resource.TestCheckResourceAttr("data.svc_object_info.all", "classes.Bare.optional_inputs.#", "0"),
			),
		}},
	})
}

func TestAccObjectInfoDataSource(t *testing.T) {
	t.Parallel()
	srv := newTestServer(t, emulator.Options{Token: v1AccKey})
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: providerConfig(srv, fmt.Sprintf("api_key = %q", v1AccKey)) + `
data "svc_object_info" "all" {}

output "flip_methods" {
  value = length(jsondecode(data.svc_object_info.all.json)["ImageFlip"]["input"]["required"]["flip_method"][0])
}
`,
			Check: resource.ComposeAggregateTestCheckFunc(
				resource.TestCheckResourceAttr("data.svc_object_info.all", "classes.SaveImage.output_node", "true"),
				resource.TestCheckResourceAttr("data.svc_object_info.all", "classes.SaveImage.required_inputs.#", "2"),
				resource.TestCheckResourceAttr("data.svc_object_info.all", "classes.SaveImage.required_inputs.0", "filename_prefix"),
				resource.TestCheckResourceAttr("data.svc_object_info.all", "classes.ImageNoiseSampler.optional_inputs.0", "denoise"),
				resource.TestCheckResourceAttr("data.svc_object_info.all", "classes.LoadImage.outputs.1", "MASK"),
				resource.TestCheckResourceAttr("data.svc_object_info.all", "classes.LoadImage.output_node", "false"),
				resource.TestCheckOutput("flip_methods", "2"),
			),
		}},
	})
}
