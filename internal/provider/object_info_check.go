package provider

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/svc-org/terraform-provider-svc/internal/client"
	"github.com/svc-org/terraform-provider-svc/internal/workflow"
)

// workflowCheckDoc says, in the `validate` attributes' descriptions, what the check reports.
const workflowCheckDoc = "unknown node classes are reported per node before anything is sent, as, on the nodes an output " +
	"depends on, are missing required inputs, links to a missing node or to an output its class lacks, a linked output " +
	"of a type the input does not take, and a string that is no number where the class wants an `INT` or a `FLOAT`. " +
	"What the engine might accept or coerce passes (a numeric string, a value outside a choice list, which an upload " +
	"may add to), so a workflow the engine would run is never refused."

// checkWorkflowNodes reports, per node, what the service's node classes say the engine would
// refuse before running: an unknown class (the engine looks up every node's class), a required
// input that is missing on a node the engine will run (it checks inputs only on output nodes and
// the nodes they depend on), and on those nodes the links and input types defs (the same
// document, read with input types; nil when it could not be) show to be wrong:
// workflow.CheckNodeInputs. Anything the engine might accept or coerce is accepted here, so a
// workflow the engine would run is never rejected.
func checkWorkflowNodes(info *client.ObjectInfo, defs workflow.ClassDefs, graph workflow.Graph) map[string][]string {
	problems := map[string][]string{}
	for id, n := range graph {
		if _, ok := info.Classes[n.ClassType]; !ok {
			problems[id] = append(problems[id], fmt.Sprintf("unknown node class %q (the service's object_info does not list it)", n.ClassType))
		}
	}
	for id := range nodesToRun(info, graph) {
		n := graph[id]
		for _, in := range info.Classes[n.ClassType].RequiredInputs {
			if _, present := n.Inputs[in]; !present {
				problems[id] = append(problems[id], fmt.Sprintf("required input %q of %s is missing", in, n.ClassType))
			}
		}
		problems[id] = append(problems[id], workflow.CheckNodeInputs(defs, graph, id)...)
		if len(problems[id]) == 0 {
			delete(problems, id)
		}
	}
	return problems
}

// nodesToRun returns the nodes the engine would run: those of an output class and every node they
// reach through links. A server whose object_info marks no output classes yields none, so nothing
// is judged on inputs rather than something judged wrongly.
func nodesToRun(info *client.ObjectInfo, graph workflow.Graph) map[string]bool {
	run := map[string]bool{}
	var visit func(id string)
	visit = func(id string) {
		n, ok := graph[id]
		if !ok || run[id] {
			return
		}
		run[id] = true
		for _, v := range n.Inputs {
			if from, isLink := workflow.LinkSource(v); isLink {
				visit(from)
			}
		}
	}
	for id, n := range graph {
		if info.Classes[n.ClassType].OutputNode {
			visit(id)
		}
	}
	return run
}

// checkWorkflowOnPlan is the ModifyPlan of resources with `workflow` and `validate` attributes:
// a new or changed workflow is checked against the service's node classes when validate is set.
// An unchanged workflow is not judged again.
func (d *providerData) checkWorkflowOnPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse, surface checkSurface) {
	if req.Plan.Raw.IsNull() {
		return // destroy
	}
	var validate types.Bool
	var planned, prior jsonSemantic
	resp.Diagnostics.Append(req.Plan.GetAttribute(ctx, path.Root("validate"), &validate)...)
	resp.Diagnostics.Append(req.Plan.GetAttribute(ctx, path.Root("workflow"), &planned)...)
	if !req.State.Raw.IsNull() {
		resp.Diagnostics.Append(req.State.GetAttribute(ctx, path.Root("workflow"), &prior)...)
	}
	if resp.Diagnostics.HasError() || !validate.ValueBool() || planned.IsUnknown() || planned.IsNull() {
		return
	}
	if !prior.IsNull() {
		if same, _ := planned.StringSemanticEquals(ctx, prior); same {
			return
		}
	}
	d.validateWorkflowAtPlan(ctx, path.Root("workflow"), planned.ValueString(), surface, &resp.Diagnostics)
}

