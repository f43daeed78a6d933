package provider

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/svc-org/terraform-provider-svc/internal/client"
	"github.com/svc-org/terraform-provider-svc/internal/emulator"
)

const routerRes = "svc_router_request.test"

func routerRequestConfig(srv *emulator.Server, maxRetries int, body string) string {
	return routerConfig(srv, maxRetries, fmt.Sprintf(`
resource "svc_router_request" "test" {
%s
}
`, body))
}

func routerAttr(s *terraform.State, name string) string {
	rs, ok := s.RootModule().Resources[routerRes]
	if !ok {
		return ""
	}
	return rs.Primary.Attributes[name]
}

// checkKeysSeen asserts that every request of op that reached the server carried the key in
// state, and that there were want of them.
func checkKeysSeen(srv *emulator.Server, op string, want int) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		key := routerAttr(s, "idempotency_key")
		seen := srv.RouterKeysSeen(op)
		if len(seen) != want {
			return fmt.Errorf("%d requests reached %s, want %d", len(seen), op, want)
		}
		for i, k := range seen {
			if k != key {
				return fmt.Errorf("request %d carried Idempotency-Key %q, state has %q", i+1, k, key)
			}
		}
		return nil
	}
}

func TestAccRouterRequest_planTimeInputRejection(t *testing.T) {
	t.Parallel()
	srv := newTestServer(t, emulator.Options{})
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: routerRequestConfig(srv, 2, `
  model = "demo/echo"
  input = jsonencode({ steps = 99, colour = "red" })
`),
				ExpectError: regexp.MustCompile(`(?s)Input does not match the model's schema.*(colour|prompt|steps).*Input does not match.*Input does not match`),
			},
			{
				Config:      routerRequestConfig(srv, 2, `model = "demo/echo"`+"\n"+`input = jsonencode(["not", "an", "object"])`),
				ExpectError: regexp.MustCompile(`The input must be a JSON object; it is JSON but not an object`),
			},
			{
				Config:      routerRequestConfig(srv, 2, `model = "demo/Echo"`+"\n"+`input = jsonencode({ prompt = "x" })`),
				ExpectError: regexp.MustCompile(`model slug "Echo" must be lower-case`),
			},
		},
		CheckDestroy: func(*terraform.State) error {
			for _, op := range []string{emulator.OpSubmitRequest, emulator.OpInvokeModel} {
				if n := srv.Requests(op); n != 0 {
					return fmt.Errorf("%d requests reached %s; a plan-time rejection must send nothing billable", n, op)
				}
			}
			if srv.Requests(emulator.OpModelSchema) == 0 {
				return fmt.Errorf("the schema was never read")
			}
			return nil
		},
	})
}

func TestAccRouterRequest_validateInputFalseLetsTheRouterDecide(t *testing.T) {
	t.Parallel()
	srv := newTestServer(t, emulator.Options{})
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: routerRequestConfig(srv, 2, `
  model          = "demo/echo"
  input          = jsonencode({ prompt = "hi", steps = 99 })
  validate_input = false
`),
			ExpectError: regexp.MustCompile(`(?s)rejected the input against the schema of demo/echo \(not billed\).*HTTP 422 invalid_input.*body\.steps: Input should be less than or equal to 50 \(less_than_equal, \{"le":50\}\)`),
		}},
		CheckDestroy: checkRuns(srv, emulator.ModelEcho, 0),
	})
}

