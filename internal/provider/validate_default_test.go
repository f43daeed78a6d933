package provider

import (
	"context"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/defaults"
	tfresource "github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/svc-org/terraform-provider-svc/internal/emulator"
)

// Every plan-time check of what will be submitted has the same default.
func TestValidateHasOneDefault(t *testing.T) {
	t.Parallel()
	for name, tt := range map[string]struct {
		res  resource.Resource
		attr string
	}{
		"svc_job":            {NewJobResource(), "validate"},
		"svc_prompt":         {NewPromptResource(), "validate"},
		"svc_router_request": {NewRouterRequestResource(), "validate_input"},
	} {
		var resp resource.SchemaResponse
		tt.res.Schema(context.Background(), resource.SchemaRequest{}, &resp)
		a, ok := resp.Schema.Attributes[tt.attr].(schema.BoolAttribute)
		if !ok || a.Default == nil {
			t.Fatalf("%s.%s has no default", name, tt.attr)
		}
		var got defaults.BoolResponse
		a.Default.DefaultBool(context.Background(), defaults.BoolRequest{}, &got)
		if got.PlanValue.ValueBool() != defaultValidate {
			t.Errorf("%s.%s defaults to %v, want %v", name, tt.attr, got.PlanValue.ValueBool(), defaultValidate)
		}
	}
}

// svc_job submits through the v2 interface: a surface without the v1 object_info route skips the
// check (a warning) instead of failing the plan.
func TestAccJob_validateSkippedWithoutObjectInfoRoute(t *testing.T) {
	t.Parallel()
	srv := newTestServer(t, emulator.Options{})
	srv.Inject(emulator.Fault{Op: emulator.OpV1ObjectInfo, Status: 404, Body: "404 page not found", ContentType: "text/plain; charset=utf-8"})
	tfresource.Test(t, tfresource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []tfresource.TestStep{{
			Config: jobConfig(srv, imageWorkflowHCL(1), ""),
			Check:  tfresource.TestCheckResourceAttr("svc_job.test", "status", "succeeded"),
		}},
	})
	if srv.Requests(emulator.OpV1ObjectInfo) == 0 {
		t.Fatal("object_info was not asked: the check did not run")
	}
}
