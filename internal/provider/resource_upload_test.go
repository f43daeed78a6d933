package provider

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/svc-org/terraform-provider-svc/internal/emulator"
)

// writePNG writes a 2x2 PNG of one colour and returns its hex SHA-256.
func writePNG(t *testing.T, p string, c color.NRGBA) string {
	t.Helper()
	im := image.NewNRGBA(image.Rect(0, 0, 2, 2))
	for i := 0; i < 4; i++ {
		im.Set(i%2, i/2, c)
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, im); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(buf.Bytes())
	return hex.EncodeToString(sum[:])
}

func uploadConfig(srv *emulator.Server, image, mask string) string {
	return providerConfig(srv, `api_key = "v1-acc-key"`) + fmt.Sprintf(`
resource "svc_upload" "image" {
  source    = %q
  overwrite = true
}

resource "svc_upload" "mask" {
  source       = %q
  kind         = "mask"
  original_ref = jsonencode({ filename = svc_upload.image.name, subfolder = "", type = "input" })
}
`, image, mask)
}

func TestAccUpload_imageAndMask(t *testing.T) {
	t.Parallel()
	srv := newTestServer(t, emulator.Options{Token: "v1-acc-key"})
	dir := t.TempDir()
	img, mask := filepath.Join(dir, "cat.png"), filepath.Join(dir, "cat-mask.png")
	imgSum := writePNG(t, img, color.NRGBA{R: 255, A: 255})
	writePNG(t, mask, color.NRGBA{A: 128})
	var newSum string

	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: uploadConfig(srv, img, mask),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr("svc_upload.image", "name", "cat.png"),
					resource.TestCheckResourceAttr("svc_upload.image", "id", "cat.png"),
					resource.TestCheckResourceAttr("svc_upload.image", "subfolder", ""),
					resource.TestCheckResourceAttr("svc_upload.image", "source_sha256", imgSum),
					resource.TestCheckResourceAttr("svc_upload.mask", "name", "cat-mask.png"),
					func(_ *terraform.State) error {
						ups := srv.Uploads()
						if len(ups) != 2 {
							return fmt.Errorf("uploads: %d", len(ups))
						}
						im, mk := ups[0], ups[1]
						if im.Route != "image" || im.Fields["type"] != "input" || im.Fields["overwrite"] != "true" || im.FileName != "cat.png" {
							return fmt.Errorf("image upload: %+v", im)
						}
						if mk.Route != "mask" || mk.Fields["type"] != "input" || mk.FileName != "cat-mask.png" ||
							mk.Fields["original_ref"] != `{"filename":"cat.png","subfolder":"","type":"input"}` {
							return fmt.Errorf("mask upload: %+v", mk)
						}
						if _, sent := mk.Fields["subfolder"]; !sent {
							return fmt.Errorf("mask upload without subfolder field: %+v", mk.Fields)
						}
						return nil
					},
				),
			},
			{
				// Editing the file replaces the upload.
				PreConfig: func() { newSum = writePNG(t, img, color.NRGBA{G: 255, A: 255}) },
				Config:    uploadConfig(srv, img, mask),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("svc_upload.image", plancheck.ResourceActionReplace),
				}},
				Check: func(s *terraform.State) error {
					if got := s.RootModule().Resources["svc_upload.image"].Primary.Attributes["source_sha256"]; got != newSum {
						return fmt.Errorf("source_sha256 = %s, want %s", got, newSum)
					}
					if n := len(srv.Uploads()); n < 3 {
						return fmt.Errorf("the edited file was not uploaded again (%d uploads)", n)
					}
					return nil
				},
			},
		},
	})
}

func TestAccUpload_planTimeErrors(t *testing.T) {
	t.Parallel()
	srv := newTestServer(t, emulator.Options{})
	dir := t.TempDir()
	img := filepath.Join(dir, "a.png")
	writePNG(t, img, color.NRGBA{A: 255})
	for _, tc := range []struct {
		name, body, want string
	}{
		{"missing file", fmt.Sprintf(`source = %q`, filepath.Join(dir, "nope.png")), `Cannot read the file to upload`},
		{"mask without original_ref", fmt.Sprintf(`source = %q
  kind = "mask"`, img), `Mask upload needs original_ref`},
		{"original_ref on an image", fmt.Sprintf(`source = %q
  original_ref = jsonencode({ filename = "x.png" })`, img), `original_ref is for masks`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resource.Test(t, resource.TestCase{
				ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
				Steps: []resource.TestStep{{
					Config:      providerConfig(srv, "") + "resource \"svc_upload\" \"x\" {\n  " + tc.body + "\n}\n",
					PlanOnly:    true,
					ExpectError: regexp.MustCompile(tc.want),
				}},
			})
		})
	}
	if n := len(srv.Uploads()); n != 0 {
		t.Errorf("%d uploads sent for configurations refused at plan time", n)
	}
}