func TestAccRouterRequest_queuedBinaryResultToFile(t *testing.T) {
	t.Parallel()
	srv := newTestServer(t, emulator.Options{Router: emulator.RouterOptions{RunDuration: 150 * time.Millisecond}})
	out := filepath.Join(t.TempDir(), "images", "pixel.png")
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: routerRequestConfig(srv, 2, fmt.Sprintf(`
  model       = "demo/pixel"
  input       = jsonencode({ size = 16, color = "#00ff00" })
  result_path = %q
`, out)),
			Check: resource.ComposeAggregateTestCheckFunc(
				resource.TestCheckResourceAttr(routerRes, "status", "COMPLETED"),
				resource.TestCheckResourceAttr(routerRes, "mode", "queued"),
				resource.TestMatchResourceAttr(routerRes, "id", regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)),
				resource.TestCheckNoResourceAttr(routerRes, "error_type"),
				resource.TestCheckNoResourceAttr(routerRes, "result"),
				resource.TestCheckResourceAttr(routerRes, "result_content_type", "image/png"),
				resource.TestCheckResourceAttr(routerRes, "replayed", "false"),
				resource.TestCheckResourceAttr(routerRes, "credits_used", "1"),
				resource.TestCheckResourceAttr(routerRes, "committed_spend.limit", "100.00"),
				resource.TestMatchResourceAttr(routerRes, "status_url", regexp.MustCompile(`^http://127\.0\.0\.1:\d+/v2/models/demo/pixel/requests/[0-9a-f-]{36}/status$`)),
				func(s *terraform.State) error {
					b, err := os.ReadFile(out)
					if err != nil {
						return err
					}
					if !strings.HasPrefix(string(b), "\x89PNG\r\n\x1a\n") {
						return fmt.Errorf("%s is not a PNG", out)
					}
					sum := sha256.Sum256(b)
					if got, want := hex.EncodeToString(sum[:]), routerAttr(s, "result_sha256"); got != want {
						return fmt.Errorf("file sha256 %s, state says %s", got, want)
					}
					if got, want := fmt.Sprint(len(b)), routerAttr(s, "result_size_bytes"); got != want {
						return fmt.Errorf("file is %s bytes, state says %s", got, want)
					}
					if left, _ := filepath.Glob(filepath.Join(filepath.Dir(out), ".*.part-*")); len(left) > 0 {
						return fmt.Errorf("temporary files left behind: %v", left)
					}
					return nil
				},
				checkRuns(srv, emulator.ModelPixel, 1),
			),
		}},
	})
}

func TestAccRouterRequest_completedWithUnknownErrorType(t *testing.T) {
	t.Parallel()
	srv := newTestServer(t, emulator.Options{})
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: routerRequestConfig(srv, 2, `
  model = "demo/freeform"
  input = jsonencode({ simulate_error_type = "gpu_on_fire" })
`),
			ExpectError: regexp.MustCompile(`(?s)Request [0-9a-f-]{36} completed with error_type\s+"gpu_on_fire".*does not know that type and handles it as\s+internal_error.*tainted`),
		}},
		CheckDestroy: func(*terraform.State) error {
			// The failed request was kept in state (tainted) and destroyed without a cancel: it
			// had completed.
			if n := srv.Requests(emulator.OpCancelRequest); n != 0 {
				return fmt.Errorf("%d cancel requests for a completed request", n)
			}
			if n := srv.Requests(emulator.OpCollectRequest); n != 0 {
				return fmt.Errorf("%d collect requests for a failed run", n)
			}
			return checkRuns(srv, emulator.ModelFreeform, 1)(nil)
		},
	})
}

func TestAccRouterRequest_sync504ThenReplaySameKey(t *testing.T) {
	t.Parallel()
	// The router stops waiting after 100 ms; the run takes 300 ms. The provider resends the
	// same key and body, which attaches to the same run and collects it: one run in all.
	srv := newTestServer(t, emulator.Options{Router: emulator.RouterOptions{SlowDuration: 300 * time.Millisecond, SyncDeadline: 100 * time.Millisecond}})
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: routerRequestConfig(srv, 5, `
  model = "demo/slow"
  mode  = "sync"
  input = jsonencode({ note = "takes a while" })
`),
			Check: resource.ComposeAggregateTestCheckFunc(
				resource.TestCheckResourceAttr(routerRes, "status", "COMPLETED"),
				resource.TestCheckResourceAttr(routerRes, "result", "slow model done\n"),
				resource.TestCheckResourceAttr(routerRes, "result_content_type", "text/plain; charset=utf-8"),
				resource.TestCheckResourceAttr(routerRes, "replayed", "true"),
				resource.TestCheckNoResourceAttr(routerRes, "status_url"),
				checkRuns(srv, emulator.ModelSlow, 1),
				func(s *terraform.State) error {
					seen := srv.RouterKeysSeen(emulator.OpInvokeModel)
					if len(seen) < 2 {
						return fmt.Errorf("%d sync attempts, want a 504 and a resend", len(seen))
					}
					return checkKeysSeen(srv, emulator.OpInvokeModel, len(seen))(s)
				},
			),
		}},
	})
}

