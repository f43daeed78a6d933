package provider

import (
	"context"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

func TestJobIDValidator(t *testing.T) {
	t.Parallel()
	tests := []struct {
		value   types.String
		wantErr bool
	}{
		{value: types.StringValue("0b0c8f2e-0000-4000-8000-000000000000")},
		{value: types.StringNull()},
		{value: types.StringUnknown()},
		{value: types.StringValue("../../etc"), wantErr: true},
		{value: types.StringValue(""), wantErr: true},
	}
	for _, tt := range tests {
		var resp validator.StringResponse
		jobIDValidator{}.ValidateString(context.Background(), validator.StringRequest{Path: path.Root("id"), ConfigValue: tt.value}, &resp)
		if resp.Diagnostics.HasError() != tt.wantErr {
			t.Errorf("%s: error %v, want %v", tt.value, resp.Diagnostics, tt.wantErr)
		}
	}
}
