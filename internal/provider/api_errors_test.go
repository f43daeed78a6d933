package provider

// Errors a new user can act on: each names the setting to fix, and what would fail the apply
// fails the plan.

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/svc-org/terraform-provider-svc/internal/client"
	"github.com/svc-org/terraform-provider-svc/internal/emulator"
)

func TestAccErrors_nameTheSettingToFix(t *testing.T) {
	t.Parallel()
	srv := newTestServer(t, emulator.Options{Token: "the-right-key", MountPrefix: "/deployment/demo"})
	endpoint := srv.URL() // already carries the mount prefix
	badRouter := strings.TrimSuffix(endpoint, "/deployment/demo")
	tests := []struct {
		name   string
		config string
		want   string
	}{
		{
			name:   "data source, wrong key",
			config: providerHCL(endpoint, 1, `api_key = "wrong"`) + `data "svc_object_info" "x" {}`,
			want:   `(?s)Error: Credentials not accepted: check api_key \(SVC_API_KEY\).*HTTP 401.*api_key in the provider block \(or SVC_API_KEY\)`,
		},
		{
			// The plan-time node check would have been skipped with a warning, and the apply
			// would then have failed on the same 401.
			name: "plan-time workflow check, wrong key",
			config: providerHCL(endpoint, 1, `api_key = "wrong"`) +
				`resource "svc_job" "x" {
  validate = true
  workflow = ` + imageWorkflowHCL(1) + `
}`,
			want: `(?s)Error: Credentials not accepted: check api_key \(SVC_API_KEY\).*The workflow could not be checked.*HTTP 401.*SVC_API_KEY`,
		},
		{
			name:   "router data source, router_endpoint without the mount prefix",
			config: providerHCL(endpoint, 1, fmt.Sprintf(`api_key = "the-right-key"`+"\n"+`router_endpoint = %q`, badRouter)) + `data "svc_model" "x" { id = "demo/echo" }`,
			want:   `(?s)The endpoint looks wrong.*router_endpoint`,
		},
		{
			// Before, this read "Model not found".
			name: "plan-time input check, router_endpoint without the mount prefix",
			config: providerHCL(endpoint, 1, fmt.Sprintf(`api_key = "the-right-key"`+"\n"+`router_endpoint = %q`, badRouter)) +
				`resource "svc_router_request" "x" {
  model = "demo/echo"
  input = jsonencode({ prompt = "hi" })
}`,
			want: `(?s)Error: The endpoint does not reach the service: check router_endpoint \(SVC_ROUTER_ENDPOINT\).*The endpoint looks wrong.*router_endpoint`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			resource.Test(t, resource.TestCase{
				ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
				Steps:                    []resource.TestStep{{Config: tt.config, PlanOnly: true, ExpectError: regexp.MustCompile(tt.want)}},
			})
		})
	}
}

// The settings named for refused credentials and a wrong endpoint follow the interface; the
// router's note on error types it does not know is not added to a 401.
func TestSettingHints(t *testing.T) {
	t.Parallel()
	unauthorized := apiError(t, 401, map[string]string{"X-Svc-Error-Type": "unauthorized"}, `{"detail":"bad key"}`)
	forbidden := apiError(t, 403, nil, `{"error":"forbidden","message":"not yours"}`)
	proxy404 := apiError(t, 404, nil, `<html><body>404 Not Found</body></html>`)
	jobGone := apiError(t, 404, nil, `{"error":{"code":"not_found","message":"no such job"}}`)
	tests := []struct {
		name   string
		err    error
		family apiFamily
		want   string // "" for no hint
	}{
		{"401 on the router", unauthorized, familyRouter, "api_key in the provider block (or SVC_API_KEY)"},
		{"403 on the registry", forbidden, familyRegistry, "registry_token in the provider block (or SVC_REGISTRY_TOKEN"},
		{"proxy 404 on the service", proxy404, familyService, "endpoint (or SVC_ENDPOINT)"},
		{"proxy 404 on the registry", proxy404, familyRegistry, "registry_endpoint"},
		{"the service's own 404", jobGone, familyService, ""},
	}
	for _, tt := range tests {
		got := settingHint(tt.err, tt.family)
		if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
			t.Errorf("%s: hint %q, want one naming %q", tt.name, got, tt.want)
		}
	}
	summaries := []struct {
		name   string
		err    error
		family apiFamily
		want   string
	}{
		{"401 on the service", unauthorized, familyService, "Credentials not accepted: check api_key (SVC_API_KEY)"},
		{"401 on the router", unauthorized, familyRouter, "Credentials not accepted: check api_key (SVC_API_KEY)"},
		{"401 on the registry", unauthorized, familyRegistry, "Credentials not accepted: check registry_token (SVC_REGISTRY_TOKEN)"},
		{"403 keeps the operation", forbidden, familyRegistry, "Claiming node failed"},
		{"proxy 404 on the registry", proxy404, familyRegistry, "The endpoint does not reach the service: check registry_endpoint (SVC_REGISTRY_ENDPOINT)"},
		{"the service's own 404", jobGone, familyService, "Claiming node failed"},
	}
	for _, tt := range summaries {
		if got := errorSummary(tt.err, tt.family, "Claiming node failed"); got != tt.want {
			t.Errorf("%s: summary %q, want %q", tt.name, got, tt.want)
		}
	}
	msg := describeRouterCallError(unauthorized, client.InvokeInput{Model: "demo/echo"})
	if strings.Contains(msg, "internal_error") {
		t.Errorf("a 401 is described as handled as internal_error: %s", msg)
	}
}

// apiError is what the client makes of an answer, through a real request.
func apiError(t *testing.T, status int, headers map[string]string, body string) error {
	t.Helper()
	srv := newScriptedServer(t, status, headers, body)
	c, err := client.New(client.Config{Endpoint: srv, MaxRetries: 0, MaxRetriesSet: true})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.GetJob(context.Background(), "11111111-1111-1111-1111-111111111111")
	if err == nil {
		t.Fatal("no error")
	}
	return err
}

// newScriptedServer answers every request with status, headers and body.
func newScriptedServer(t *testing.T, status int, headers map[string]string, body string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		for k, v := range headers {
			w.Header().Set(k, v)
		}
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}
