package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/schema/validator"

	"github.com/svc-org/terraform-provider-svc/internal/client"
)

// modelIDValidator checks a model id against the router's identifier rules at plan time.
type modelIDValidator struct{}

func (modelIDValidator) Description(context.Context) string {
	return "must be provider/model with lower-case alphanumeric slugs (at most 64 and 128 characters)"
}

func (v modelIDValidator) MarkdownDescription(ctx context.Context) string { return v.Description(ctx) }

func (modelIDValidator) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	if err := client.ValidateModelID(req.ConfigValue.ValueString()); err != nil {
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid model id", err.Error())
	}
}