func TestAccRouterRequest_concurrencyLimitThenSuccess(t *testing.T) {
	t.Parallel()
	srv := newTestServer(t, emulator.Options{})
	// The first submission is accepted, but the caller sees 409 concurrency_limit_exceeded
	// (the original call for the key still runs). The resend must carry the same key, and
	// is answered from the key's record: one run.
	srv.Inject(emulator.Fault{Op: emulator.OpSubmitRequest, Nth: 1, AfterHandling: true, Status: 409,
		Headers: map[string]string{"X-Svc-Error-Type": "concurrency_limit_exceeded", "Retry-After": "0"},
		Body:    `{"detail":"the original call for this key still runs"}`})
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: routerRequestConfig(srv, 2, `
  model = "demo/echo"
  input = jsonencode({ prompt = "hello", steps = 3 })
`),
			Check: resource.ComposeAggregateTestCheckFunc(
				resource.TestCheckResourceAttr(routerRes, "status", "COMPLETED"),
				resource.TestCheckResourceAttr(routerRes, "replayed", "true"),
				resource.TestCheckResourceAttr(routerRes, "result_content_type", "application/json"),
				resource.TestCheckResourceAttr(routerRes, "result", `{"echo":{"prompt":"hello","steps":3},"model":"demo/echo"}`),
				checkKeysSeen(srv, emulator.OpSubmitRequest, 2),
				checkRuns(srv, emulator.ModelEcho, 1),
			),
		}},
	})
}

func TestAccRouterRequest_html502(t *testing.T) {
	t.Parallel()
	srv := newTestServer(t, emulator.Options{})
	srv.Inject(emulator.Fault{Op: emulator.OpSubmitRequest, Status: 502,
		Headers: map[string]string{"X-Svc-Request-Id": "req-html-502"},
		Body:    "<html><head><title>502</title></head><body><h1>502 Bad Gateway</h1><hr>nginx</body></html>"})
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: routerRequestConfig(srv, 2, `
  model           = "demo/echo"
  input           = jsonencode({ prompt = "hello" })
  idempotency_key = "html-502-key"
`),
			ExpectError: regexp.MustCompile(`(?s)no\s+definitive\s+answer.*Idempotency-Key: html-502-key.*HTTP 502: Bad Gateway\s+\(request\s+id\s+req-html-502\).*response body \(not the expected JSON\): 502 502 Bad Gateway nginx.*idempotency_key\s+=\s+"html-502-key"`),
		}},
		CheckDestroy: func(*terraform.State) error {
			seen := srv.Requests(emulator.OpSubmitRequest)
			if seen != 3 {
				return fmt.Errorf("%d submissions, want 3 (bounded: max_retries 2)", seen)
			}
			return nil
		},
	})
}

func TestAccRouterRequest_cancelOnDestroy(t *testing.T) {
	t.Parallel()
	srv := newTestServer(t, emulator.Options{Router: emulator.RouterOptions{SlowDuration: time.Minute}})
	var id string
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: routerRequestConfig(srv, 2, `
  model               = "demo/slow"
  input               = jsonencode({})
  wait_for_completion = false
`),
			Check: resource.ComposeAggregateTestCheckFunc(
				resource.TestMatchResourceAttr(routerRes, "status", regexp.MustCompile(`^IN_(QUEUE|PROGRESS)$`)),
				resource.TestCheckNoResourceAttr(routerRes, "result_sha256"),
				func(s *terraform.State) error { id = routerAttr(s, "id"); return nil },
			),
		}},
		CheckDestroy: func(*terraform.State) error {
			if n := srv.Requests(emulator.OpCancelRequest); n != 1 {
				return fmt.Errorf("%d cancel requests, want 1", n)
			}
			if !srv.WaitRouterRequest(id, 5*time.Second) {
				return fmt.Errorf("request %s still runs after destroy", id)
			}
			if status, errType, _ := srv.RouterRequest(id); status != "COMPLETED" || errType != "cancelled" {
				return fmt.Errorf("request %s is %s/%s, want COMPLETED/cancelled", id, status, errType)
			}
			return nil
		},
	})
}

func TestAccRouterRequest_importAndAgedOut(t *testing.T) {
	t.Parallel()
	srv := newTestServer(t, emulator.Options{})
	cfg := routerRequestConfig(srv, 2, `
  model = "demo/echo"
  input = jsonencode({ prompt = "import me" })
`)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: cfg,
				Check:  resource.TestCheckResourceAttr(routerRes, "result", `{"echo":{"prompt":"import me"},"model":"demo/echo"}`),
			},
			{
				ResourceName:      routerRes,
				ImportState:       true,
				ImportStateVerify: true,
				ImportStateIdFunc: func(s *terraform.State) (string, error) {
					return "demo/echo/" + routerAttr(s, "id"), nil
				},
				// The router's record holds neither the input nor the key; a collect after
				// import is a replay, which carries no credits header.
				ImportStateVerifyIgnore: []string{"input", "idempotency_key", "replayed", "credits_used", "timeouts"},
			},
			{
				// The record ages out: state is kept and nothing runs again.
				PreConfig: srv.ForgetRouterRequests,
				Config:    cfg,
				PlanOnly:  true,
			},
			{
				Config:        cfg,
				ResourceName:  routerRes,
				ImportState:   true,
				ImportStateId: "demo/echo/not-a-uuid",
				ExpectError:   regexp.MustCompile(`Import svc_router_request as provider/model/request_id`),
			},
		},
		CheckDestroy: checkRuns(srv, emulator.ModelEcho, 1),
	})
}

