package provider

import (
	"bytes"
	"context"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/defaults"
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
//   - refresh (ReadResource): the record is settled (settledRecord) and the provider's settings
//     were known when it was configured (jobResource.Read reads the same flag); Read then keeps
//     state and sends nothing.
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
	now          func() time.Time
	jobType      tftypes.Type
	boolDefaults map[string]tftypes.Value // svc_job's attributes with a default, and the default
	// configured is the provider's configured data, nil until it is configured. With a setting
	// unknown, Read keeps state for another reason and says so in a log line: the framework
	// answers.
	configured func() *providerData
}

// newSettledJobServer wraps next. Should svc_job ever have a default this server does not
// read, it answers nothing itself.
func newSettledJobServer(next tfprotov6.ProviderServer, now func() time.Time, configured func() *providerData) tfprotov6.ProviderServer {
	ctx := context.Background()
	var resp resource.SchemaResponse
	NewJobResource().Schema(ctx, resource.SchemaRequest{}, &resp)
	defaults, ok := boolDefaultsOf(ctx, resp.Schema)
	if !ok {
		return next
	}
	return &settledJobServer{ProviderServer: next, now: now, jobType: resp.Schema.Type().TerraformType(ctx),
		boolDefaults: defaults, configured: configured}
}

// boolDefaultsOf returns the default of every top-level attribute of s that has one, as the
// framework plans it; ok is false when an attribute has a default of another kind than a bool
// known without a request, or is of a kind hasDefault does not know.
func boolDefaultsOf(ctx context.Context, s schema.Schema) (boolDefaults map[string]tftypes.Value, ok bool) {
	boolDefaults = map[string]tftypes.Value{}
	for name, a := range s.Attributes {
		b, isBool := a.(schema.BoolAttribute)
		if !isBool || b.Default == nil {
			if has, known := hasDefault(a); has || !known {
				return nil, false
			}
			continue
		}
		var resp defaults.BoolResponse
		b.Default.DefaultBool(ctx, defaults.BoolRequest{Path: path.Root(name)}, &resp)
		if resp.Diagnostics.HasError() || resp.PlanValue.IsNull() || resp.PlanValue.IsUnknown() {
			return nil, false
		}
		boolDefaults[name] = tftypes.NewValue(tftypes.Bool, resp.PlanValue.ValueBool())
	}
	return boolDefaults, true
}

// hasDefault reports whether a, of a kind svc_job uses, has a default; known is false for any
// other kind.
func hasDefault(a schema.Attribute) (has, known bool) {
	switch a := a.(type) {
	case schema.StringAttribute:
		return a.Default != nil, true
	case schema.BoolAttribute:
		return a.Default != nil, true
	case schema.Int64Attribute:
		return a.Default != nil, true
	case schema.Float64Attribute:
		return a.Default != nil, true
	case schema.MapAttribute:
		return a.Default != nil, true
	case schema.ListNestedAttribute:
		return a.Default != nil, true
	case schema.SingleNestedAttribute:
		return a.Default != nil, true
	}
	return false, false
}

func (s *settledJobServer) ReadResource(ctx context.Context, req *tfprotov6.ReadResourceRequest) (*tfprotov6.ReadResourceResponse, error) {
	if data := s.configured(); req.TypeName != jobTypeName || data == nil || data.configUnknown {
		return s.ProviderServer.ReadResource(ctx, req)
	}
	state, ok := decodeJobValue(s.jobType, req.CurrentState)
	if !ok || !settledRecordOf(state).settledAt(s.now()) {
		return s.ProviderServer.ReadResource(ctx, req)
	}
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
	if !client.JobTerminal(prior.status()) {
		return false
	}
	config, ok := decodeJobValue(s.jobType, req.Config)
	if !ok || config == nil {
		return false
	}
	for name, def := range s.boolDefaults {
		if config[name].IsNull() && !prior[name].Equal(def) {
			return false
		}
	}
	return true
}
