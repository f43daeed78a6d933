package provider

import (
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
)

// refuseReplacementReusingKey stops, at plan time, a replacement of a job whose configured
// idempotency_key stays the same. The service accepts a key once, and remembers it for 24 hours:
// the replacing submission would be refused with the key already used, after the old job had
// been destroyed (cancelled), leaving no job at all. An unconfigured key is drawn anew for each
// job, and a changed key starts a job of its own, so neither is refused; an unknown key may
// differ, so it is not refused either.
//
// The framework does not tell a resource's ModifyPlan which attributes require replacement, so
// the rule of the workflow's plan modifiers is read again here: a workflow in state that the plan
// changes (formatting-only changes are already planned as the state's value) replaces the job;
// after an import state holds no workflow, and adopting the configured one replaces nothing.
func refuseReplacementReusingKey(req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	config, okConfig := decodeJob(req.Config.Raw)
	planned, okPlan := decodeJob(req.Plan.Raw)
	held, okState := decodeJob(req.State.Raw)
	if !okConfig || !okPlan || !okState {
		return // a create, a destroy, or values not known yet
	}
	key := config.IdempotencyKey
	if key.IsUnknown() || key.IsNull() || !key.Equal(held.IdempotencyKey) {
		return
	}
	if !jobWorkflowReplaced(&planned, &held) {
		return
	}
	resp.Diagnostics.AddAttributeError(path.Root("idempotency_key"),
		"Replacing this job would reuse its idempotency_key",
		fmt.Sprintf("The workflow changed, so svc_job must be replaced: the job in state (%s) would be destroyed and "+
			"the new workflow submitted with idempotency_key %q. The service accepts a key only once (it is "+
			"remembered for 24 hours), so that submission would be refused after the old job was gone.\n\n"+
			"To apply this change, do one of:\n"+
			"- give idempotency_key a new value together with the workflow (for example one that names this "+
			"version of the workflow);\n"+
			"- remove idempotency_key: the provider then draws a new key for each job it submits;\n"+
			"- or keep the job in state by reverting the workflow change.\n\n"+
			"Nothing was sent.", held.ID.ValueString(), key.ValueString()))
}

// jobWorkflowReplaced reports whether the plan replaces the job for its workflow: state holds a
// workflow and the plan's differs from it (or is not known yet, which Terraform plans as a
// replacement too).
func jobWorkflowReplaced(planned, held *jobModel) bool {
	if held.Workflow.IsNull() {
		return false
	}
	return !planned.Workflow.Equal(held.Workflow)
}
