package provider

import (
	"context"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/defaults"
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
