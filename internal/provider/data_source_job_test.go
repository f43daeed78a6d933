package provider

import (
	"fmt"
	"net/http"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/svc-org/terraform-provider-svc/internal/emulator"
)

// A job id the service does not know (never existed, or aged out: 404 or 410) is an error that
// says which, and points at the resource, whose state outlives the record.
func TestAccJobDataSource_notFound(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		fault *emulator.Fault
	}{
		{name: "404"},
		{name: "410", fault: &emulator.Fault{Op: emulator.OpGetJob, Status: http.StatusGone, Body: `{"error":{"code":"gone","message":"retention ended"}}`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := newTestServer(t, emulator.Options{})
			if tc.fault != nil {
				srv.Inject(*tc.fault)
			}
			resource.Test(t, resource.TestCase{
				ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
				Steps: []resource.TestStep{{
					Config:      providerConfig(srv, "") + fmt.Sprintf(`data "svc_job" "gone" { id = %q }`, "5b0c2a44-86f4-4a5e-9d0e-2f6c0c1b7a10"),
					ExpectError: regexp.MustCompile(`(?s)Job not found.*aged out after its expires_at.*HTTP ` + tc.name),
				}},
			})
		})
	}
}