// checkSurface says whether the resource submits through the interface that serves object_info.
type checkSurface bool

const (
	// submitsWhereChecked: the submission goes to the same interface as object_info (v1), so a
	// route that is not there means the endpoint is wrong, and the apply would fail too.
	submitsWhereChecked checkSurface = true
	// submitsElsewhere: the submission goes to another interface (v2 jobs), and a surface that
	// serves only that one has no object_info route: the check is skipped with a warning.
	submitsElsewhere checkSurface = false
)

// validateWorkflowAtPlan runs checkWorkflowNodes for a workflow attribute and adds one error per
// failing node. When the service cannot be asked (provider settings unknown until apply, or the
// read fails for a reason that may pass), the check is skipped with a warning rather than blocking
// the plan; refused credentials and a wrong endpoint, which would fail the apply too, are errors.
func (d *providerData) validateWorkflowAtPlan(ctx context.Context, attr path.Path, raw string, surface checkSurface, diags *diag.Diagnostics) {
	if d == nil || d.configUnknown {
		return
	}
	graph, err := workflow.Parse([]byte(raw))
	if err != nil {
		return // the attribute's validator reports it
	}
	info, defs, ok := d.nodeClassesAtPlan(ctx, attr, surface, diags)
	if !ok {
		return
	}
	problems := checkWorkflowNodes(info, defs, graph)
	for _, id := range slices.Sorted(maps.Keys(problems)) {
		diags.AddAttributeError(attr, fmt.Sprintf("Workflow node %q would be rejected", id),
			fmt.Sprintf("Node %q (%s): %s.\n\nThe check uses the service's GET /api/object_info; set validate = false to submit anyway.",
				id, graph[id].ClassType, strings.Join(problems[id], "; ")))
	}
}

// nodeClassesAtPlan reads the service's node classes for a plan-time check of attr: object_info
// and its class definitions (nil when they cannot be read: links, input types and input names
// are then not judged; classes and required inputs still are). ok is false, with what
// reportObjectInfoUnread says, when object_info cannot be read.
func (d *providerData) nodeClassesAtPlan(ctx context.Context, attr path.Path, surface checkSurface, diags *diag.Diagnostics) (info *client.ObjectInfo, defs workflow.ClassDefs, ok bool) {
	readCtx, cancel := d.readContext(ctx)
	defer cancel()
	info, err := d.objectInfo(readCtx)
	if err != nil {
		d.reportObjectInfoUnread(readCtx, attr, err, surface, diags)
		return nil, nil, false
	}
	if defs, err = d.classDefs(readCtx); err != nil {
		defs = nil
	}
	return info, defs, true
}

// reportObjectInfoUnread reports that object_info could not be read for a check of attr: an
// error when the submission would fail the same way (refused credentials, or a wrong endpoint
// where the submission goes to the same interface), and otherwise a warning that the check was
// skipped, since the reason may pass.
func (d *providerData) reportObjectInfoUnread(readCtx context.Context, attr path.Path, err error, surface checkSurface, diags *diag.Diagnostics) {
	if client.CredentialsRefused(err) || (surface == submitsWhereChecked && client.RouteNotFound(err)) {
		// The submission would fail the same way: an error now, not a skipped check.
		// Nothing in the workflow is at fault: the error is not the attribute's.
		diags.AddError(errorSummary(err, familyService, "Workflow not checked: the service refused the request"),
			"The workflow could not be checked against the service's node classes (GET /api/object_info), and "+
				"submitting it would fail the same way.\n\n"+d.describeReadError(readCtx, err, familyService))
		return
	}
	diags.AddAttributeWarning(attr, "Workflow not checked against the service's node classes",
		"Reading object_info failed, so unknown node classes and missing inputs will only be reported when the workflow is submitted. Set validate = false to skip this check.\n\n"+
			d.describeReadError(readCtx, err, familyService))
}