func TestAccRouterRequest_linksOnAnotherOriginAreRebased(t *testing.T) {
	t.Parallel()
	// The router builds its queue links from a public base URL that is not the origin
	// router_endpoint names. They are followed on the configured origin (path and query kept):
	// the apply succeeds with one run, the links in state are on the configured origin, and
	// status, collect and cancel all reached it.
	srv := newTestServer(t, emulator.Options{Router: emulator.RouterOptions{PublicBaseURL: "https://router.public.example", SlowDuration: 100 * time.Millisecond}})
	onOrigin := regexp.MustCompile(`^` + regexp.QuoteMeta(srv.URL()) + `/v2/models/demo/slow/requests/[0-9a-f-]{36}`)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: routerRequestConfig(srv, 0, `
  model = "demo/slow"
  input = jsonencode({ note = "via a proxy" })
`),
			Check: resource.ComposeAggregateTestCheckFunc(
				resource.TestCheckResourceAttr(routerRes, "status", "COMPLETED"),
				resource.TestCheckResourceAttr(routerRes, "result", "slow model done\n"),
				resource.TestMatchResourceAttr(routerRes, "status_url", regexp.MustCompile(onOrigin.String()+`/status$`)),
				resource.TestMatchResourceAttr(routerRes, "response_url", regexp.MustCompile(onOrigin.String()+`$`)),
				resource.TestMatchResourceAttr(routerRes, "cancel_url", regexp.MustCompile(onOrigin.String()+`/cancel$`)),
				checkRuns(srv, emulator.ModelSlow, 1),
				func(*terraform.State) error {
					if srv.Requests(emulator.OpRequestStatus) == 0 || srv.Requests(emulator.OpCollectRequest) == 0 {
						return fmt.Errorf("status read %d times, collected %d times; want both on the configured origin",
							srv.Requests(emulator.OpRequestStatus), srv.Requests(emulator.OpCollectRequest))
					}
					return nil
				},
			),
		}},
	})
}

func TestAccRouterRequest_acceptedWithUnusableLinksKeepsTheID(t *testing.T) {
	t.Parallel()
	// The router accepts the run (201, a request id) but its links carry credentials, which the
	// provider does not follow. The run exists: its id must reach state, so that destroy asks
	// the router to cancel it.
	const id = "0b0c8f2e-0000-4000-8000-0000000000a1"
	srv := newTestServer(t, emulator.Options{})
	srv.Inject(emulator.Fault{Op: emulator.OpSubmitRequest, Nth: 1, Status: 201, Body: `{"request_id":"` + id + `","status":"IN_QUEUE",` +
		`"status_url":"https://user:pw@elsewhere.example/s","response_url":"https://user:pw@elsewhere.example/r","cancel_url":"ftp://elsewhere.example/c"}`})
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: routerRequestConfig(srv, 0, `
  model = "demo/echo"
  input = jsonencode({ prompt = "hi" })
`),
			ExpectError: regexp.MustCompile(`(?s)accepted request ` + id + `.*carries credentials.*unsupported scheme "ftp".*saved in state`),
		}},
		CheckDestroy: func(*terraform.State) error {
			if n := srv.Requests(emulator.OpCancelRequest); n != 1 {
				return fmt.Errorf("%d cancel requests, want 1: the accepted request was not kept in state", n)
			}
			return nil
		},
	})
}

func TestAccRouterRequest_collectFailureAfterCompletion(t *testing.T) {
	t.Parallel()
	// The run completes; collecting its result fails. The error must say that the run is over
	// and that only the collection failed, not that the router keeps running it.
	srv := newTestServer(t, emulator.Options{})
	// A 502 would be ridden out as transient; a 403 ends the wait.
	srv.Inject(emulator.Fault{Op: emulator.OpCollectRequest, Nth: 1, Status: 403, Body: `{"detail":"upstream broke"}`,
		Headers: map[string]string{"X-Svc-Error-Type": "provider_error"}})
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: routerRequestConfig(srv, 0, `
  model = "demo/echo"
  input = jsonencode({ prompt = "hi" })
`),
			ExpectError: regexp.MustCompile(`(?s)Model result not collected.*Collecting the result failed.*403.*provider_error.*after\s+request\s+[0-9a-f-]{36}\s+completed.*a\s+replay,\s+not\s+a\s+new\s+run`),
		}},
		CheckDestroy: func(*terraform.State) error {
			if n := srv.Requests(emulator.OpCancelRequest); n != 0 {
				return fmt.Errorf("%d cancel requests for a completed request", n)
			}
			return checkRuns(srv, emulator.ModelEcho, 1)(nil)
		},
	})
}

