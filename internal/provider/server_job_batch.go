package provider

import (
	"bytes"
	"context"
	"encoding/json"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

const jobBatchTypeName = "svc_job_batch"

// jobBatchServer answers the calls about a settled svc_job_batch itself, without the
// framework, when their answer is the state as it is, or that state with a few rows changed:
// the refresh of a batch with no row running, the plan of a batch whose configuration changes
// nothing but its rows, and the plan of its destruction. It also answers every apply of the
// batch (create, update, destroy: ApplyResourceChange in server_job_batch_apply.go) through the
// resource's applyBatch, which the framework's Create, Update and Delete only wrap. The framework visits every value of every row on each call, with
// a schema lookup per value: for 10,000 rows that is tens of seconds of CPU per plan, to keep
// all but a few rows as they are.
//
// It answers only where the framework path answers the same, by the rules that path applies:
//   - refresh: Read sends nothing and keeps state when no row is running.
//   - plan: the proposed new state is the prior state but for rows (write-only: Terraform
//     proposes the configured rows, the framework plans them null), and each attribute with a
//     default that the configuration leaves null holds that default. The framework then plans
//     the prior state (the id, the only value with a plan modifier that is not the
//     configuration's, is kept from state) with results and counts unknown, and ModifyPlan
//     sets them as planBatchRows plans the configured rows, warns of rows still running, and
//     checks the rows an apply submits (which, when it has anything to say, is left to the
//     framework's path to say).
//   - destroy plan: ModifyPlan does nothing when the plan is null.
//
// It also hands back a state of the current schema version as Terraform sent it
// (UpgradeResourceState, stateAsSent): the framework decodes and re-encodes all of it, three
// times per destroy, to return the same value; and it validates a configuration through the
// framework with the rows, which the framework's validation does not read, left out
// (ValidateResourceConfig).
type jobBatchServer struct {
	tfprotov6.ProviderServer
	typ       tftypes.Type
	version   int64
	writeOnly []string // the schema's write-only attributes
	// configured is the provider's configured data, nil until it is configured (and then, as
	// for the resource, the rows are not checked against the service's node classes).
	configured func() *providerData
}

func newJobBatchServer(next tfprotov6.ProviderServer, configured func() *providerData) tfprotov6.ProviderServer {
	ctx := context.Background()
	var resp resource.SchemaResponse
	NewJobBatchResource().Schema(ctx, resource.SchemaRequest{}, &resp)
	s := &jobBatchServer{ProviderServer: next, typ: resp.Schema.Type().TerraformType(ctx), version: resp.Schema.Version, configured: configured}
	for name, a := range resp.Schema.Attributes {
		if a.IsWriteOnly() {
			s.writeOnly = append(s.writeOnly, name)
		}
	}
	return s
}

// ValidateResourceConfig hands the framework the configuration with its rows replaced by an
// empty object when they are known: the framework's validation of svc_job_batch reads nothing
// of the rows but whether they are null or unknown (the attribute is required and write-only,
// with no validator, and no other validator reads them), and converting 10,000 rows into its
// values took a third of a second per call, twice per apply.
func (s *jobBatchServer) ValidateResourceConfig(ctx context.Context, req *tfprotov6.ValidateResourceConfigRequest) (*tfprotov6.ValidateResourceConfigResponse, error) {
	if req.TypeName == jobBatchTypeName {
		if config, ok := msgpackWithRowsStandIn(msgpackOf(req.Config)); ok {
			withStandIn := *req
			withStandIn.Config = &tfprotov6.DynamicValue{MsgPack: config}
			return s.ProviderServer.ValidateResourceConfig(ctx, &withStandIn)
		}
	}
	return s.ProviderServer.ValidateResourceConfig(ctx, req)
}

func (s *jobBatchServer) UpgradeResourceState(ctx context.Context, req *tfprotov6.UpgradeResourceStateRequest) (*tfprotov6.UpgradeResourceStateResponse, error) {
	if req.TypeName == jobBatchTypeName {
		if resp := stateAsSent(req, s.version, s.typ); resp != nil {
			return resp, nil
		}
	}
	return s.ProviderServer.UpgradeResourceState(ctx, req)
}

// stateAsSent hands back a state of the resource's current schema version (of type typ) as
// Terraform sent it, when the framework's upgrade would only re-encode it: it is JSON, and each
// of its attributes is one the schema has (the framework drops any other; Terraform would refuse
// it). nil when the framework must upgrade it.
func stateAsSent(req *tfprotov6.UpgradeResourceStateRequest, version int64, typ tftypes.Type) *tfprotov6.UpgradeResourceStateResponse {
	object, ok := typ.(tftypes.Object)
	if !ok || req.Version != version || req.RawState == nil || len(req.RawState.JSON) == 0 || len(req.RawState.Flatmap) > 0 {
		return nil
	}
	var attrs map[string]json.RawMessage
	if json.Unmarshal(req.RawState.JSON, &attrs) != nil {
		return nil
	}
	for name := range attrs {
		if _, ok := object.AttributeTypes[name]; !ok {
			return nil
		}
	}
	return &tfprotov6.UpgradeResourceStateResponse{UpgradedState: &tfprotov6.DynamicValue{JSON: req.RawState.JSON}}
}

func (s *jobBatchServer) ReadResource(ctx context.Context, req *tfprotov6.ReadResourceRequest) (*tfprotov6.ReadResourceResponse, error) {
	if req.TypeName == jobBatchTypeName {
		if state, ok := s.decode(req.CurrentState); ok && state != nil && !anyRowRunning(state.Results.Rows) {
			return &tfprotov6.ReadResourceResponse{NewState: req.CurrentState, Private: req.Private}, nil
		}
	}
	return s.ProviderServer.ReadResource(ctx, req)
}

func (s *jobBatchServer) PlanResourceChange(ctx context.Context, req *tfprotov6.PlanResourceChangeRequest) (*tfprotov6.PlanResourceChangeResponse, error) {
	if req.TypeName == jobBatchTypeName {
		if plan := s.planRows(ctx, req); plan != nil {
			return plan, nil
		}
	}
	return s.ProviderServer.PlanResourceChange(ctx, req)
}

// planRows is the plan the framework would answer when the configuration changes nothing but
// the rows (the prior state kept, but for the results and counts of the rows an apply runs,
// adds or removes), or the destruction Terraform proposes, by the rules in jobBatchServer's
// comment; nil when it may be anything else.
//
// Only the prior state is decoded: the proposed state is compared with it encoding by encoding,
// and of the configuration only which defaulted attributes are null and the rows are read,
// the rows without building their type (an object of 10,000 attributes when they come from a
// for expression). Whatever these shortcuts cannot settle goes to the framework, which took
// 20 s of CPU to plan ten rows added to 10,000.
func (s *jobBatchServer) planRows(ctx context.Context, req *tfprotov6.PlanResourceChangeRequest) *tfprotov6.PlanResourceChangeResponse {
	proposed, destroy, ok := msgpackObjectFields(msgpackOf(req.ProposedNewState))
	switch {
	case !ok:
		return nil
	case destroy:
		if prior := msgpackOf(req.PriorState); len(prior) == 0 || isMsgpackNull(prior) {
			return nil
		}
		return &tfprotov6.PlanResourceChangeResponse{PlannedState: req.ProposedNewState, PlannedPrivate: req.PriorPrivate}
	}
	prior, rows, ok := s.priorAndRows(req, proposed)
	if !ok {
		return nil
	}
	plan, ok := planConfiguredRows(prior, rows, privateBatchBook(req.PriorPrivate))
	if !ok || !s.rowsPassCheck(ctx, prior, plan.submits) {
		return nil
	}
	return s.plannedWithRows(req, prior, plan)
}

// priorAndRows is the prior state and the configured rows (as plain Go values) of a plan whose
// proposed new state (by attribute encoding) is the prior state but for rows, and whose
// configuration leaves each defaulted attribute null only where state holds the default; ok is
// false for any other plan.
func (s *jobBatchServer) priorAndRows(req *tfprotov6.PlanResourceChangeRequest, proposed map[string][]byte) (prior *jobBatchModel, rows any, ok bool) {
	priorFields, _, ok := msgpackObjectFields(msgpackOf(req.PriorState))
	if !ok || len(priorFields) != len(proposed) {
		return nil, nil, false
	}
	for name, v := range proposed {
		// rows is write-only: Terraform proposes the configured rows, which plan and state
		// never hold. Every other attribute is the prior one.
		if name != jobBatchAttrRows && !bytes.Equal(v, priorFields[name]) {
			return nil, nil, false
		}
	}
	config, null, ok := msgpackObjectFields(msgpackOf(req.Config))
	if !ok || null {
		return nil, nil, false
	}
	prior, ok = s.decode(req.PriorState)
	if !ok || prior == nil || !prior.Rows.Known || prior.Rows.Value != nil {
		return nil, nil, false
	}
	if !holdsDefaultsLeftNull(jobBatchAttributeTable, prior, func(a jobBatchAttribute) bool { return isMsgpackNull(config[a.name]) }) {
		return nil, nil, false
	}
	rows, ok = msgpackDynamicGoValue(config[jobBatchAttrRows])
	return prior, rows, ok
}

// plannedWithRows is the plan of prior with the results and counts plan gives, and the warning
// of rows still running: the prior state as Terraform sent it when nothing changes; nil when it
// cannot be encoded.
func (s *jobBatchServer) plannedWithRows(req *tfprotov6.PlanResourceChangeRequest, prior *jobBatchModel, plan *batchPlan) *tfprotov6.PlanResourceChangeResponse {
	resp := &tfprotov6.PlanResourceChangeResponse{PlannedState: req.PriorState, PlannedPrivate: req.PriorPrivate}
	if plan.unknown == 0 && len(plan.results) == len(prior.Results.Rows) {
		return resp // nothing to do
	}
	planned := *prior
	plan.setOn(&planned)
	value, err := encodeJobBatch(&planned)
	if err != nil {
		return nil
	}
	encoded, err := tfprotov6.NewDynamicValue(s.typ, value)
	if err != nil {
		return nil
	}
	resp.PlannedState = &encoded
	if plan.waiting > 0 {
		summary, detail := rowsStillRunningWarning(plan.waiting)
		resp.Diagnostics = []*tfprotov6.Diagnostic{{Severity: tfprotov6.DiagnosticSeverityWarning, Summary: summary, Detail: detail}}
	}
	return resp
}

// rowsPassCheck reports whether the rows an apply submits pass ModifyPlan's check against the
// service's node classes without a word (or are not checked, as ModifyPlan would not). Anything
// it would say, an error or a warning that it could not check, the framework's path says.
func (s *jobBatchServer) rowsPassCheck(ctx context.Context, prior *jobBatchModel, submits []batchRowInput) bool {
	if !prior.Validate.ValueBool() || len(submits) == 0 {
		return true
	}
	var diags diag.Diagnostics
	s.configured().checkBatchRowsAtPlan(ctx, prior.Workflow.ValueString(), submits, &diags)
	return len(diags) == 0
}

// planConfiguredRows plans the configured rows (as plain Go values) of a batch whose settings
// do not change, as ModifyPlan plans them. ok is false when the rows or their keys are invalid:
// the framework's path reports that.
func planConfiguredRows(prior *jobBatchModel, rows any, book batchBook) (plan *batchPlan, ok bool) {
	inputs, err := batchRowInputsOf(prior.Workflow.ValueString(), rows)
	if err != nil || rowDirError(prior.OutputDir.ValueString(), inputs) != nil || isBucketURL(prior.OutputDir.ValueString()) {
		return nil, false // a bucket is checked and listed by ModifyPlan
	}
	held := batchHeld{results: prior.Results.Rows, book: book}
	return planBatchRows(inputs, held, prior.settings(nil)), true
}
