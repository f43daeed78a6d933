package provider

import (
	"fmt"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/svc-org/terraform-provider-svc/internal/emulator"
)

// routerConfig is the provider block for router tests, with maxRetries retries.
// routerConfig is the provider block pointing at srv, followed by body.
func routerConfig(srv *emulator.Server, maxRetries int, body string) string {
	return providerHCL(srv.URL(), maxRetries) + body
}

func TestAccModels_everyPageWithShortPageInTheMiddle(t *testing.T) {
	t.Parallel()
	// 4 demo models + 45 fillers = 49; 10 a page, page 2 holds only 5 yet has_more stays true.
	srv := newTestServer(t, emulator.Options{Router: emulator.RouterOptions{FillerModels: 45, ShortPage: 2}})
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: routerConfig(srv, 2, `
data "svc_models" "all" { page_size = 10 }
data "svc_models" "demo" {
  page_size = 100
  model_provider = "demo"
}
`),
			Check: resource.ComposeAggregateTestCheckFunc(
				resource.TestCheckResourceAttr("data.svc_models.all", "models.#", "49"),
				resource.TestCheckResourceAttr("data.svc_models.all", "models.0.id", "demo/echo"),
				resource.TestCheckResourceAttr("data.svc_models.all", "models.48.id", "filler/model-045"),
				resource.TestCheckResourceAttr("data.svc_models.demo", "models.#", "4"),
				resource.TestCheckResourceAttr("data.svc_models.demo", "models.1.id", "demo/freeform"),
				// "maybe-later" is neither "yes" nor "no": anything but those two reads as unknown.
				resource.TestCheckResourceAttr("data.svc_models.demo", "models.1.billing.charges_on_policy_rejection", "unknown"),
				resource.TestCheckResourceAttr("data.svc_models.demo", "models.2.billing.charges_on_policy_rejection", "yes"),
			),
		}},
	})
}

func TestAccModels_invalidCursorIsAnError(t *testing.T) {
	t.Parallel()
	srv := newTestServer(t, emulator.Options{})
	srv.Inject(emulator.Fault{Op: emulator.OpListModels, Nth: 1, Status: 200,
		Body: `{"data":[],"has_more":true,"next_cursor":"%%%not-ours","limit":100}`})
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config:      routerConfig(srv, 2, `data "svc_models" "all" {}`),
			ExpectError: regexp.MustCompile(`(?s)catalog page 2: list models: HTTP 400 invalid_input: invalid cursor\s+\(request\s+id [0-9a-f-]{36}\)`),
		}},
		CheckDestroy: func(*terraform.State) error {
			if n := srv.Requests(emulator.OpListModels); n != 2 {
				return fmt.Errorf("%d catalog requests, want 2: the walk must stop, not restart", n)
			}
			return nil
		},
	})
}

func TestAccModels_503OnAPageIsAnError(t *testing.T) {
	t.Parallel()
	srv := newTestServer(t, emulator.Options{Router: emulator.RouterOptions{FillerModels: 20}})
	srv.Inject(emulator.Fault{Op: emulator.OpListModels, Nth: 2, Times: 3, Status: 503,
		Headers: map[string]string{"X-Svc-Error-Type": "service_unavailable", "X-Svc-Request-Id": "req-503", "Retry-After": "0"},
		Body:    `{"detail":"router temporarily unavailable"}`})
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config:      routerConfig(srv, 2, `data "svc_models" "all" { page_size = 10 }`),
			ExpectError: regexp.MustCompile(`catalog page 2: list models: HTTP 503 service_unavailable: router temporarily\s+unavailable \(request id req-503\)`),
		}},
		CheckDestroy: func(*terraform.State) error {
			if n := srv.Requests(emulator.OpListModels); n != 4 {
				return fmt.Errorf("%d catalog requests, want 4 (page 1, then page 2 three times)", n)
			}
			return nil
		},
	})
}

func TestAccModel_entryAndDetail(t *testing.T) {
	t.Parallel()
	srv := newTestServer(t, emulator.Options{})
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: routerConfig(srv, 2, `
data "svc_model" "pixel" { id = "demo/pixel" }
output "max_size" { value = jsondecode(data.svc_model.pixel.detail_json).max_size }
`),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr("data.svc_model.pixel", "model_provider", "demo"),
					resource.TestCheckResourceAttr("data.svc_model.pixel", "model", "pixel"),
					resource.TestCheckResourceAttr("data.svc_model.pixel", "billing.charges_on_policy_rejection", "yes"),
					resource.TestCheckOutput("max_size", "64"),
				),
			},
			{
				Config:      routerConfig(srv, 2, `data "svc_model" "bad" { id = "Demo/Pixel" }`),
				ExpectError: regexp.MustCompile(`provider slug "Demo" must be lower-case`),
			},
			{
				Config:      routerConfig(srv, 2, `data "svc_model" "missing" { id = "demo/nope" }`),
				ExpectError: regexp.MustCompile(`HTTP 404 not_found`),
			},
		},
	})
}

func TestAccModelSchema_revalidatedWith304(t *testing.T) {
	t.Parallel()
	srv := newTestServer(t, emulator.Options{})
	cfg := routerConfig(srv, 2, `
data "svc_model_schema" "echo" { model = "demo/echo" }
data "svc_model_schema" "free" { model = "demo/freeform" }
`)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: cfg,
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr("data.svc_model_schema.echo", "input_schema_authored", "true"),
					resource.TestMatchResourceAttr("data.svc_model_schema.echo", "etag", regexp.MustCompile(`^"[0-9a-f]{16}"$`)),
					resource.TestCheckResourceAttr("data.svc_model_schema.echo", "output_media_types.#", "1"),
					resource.TestCheckResourceAttr("data.svc_model_schema.echo", "output_media_types.0", "application/json"),
					resource.TestMatchResourceAttr("data.svc_model_schema.echo", "input_schema", regexp.MustCompile(`"required":\["prompt"\]`)),
					resource.TestCheckResourceAttr("data.svc_model_schema.free", "input_schema_authored", "false"),
					resource.TestCheckResourceAttr("data.svc_model_schema.free", "output_media_types.0", "*/*"),
				),
			},
			{
				// A second run reads both documents again: the service answers 304 and the
				// cached documents are reused, unchanged.
				Config: cfg,
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr("data.svc_model_schema.echo", "input_schema_authored", "true"),
					func(*terraform.State) error {
						if n := srv.RouterSchemaNotModified(); n < 2 {
							return fmt.Errorf("%d schema reads answered 304, want at least 2", n)
						}
						if h := srv.LastRequestHeader(emulator.OpModelSchema).Get("If-None-Match"); h == "" {
							return fmt.Errorf("the last schema read sent no If-None-Match")
						}
						return nil
					},
				),
			},
		},
	})
}
