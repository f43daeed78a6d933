package provider

import (
	"context"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
)

// positiveDurationValidator accepts a Go duration string above zero ("30s", "2m", "1h30m"), the
// form the timeouts block takes.
type positiveDurationValidator struct{}

var _ validator.String = positiveDurationValidator{}

func (positiveDurationValidator) Description(context.Context) string {
	return `must be a duration above zero, such as "30s" or "2m"`
}

func (v positiveDurationValidator) MarkdownDescription(ctx context.Context) string {
	return v.Description(ctx)
}

func (v positiveDurationValidator) ValidateString(ctx context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	d, err := time.ParseDuration(req.ConfigValue.ValueString())
	if err != nil || d <= 0 {
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid duration",
			req.ConfigValue.ValueString()+" "+v.Description(ctx)+".")
	}
}
