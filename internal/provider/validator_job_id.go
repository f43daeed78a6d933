package provider

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
)

// jobIDValidator refuses, before anything is sent, a job id that is not a UUID: the service names
// every job by one, and the id becomes a path segment of a request.
type jobIDValidator struct{}

func (jobIDValidator) Description(context.Context) string { return "must be a job id (a UUID)" }

func (v jobIDValidator) MarkdownDescription(ctx context.Context) string { return v.Description(ctx) }

func (jobIDValidator) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	if err := uuid.Validate(req.ConfigValue.ValueString()); err != nil {
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid job id",
			fmt.Sprintf("A job id is a UUID, such as 0b0c8f2e-0000-4000-8000-000000000000; got %q.", req.ConfigValue.ValueString()))
	}
}
