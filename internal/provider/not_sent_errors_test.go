package provider

import (
	"fmt"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/svc-org/terraform-provider-svc/internal/emulator"
)

// A billable send that never reached the service says so, names what to check, and creates
// nothing: a closed port, https against the plain-HTTP reference server, and a server whose
// certificate is not trusted; for a v2 job, a router request and a v1 prompt.
// closedEndpoint is an address where nothing listens: a port below the ephemeral range, which no
// other test's server can be handed (a port listened on and closed again can be, while the tests
// run in parallel, and a submission there is then answered).
const closedEndpoint = "http://127.0.0.1:1"

func TestAcc_notSentIsReportedAsNotSent(t *testing.T) {
	t.Parallel()
	emu := emulator.New(emulator.Options{Token: v1AccKey})
	plain := httptest.NewServer(emu.Handler())
	t.Cleanup(plain.Close)
	untrusted := httptest.NewTLSServer(emu.Handler())
	t.Cleanup(untrusted.Close)
	closed := closedEndpoint

	endpoints := []struct{ name, endpoint, want string }{
		{"closed port", closed, `Nothing listens at`},
		{"https against an http server", strings.Replace(plain.URL, "http://", "https://", 1), `serves http, not https`},
		{"untrusted certificate", untrusted.URL, `certificate of https://`},
	}
	resources := map[string]string{
		"svc_job":            `resource "svc_job" "test" { workflow = ` + imageWorkflowHCL(1) + ` }`,
		"svc_prompt":         `resource "svc_prompt" "test" { workflow = ` + imageWorkflowHCL(1) + ` }`,
		"svc_router_request": "resource \"svc_router_request\" \"test\" {\n  model = \"demo/echo\"\n  input = jsonencode({ prompt = \"x\" })\n}",
	}
	for _, ep := range endpoints {
		for kind, res := range resources {
			t.Run(ep.name+"/"+kind, func(t *testing.T) {
				t.Parallel()
				config := providerHCL(ep.endpoint, 1, fmt.Sprintf("api_key = %q", v1AccKey)) + res + "\n"
				resource.Test(t, resource.TestCase{
					ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
					Steps: []resource.TestStep{{
						Config:      config,
						ExpectError: regexp.MustCompile(`(?s)Not sent: nothing was created.*` + ep.want),
					}},
				})
			})
		}
	}
	t.Cleanup(func() {
		for _, op := range []string{emulator.OpSubmitJob, emulator.OpV1Prompt, emulator.OpSubmitRequest} {
			if n := emu.Requests(op); n != 0 {
				t.Errorf("%d requests reached %s, want none", n, op)
			}
		}
	})
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

// A request that was not sent to an endpoint taken from SVC_ENDPOINT says where the value came from.
// Not parallel: it sets the environment of the provider, which runs in this process.
func TestAccProvider_notSentNamesSVCEndpoint(t *testing.T) {
	closed := closedEndpoint
	t.Setenv("SVC_ENDPOINT", closed)
	for name, res := range map[string]string{
		"svc_job":            `resource "svc_job" "test" { workflow = ` + imageWorkflowHCL(1) + ` }`,
		"svc_router_request": "resource \"svc_router_request\" \"test\" {\n  model = \"demo/echo\"\n  input = jsonencode({ prompt = \"x\" })\n}",
	} {
		t.Run(name, func(t *testing.T) {
			resource.Test(t, resource.TestCase{
				ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
				Steps: []resource.TestStep{{
					Config:      "provider \"svc\" {\n  max_retries = 0\n}\n" + res + "\n",
					ExpectError: regexp.MustCompile(`(?s)Not sent: nothing was created.*Nothing listens at.*environment\s+variable\s+SVC_ENDPOINT`),
				}},
			})
		})
	}
}

// A refresh against an endpoint where nothing listens (any more) says the request never reached
// the service and which setting to check.
func TestAccJob_refreshAgainstAClosedPortNamesTheSetting(t *testing.T) {
	t.Parallel()
	// A job still queued: a finished one is not read again (nothing in its record can change).
	srv := emulator.New(emulator.Options{QueueDelay: time.Hour})
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	addr := strings.TrimPrefix(srv.URL(), "http://")
	config := jobConfig(srv, imageWorkflowHCL(1), "wait_for_completion = false")
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: config},
			{
				PreConfig:   srv.Close,
				Config:      config,
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`(?s)Reading job failed.*never reached the service.*Nothing listens at.*Check\s+endpoint`),
			},
			{
				// A server back on the address, which no longer knows the job: it leaves state,
				// so the test can end.
				PreConfig: func() {
					back := emulator.New(emulator.Options{})
					if err := back.StartOn(addr); err != nil {
						t.Fatal(err)
					}
					t.Cleanup(back.Close)
				},
				Config:             config,
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
			},
		},
	})
}
