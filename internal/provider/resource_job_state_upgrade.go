package provider

import (
	"context"
	"errors"
	"fmt"
	"maps"

	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
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

// jobStateV0ToV1 is version 0's state, as Terraform stored it (JSON), as a value of version 1's
// type typ.
func jobStateV0ToV1(raw *tfprotov6.RawState, typ tftypes.Type) (tftypes.Value, error) {
	if raw == nil || raw.JSON == nil {
		return tftypes.Value{}, errors.New("no JSON state (a state written by Terraform 0.11 or older)")
	}
	value, err := raw.UnmarshalWithOpts(typ, tfprotov6.UnmarshalOpts{
		ValueFromJSONOpts: tftypes.ValueFromJSONOpts{IgnoreUndefinedAttributes: true},
	})
	if err != nil {
		return tftypes.Value{}, err
	}
	attrs, ok := objectAttrs(value)
	if !ok {
		return tftypes.Value{}, errors.New("the state is not a known object")
	}
	attrs = maps.Clone(attrs)
	for _, name := range []string{jobAttrCompletedAt, jobAttrExpiresAt} {
		if t := stringAttr(attrs, name); t != "" {
			attrs[name] = tftypes.NewValue(tftypes.String, recordTime(t))
		}
	}
	return tftypes.NewValue(typ, attrs), nil
}
