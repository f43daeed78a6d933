package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/resource"
)

var _ resource.ResourceWithUpgradeState = (*jobResource)(nil)

// jobSchemaVersion is the version of svc_job's schema. Version 1 keeps of the job record what a
// finished job's users need (jobStateRecordAttrTypes), its times to the second.
const jobSchemaVersion = 1

// UpgradeState upgrades version 0's state to version 1 from the state's JSON alone, without a
// request and without the old schema: the attributes no longer kept are dropped (as the
// framework drops, at any version, those a schema no longer has, such as the outputs' signed
// URLs of older states) and the kept times cut to the second, as a refresh of the job would now
// write them. Nothing else changes, so the plan that follows shows no difference and a finished
// job is still settled.
func (r *jobResource) UpgradeState(context.Context) map[int64]resource.StateUpgrader {
	return map[int64]resource.StateUpgrader{0: {StateUpgrader: upgradeJobStateV0}}
}

func upgradeJobStateV0(ctx context.Context, req resource.UpgradeStateRequest, resp *resource.UpgradeStateResponse) {
	upgraded, err := jobStateV0ToV1(req.RawState, resp.State.Schema.Type().TerraformType(ctx))
	if err != nil {
		resp.Diagnostics.AddError("Upgrading svc_job's state failed", fmt.Sprintf("The state of svc_job (schema "+
			"version 0) could not be upgraded: %v. Nothing was sent. This is a bug in the provider; import the job "+
			"by its id.", err))
		return
	}
	resp.State.Raw = upgraded
}
