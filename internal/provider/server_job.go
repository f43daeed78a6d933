package provider

import (
	"bytes"
	"context"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/svc-org/terraform-provider-svc/internal/client"
)

const jobTypeName = "svc_job"

// settledJobServer answers two calls about a finished svc_job itself, without the framework,
// when their answer is "state as it is": the refresh of a settled record and the plan of a job
// whose configuration changes nothing (or of its destruction). A plan of a batch of finished
// jobs is made of these calls; the framework spent most of the provider's time on them
// (decoding each call's three values and visiting every attribute of the record, its outputs'
// included) only to conclude that nothing changes.
//
// It answers only where the framework path is known to answer the same, by the rules that path
// applies:
//   - refresh (ReadResource): the record is settled (settledRecord.settledAt, the rule
//     jobResource.Read applies first, whatever the provider's settings): Read then keeps state
//     and sends nothing.
//   - plan (PlanResourceChange): the proposed new state is the prior state, byte for byte (no
//     configured value differs, none is unknown), the job has ended (nothing to wait for), and
//     each attribute with a default that the configuration leaves null already holds that
//     default (otherwise the framework plans the default). No plan modifier of svc_job changes a
//     planned value that equals the prior state, and ModifyPlan acts only on a changed workflow
//     or a job still running.
//   - destroy plan: ModifyPlan does nothing when the plan is null.
//
// Every other call, and every call about another type, goes to the framework.
// TestSettledJobServerAnswersAsTheFramework holds the two paths to the same answers.
type settledJobServer struct {
	tfprotov6.ProviderServer
	now     func() time.Time
	jobType tftypes.Type
	// configured is the provider's configured data, nil until it is configured: until then the
	// framework answers.
	configured func() *providerData
}

// newSettledJobServer wraps next.
func newSettledJobServer(next tfprotov6.ProviderServer, now func() time.Time, configured func() *providerData) tfprotov6.ProviderServer {
	ctx := context.Background()
	var resp resource.SchemaResponse
	NewJobResource().Schema(ctx, resource.SchemaRequest{}, &resp)
	return &settledJobServer{ProviderServer: next, now: now, jobType: resp.Schema.Type().TerraformType(ctx), configured: configured}
}

func (s *settledJobServer) ReadResource(ctx context.Context, req *tfprotov6.ReadResourceRequest) (*tfprotov6.ReadResourceResponse, error) {
	if req.TypeName != jobTypeName || s.configured() == nil {
		return s.ProviderServer.ReadResource(ctx, req)
	}
	state, ok := decodeJobValue(s.jobType, req.CurrentState)
	if !ok || !settledRecordOf(state).settledAt(s.now()) {
		return s.ProviderServer.ReadResource(ctx, req)
	}
	s.configured().journal.confirm(ctx, state.ID.ValueString())
	// The identity goes back with the state: Terraform keeps the identity a refresh returns, and
	// none would drop it from state.
	return &tfprotov6.ReadResourceResponse{NewState: req.CurrentState, Private: req.Private, NewIdentity: heldJobIdentity(req.CurrentIdentity, state)}, nil
}

func (s *settledJobServer) PlanResourceChange(ctx context.Context, req *tfprotov6.PlanResourceChangeRequest) (*tfprotov6.PlanResourceChangeResponse, error) {
	if req.TypeName == jobTypeName {
		if s.plansNoChange(req) {
			// The identity planned is the prior one, as the framework plans it.
			return &tfprotov6.PlanResourceChangeResponse{PlannedState: req.ProposedNewState, PlannedPrivate: req.PriorPrivate,
				PlannedIdentity: req.PriorIdentity}, nil
		}
	}
	return s.ProviderServer.PlanResourceChange(ctx, req)
}

// plansNoChange reports whether the framework would plan req's prior state unchanged (or the
// destruction Terraform proposes), by the rules in settledJobServer's comment.
func (s *settledJobServer) plansNoChange(req *tfprotov6.PlanResourceChangeRequest) bool {
	prior, ok := decodeJobValue(s.jobType, req.PriorState)
	if !ok || prior == nil {
		return false
	}
	// A proposed state equal to the prior one is not null (the prior decoded as an object), so
	// only a differing one is decoded, to tell a destroy.
	if req.ProposedNewState == nil || !bytes.Equal(req.PriorState.MsgPack, req.ProposedNewState.MsgPack) {
		proposed, ok := decodeJobValue(s.jobType, req.ProposedNewState)
		return ok && proposed == nil // destroy
	}
	if !client.JobTerminal(prior.Status.ValueString()) {
		return false
	}
	config, ok := decodeJobValue(s.jobType, req.Config)
	if !ok || config == nil {
		return false
	}
	return holdsDefaultsLeftNull(jobAttributeTable, prior, func(a jobAttribute) bool { return a.field(config).(attr.Value).IsNull() })
}

// decodeJobValue returns v, a value of svc_job's type typ as Terraform sends it in a call, as
// its model: nil for a null object. ok is false when v is missing, is not msgpack (the encoding
// Terraform sends; a layer leaves anything else to the framework), is unknown as a whole or does
// not decode as typ.
func decodeJobValue(typ tftypes.Type, v *tfprotov6.DynamicValue) (*jobModel, bool) {
	if v == nil || v.MsgPack == nil {
		return nil, false
	}
	val, err := v.Unmarshal(typ)
	if err != nil || !val.IsKnown() {
		return nil, false
	}
	if val.IsNull() {
		return nil, true
	}
	m, ok := decodeJob(val)
	if !ok {
		return nil, false
	}
	return &m, true
}

// heldJobIdentity is the identity of the job state (a known object) holds: the one Terraform
// sent when it sent one, else one made from the id (a state written before svc_job had an
// identity, or by a CLI without identities). Nil when neither is there.
func heldJobIdentity(sent *tfprotov6.ResourceIdentityData, state *jobModel) *tfprotov6.ResourceIdentityData {
	if sent != nil && sent.IdentityData != nil {
		return sent
	}
	id := state.ID.ValueString()
	if id == "" {
		return nil
	}
	v, err := tfprotov6.NewDynamicValue(jobIdentityType, jobIdentityValue(id))
	if err != nil {
		return nil
	}
	return &tfprotov6.ResourceIdentityData{IdentityData: &v}
}