func TestAccRouterRequest_importedThenAppliedHasNoDiff(t *testing.T) {
	t.Parallel()
	// A queued request made elsewhere is imported with an import block; the apply adopts the
	// configured input without calling the model, and the next plan must be empty.
	srv := newTestServer(t, emulator.Options{})
	c, err := client.New(client.Config{Endpoint: srv.URL()})
	if err != nil {
		t.Fatal(err)
	}
	q, err := c.SubmitModelRequest(context.Background(), client.InvokeInput{
		Model: emulator.ModelEcho, Input: json.RawMessage(`{"prompt":"made elsewhere"}`), IdempotencyKey: "made-elsewhere",
	})
	if err != nil {
		t.Fatal(err)
	}
	cfg := routerRequestConfig(srv, 2, `
  model = "demo/echo"
  input = jsonencode({ prompt = "made elsewhere" })
`) + fmt.Sprintf(`
import {
  to = svc_router_request.test
  id = "demo/echo/%s"
}
`, q.RequestID)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: cfg, Check: resource.TestCheckResourceAttr(routerRes, "id", q.RequestID)},
			{Config: cfg, PlanOnly: true},
		},
		CheckDestroy: checkRuns(srv, emulator.ModelEcho, 1),
	})
}

func TestAccRouterRequest_resultPathUnwritableSaysHowToKeepTheRun(t *testing.T) {
	t.Parallel()
	// The run succeeds but its result cannot be written. The error must say the run is paid for
	// and how to keep it, since the taint would otherwise call the model again.
	srv := newTestServer(t, emulator.Options{})
	notADir := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(notADir, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: routerRequestConfig(srv, 2, fmt.Sprintf(`
  model       = "demo/pixel"
  input       = jsonencode({ size = 4 })
  result_path = %q
`, filepath.Join(notADir, "sub", "out.png"))),
			ExpectError: regexp.MustCompile(`(?s)Keeping the result failed.*succeeded\s+and\s+is\s+billed.*terraform\s+untaint`),
		}},
		CheckDestroy: checkRuns(srv, emulator.ModelPixel, 1),
	})
}

// A queued request the router forgets before it was seen completed may still have run and been
// billed: state keeps it (with a warning) rather than calling the model again on the next apply.
func TestAccRouterRequest_forgottenBeforeCompletionIsKept(t *testing.T) {
	t.Parallel()
	srv := newTestServer(t, emulator.Options{Router: emulator.RouterOptions{SlowDuration: time.Minute}})
	config := routerRequestConfig(srv, 2, `
  model               = "demo/slow"
  input               = jsonencode({ note = "long" })
  wait_for_completion = false
`)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: config},
			{
				PreConfig: srv.ForgetRouterRequests,
				Config:    config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectEmptyPlan(),
				}},
				Check: checkRuns(srv, emulator.ModelSlow, 1),
			},
		},
	})
}

// A model request carries its identity (model and id); an import block with it adopts the
// request, taking the input from configuration in place: the model runs once, nothing is
// cancelled.
func TestAccRouterRequest_identity(t *testing.T) {
	requireCLIFeature(t, featureResourceIdentity)
	t.Parallel()
	srv := newTestServer(t, emulator.Options{})
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: identityImport{
			address: routerRes,
			config: routerRequestConfig(srv, 2, `
  model = "demo/echo"
  input = jsonencode({ prompt = "identity" })
`),
			bare:         routerConfig(srv, 2, ""),
			names:        routerRequestIdentity,
			importAction: plancheck.ResourceActionUpdate,
			badIdentity:  map[string]string{"model": `"demo/echo"`, "id": `"not-a-uuid"`},
		}.steps(),
		CheckDestroy: checkRuns(srv, emulator.ModelEcho, 1),
	})
	if n := srv.Requests(emulator.OpCancelRequest); n != 0 {
		t.Errorf("%d cancels sent, want none", n)
	}
}
