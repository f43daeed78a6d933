package provider

import (
	"context"
	"maps"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// batchApplyServer runs the create and the update of a svc_job_batch itself: it decodes the
// call's values, runs the resource's apply on them and encodes the state it returns, without
// the framework. Around a resource's Create or Update the framework converts each of the call's
// values (configuration, plan, prior state) into its own data, and the new state twice more (a
// walk that looks up the schema of every value to null write-only attributes, and the encoding
// back), each a copy of the whole batch: for 10,000 rows, tens of seconds of CPU and a heap of
// hundreds of MiB, most of it after the last row has ended, while Terraform waits.
//
// It answers as the framework does for this resource, by the rules that path applies:
//   - the resource is configured with the provider's data (until the provider is configured,
//     the framework answers);
//   - Create gets the plan, the configuration and no state; Update gets the prior state too;
//   - write-only attributes are null in the state returned (Terraform plans them null: this
//     only makes sure);
//   - the state keeps the planned workflow as it was, so the framework's semantic equality of
//     the workflow against the plan changes nothing;
//   - an apply that returns an error without a state leaves no state on create and the prior
//     state on update; one that returns no error and no state is the framework's error;
//   - the private state is empty on create and the planned one on update (svc_job_batch keeps
//     nothing there); svc_job_batch has no identity.
//
// Every other call, and the destruction (jobBatchServer, then the framework), goes on.
// TestBatchApplyServerAnswersAsTheFramework holds the two paths to the same answers.
type batchApplyServer struct {
	tfprotov6.ProviderServer
	typ       tftypes.Type
	writeOnly []string // top-level write-only attributes
	// configured is the provider's configured data, nil until it is configured.
	configured func() *providerData
}

func newBatchApplyServer(next tfprotov6.ProviderServer, configured func() *providerData) tfprotov6.ProviderServer {
	ctx := context.Background()
	var resp resource.SchemaResponse
	NewJobBatchResource().Schema(ctx, resource.SchemaRequest{}, &resp)
	s := &batchApplyServer{ProviderServer: next, typ: resp.Schema.Type().TerraformType(ctx), configured: configured}
	for name, a := range resp.Schema.Attributes {
		if a.IsWriteOnly() {
			s.writeOnly = append(s.writeOnly, name)
		}
	}
	return s
}

func (s *batchApplyServer) ApplyResourceChange(ctx context.Context, req *tfprotov6.ApplyResourceChangeRequest) (*tfprotov6.ApplyResourceChangeResponse, error) {
	if req.TypeName == jobBatchTypeName {
		if data := s.configured(); data != nil {
			if in, ok := s.decodeApply(req); ok {
				return s.apply(ctx, data, in, req.PlannedPrivate), nil
			}
		}
	}
	return s.ProviderServer.ApplyResourceChange(ctx, req)
}

// decodeApply reads the values of a create or an update; ok is false for a destruction, or
// values that cannot be read (the framework then answers, with its own error).
func (s *batchApplyServer) decodeApply(req *tfprotov6.ApplyResourceChangeRequest) (batchApplyRequest, bool) {
	var in batchApplyRequest
	if req.PlannedState == nil || req.Config == nil {
		return in, false
	}
	var err error
	if in.plan, err = req.PlannedState.Unmarshal(s.typ); err != nil || in.plan.IsNull() || !in.plan.IsKnown() {
		return in, false
	}
	if in.config, err = req.Config.Unmarshal(s.typ); err != nil {
		return in, false
	}
	if req.PriorState != nil {
		prior, err := req.PriorState.Unmarshal(s.typ)
		if err != nil {
			return in, false
		}
		if !prior.IsNull() {
			in.state, in.update = prior, true
		}
	}
	return in, true
}

// apply runs the resource's apply (Create or Update) and encodes its answer.
func (s *batchApplyServer) apply(ctx context.Context, data *providerData, in batchApplyRequest, plannedPrivate []byte) *tfprotov6.ApplyResourceChangeResponse {
	r := &jobBatchResource{data: data}
	var state tftypes.Value
	var diags diag.Diagnostics
	r.apply(ctx, in, &state, &diags)
	resp := &tfprotov6.ApplyResourceChangeResponse{Diagnostics: protoDiagnostics(diags)}
	if in.update {
		resp.Private = plannedPrivate
	}
	switch {
	case state.Type() == nil && in.update:
		state = in.state // Update's response starts from the prior state
	case state.Type() == nil:
		state = tftypes.NewValue(s.typ, nil)
		if !diags.HasError() {
			resp.Diagnostics = append(resp.Diagnostics, &tfprotov6.Diagnostic{Severity: tfprotov6.DiagnosticSeverityError,
				Summary: "Missing Resource State After Create", Detail: "svc_job_batch returned no state and no error. This is a bug in the provider."})
		}
	default:
		state = s.withoutWriteOnly(state)
	}
	encoded, err := tfprotov6.NewDynamicValue(s.typ, state)
	if err != nil {
		resp.Diagnostics = append(resp.Diagnostics, &tfprotov6.Diagnostic{Severity: tfprotov6.DiagnosticSeverityError,
			Summary: "Encoding the state failed", Detail: "svc_job_batch's state could not be encoded (" + err.Error() + "). This is a bug in the provider."})
		return resp
	}
	resp.NewState = &encoded
	return resp
}

// withoutWriteOnly is state with its write-only attributes null.
func (s *batchApplyServer) withoutWriteOnly(state tftypes.Value) tftypes.Value {
	attrs, ok := objectAttrs(state)
	if !ok {
		return state
	}
	clean := maps.Clone(attrs)
	for _, name := range s.writeOnly {
		if v, ok := clean[name]; ok && !v.IsNull() {
			clean[name] = tftypes.NewValue(v.Type(), nil)
		}
	}
	return tftypes.NewValue(state.Type(), clean)
}

// protoDiagnostics is diags as the plugin protocol carries them (svc_job_batch's apply names
// no attribute in its diagnostics).
func protoDiagnostics(diags diag.Diagnostics) []*tfprotov6.Diagnostic {
	out := make([]*tfprotov6.Diagnostic, 0, len(diags))
	for _, d := range diags {
		severity := tfprotov6.DiagnosticSeverityWarning
		if d.Severity() == diag.SeverityError {
			severity = tfprotov6.DiagnosticSeverityError
		}
		out = append(out, &tfprotov6.Diagnostic{Severity: severity, Summary: d.Summary(), Detail: d.Detail()})
	}
	return out
}
