package provider

import (
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/svc-org/terraform-provider-svc/internal/emulator"
)

// Partner nodes of a v1 prompt need a key in extra_data.api_key_svc_org: on the v1 interface
// that is the same key as the one for cloud authentication. The resource's write-only key wins, then partner_api_key, then
// api_key. svc_job (v2) does not fall back to api_key.
func TestAccPrompt_partnerKeyInExtraData(t *testing.T) {
	requireCLIFeature(t, featureWriteOnly)
	t.Parallel()
	const partnerKey, writeOnlyKey = "partner-default-key", "write-only-partner-key"
	tests := []struct {
		name     string
		provider string
		resource string // the resource block; its address is <type>.test
		want     string // extra_data.api_key_svc_org received; "" for none
	}{
		{name: "svc_prompt with api_key only sends api_key", resource: "svc_prompt", want: v1AccKey},
		{name: "svc_prompt prefers partner_api_key", provider: fmt.Sprintf("partner_api_key = %q", partnerKey), resource: "svc_prompt", want: partnerKey},
		{name: "svc_prompt prefers partner_api_key_wo", provider: fmt.Sprintf("partner_api_key = %q", partnerKey),
			resource: "svc_prompt", want: writeOnlyKey},
		{name: "svc_job with api_key only sends no partner key", resource: "svc_job", want: ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := newTestServer(t, emulator.Options{Token: v1AccKey})
			extra := ""
			if tc.want == writeOnlyKey {
				extra = fmt.Sprintf("partner_api_key_wo = %q", writeOnlyKey)
			}
			address := tc.resource + ".test"
			var id, stateJSON string
			resource.Test(t, resource.TestCase{
				ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
				Steps: []resource.TestStep{{
					Config: providerConfig(srv, fmt.Sprintf("api_key = %q\n  %s", v1AccKey, tc.provider)) +
						fmt.Sprintf("resource %q \"test\" {\n  workflow = %s\n  %s\n}\n", tc.resource, samplerWorkflowHCL(1), extra),
					Check: resource.ComposeTestCheckFunc(
						func(s *terraform.State) error {
							id = s.RootModule().Resources[address].Primary.ID
							return nil
						},
						captureStateJSON(&stateJSON),
					),
				}},
			})
			if id == "" || !strings.Contains(stateJSON, id) {
				t.Fatalf("no %s in state (id %q); the checks below would prove nothing", address, id)
			}
			got, sent := srv.JobExtraData(id)["api_key_svc_org"]
			if tc.want == "" && sent || tc.want != "" && got != tc.want {
				t.Fatalf("extra_data.api_key_svc_org = %v (sent %v), want %q", got, sent, tc.want)
			}
			assertSecretsAbsent(t, stateJSON, nil, v1AccKey, partnerKey, writeOnlyKey)
		})
	}
}
