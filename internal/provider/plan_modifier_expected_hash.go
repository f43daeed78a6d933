package provider

import (
	"context"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// fileDoesNotMatchExpectedHash replaces the file only when the new expectation is one the file
// on disk does not meet. A hash the service computed after the download (outputs[i].hash is
// null until then) that equals the file's own is no reason to download it again; nor is
// dropping the expectation. An expectation not known until apply cannot be checked now, so it
// replaces.
func fileDoesNotMatchExpectedHash(ctx context.Context, req planmodifier.StringRequest, resp *stringplanmodifier.RequiresReplaceIfFuncResponse) {
	if req.PlanValue.IsNull() {
		return
	}
	var have types.String
	resp.Diagnostics.Append(req.State.GetAttribute(ctx, path.Root("blake3"), &have)...)
	resp.RequiresReplace = req.PlanValue.IsUnknown() || !strings.EqualFold(req.PlanValue.ValueString(), have.ValueString())
}

// replaceWhenFileMissesExpectedHash is expected_hash's plan modifier: see
// fileDoesNotMatchExpectedHash for when it replaces.
func replaceWhenFileMissesExpectedHash() planmodifier.String {
	const desc = "Replaced when the new expected hash is not the hash of the file already downloaded."
	return stringplanmodifier.RequiresReplaceIf(fileDoesNotMatchExpectedHash, desc, desc)
}
