package provider

import (
	"context"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
)

// durationValidator accepts a positive Go duration ("90s", "5m", "1h30m").
type durationValidator struct{}

var _ validator.String = durationValidator{}

func (durationValidator) Description(context.Context) string {
	return "a positive duration such as 90s or 5m"
}

func (v durationValidator) MarkdownDescription(ctx context.Context) string { return v.Description(ctx) }

func (durationValidator) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	if d, err := time.ParseDuration(req.ConfigValue.ValueString()); err != nil || d <= 0 {
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid duration",
			fmt.Sprintf("Expected a positive duration such as \"90s\" or \"5m\"; got %q.", req.ConfigValue.ValueString()))
	}
}
