package provider

// result_path files behave like svc_output_file: a file gone or changed is drift that the next
// apply repairs by collecting the result again (a replay, never a new run), destroy removes the
// file, and files are 0644.

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/svc-org/terraform-provider-svc/internal/emulator"
)

func pixelToFileConfig(srv *emulator.Server, out string) string {
	return routerRequestConfig(srv, 2, fmt.Sprintf(`
  model       = "demo/pixel"
  input       = jsonencode({ size = 16, color = "#00ff00" })
  result_path = %q
`, out))
}

// checkResultFile checks the file holds the result state describes, with mode 0644.
func checkResultFile(out string) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		if err := checkDocumentedFileMode(out); err != nil {
			return err
		}
		if changed, err := resultFileChanged(out, routerAttr(s, "result_sha256")); err != nil || changed {
			return fmt.Errorf("%s does not hold the result in state (changed %v): %w", out, changed, err)
		}
		return nil
	}
}

func TestAccRouterRequest_resultFileDriftIsRewrittenWithoutARun(t *testing.T) {
	t.Parallel()
	srv := newTestServer(t, emulator.Options{Router: emulator.RouterOptions{RunDuration: 50 * time.Millisecond}})
	out := filepath.Join(t.TempDir(), "pixel.png")
	cfg := pixelToFileConfig(srv, out)
	rewrite := resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction(routerRes, plancheck.ResourceActionUpdate)}}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: cfg, Check: resource.ComposeAggregateTestCheckFunc(checkResultFile(out), checkRuns(srv, emulator.ModelPixel, 1))},
			{
				PreConfig:        func() { _ = os.Remove(out) },
				Config:           cfg,
				ConfigPlanChecks: rewrite,
				Check:            resource.ComposeAggregateTestCheckFunc(checkResultFile(out), checkRuns(srv, emulator.ModelPixel, 1)),
			},
			{
				PreConfig:        func() { _ = os.WriteFile(out, []byte("not the result"), 0o600) },
				Config:           cfg,
				ConfigPlanChecks: rewrite,
				Check:            resource.ComposeAggregateTestCheckFunc(checkResultFile(out), checkRuns(srv, emulator.ModelPixel, 1)),
			},
			{Config: cfg, PlanOnly: true}, // repaired: no drift left
		},
		CheckDestroy: func(*terraform.State) error {
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				return fmt.Errorf("destroy left %s behind: %w", out, err)
			}
			return nil
		},
	})
}

// Once the router no longer holds the result, the file cannot be written again without a new
// run: the apply says so and runs nothing.
func TestAccRouterRequest_resultFileDriftAfterTheResultAgedOut(t *testing.T) {
	t.Parallel()
	srv := newTestServer(t, emulator.Options{})
	out := filepath.Join(t.TempDir(), "pixel.png")
	cfg := pixelToFileConfig(srv, out)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: cfg, Check: checkResultFile(out)},
			{
				PreConfig:   func() { _ = os.Remove(out); srv.ForgetRouterRequests() },
				Config:      cfg,
				ExpectError: regexp.MustCompile(`(?s)no longer holds this request's result.*-replace`),
			},
		},
		CheckDestroy: checkRuns(srv, emulator.ModelPixel, 1),
	})
}
