package provider

import (
	"fmt"
	"net"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/svc-org/terraform-provider-svc/internal/emulator"
)

// A submission that never reached the service says so, names what to check, and creates
// nothing: a closed port, https against the plain-HTTP reference server, and a server whose
// certificate is not trusted.
func TestAccJob_notSentIsReportedAsNotSent(t *testing.T) {
	t.Parallel()
	emu := emulator.New(emulator.Options{})
	plain := httptest.NewServer(emu.Handler())
	t.Cleanup(plain.Close)
	untrusted := httptest.NewTLSServer(emu.Handler())
	t.Cleanup(untrusted.Close)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String()
	ln.Close()

	tests := []struct{ name, endpoint, want string }{
		{"closed port", closed, `Nothing listens at`},
		{"https against an http server", strings.Replace(plain.URL, "http://", "https://", 1), `serves http, not https`},
		{"untrusted certificate", untrusted.URL, `certificate of https://`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			config := fmt.Sprintf(`
provider "svc" {
  endpoint    = %q
  max_retries = 1
}
resource "svc_job" "test" {
  workflow = %s
}
`, tt.endpoint, imageWorkflowHCL(1))
			resource.Test(t, resource.TestCase{
				ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
				Steps: []resource.TestStep{{
					Config:      config,
					ExpectError: regexp.MustCompile(`(?s)Not sent: nothing was created.*` + tt.want),
				}},
			})
		})
	}
	if n := emu.Requests(emulator.OpSubmitJob); n != 0 {
		t.Errorf("%d submissions reached the server, want none", n)
	}
}

// An endpoint without a scheme suggests both, and says the value came from SVC_ENDPOINT.
// Not parallel: it sets the environment of the provider, which runs in this process.
func TestAccProvider_endpointWithoutSchemeFromEnvironment(t *testing.T) {
	t.Setenv("SVC_ENDPOINT", "localhost:8188")
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: `
provider "svc" {}
resource "svc_job" "test" {
  workflow = ` + imageWorkflowHCL(1) + `
}
`,
			ExpectError: regexp.MustCompile(`(?s)write http://localhost:8188 or\s+https://localhost:8188.*environment\s+variable\s+SVC_ENDPOINT`),
		}},
	})
}
