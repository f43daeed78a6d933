package provider

import (
	"context"
	"encoding/json"
	"maps"
	"strings"
	"unicode/utf8"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// The apply of jobBatchServer: every apply of svc_job_batch run by the resource's applyBatch,
// on the values as Terraform sent them, and answered as the framework answers it.

// ApplyResourceChange answers every apply of svc_job_batch itself (create, update, destroy),
// through applyBatch: the framework's Create, Update and Delete are that same call.
func (s *jobBatchServer) ApplyResourceChange(ctx context.Context, req *tfprotov6.ApplyResourceChangeRequest) (*tfprotov6.ApplyResourceChangeResponse, error) {
	if req.TypeName != jobBatchTypeName {
		return s.ProviderServer.ApplyResourceChange(ctx, req)
	}
	return s.apply(ctx, req), nil
}

// apply applies a create, an update or a destroy of a batch as the framework's path does,
// without its walks over every value of every row (of the prior state, the plan and the
// configuration): applyBatch, given the values as Terraform sent them, sets the new state and
// the bookkeeping; the framework would then keep the plan's private state but for the
// resource's keys (and drop it with the state of a batch destroyed), null the write-only
// attributes (the plan holds them null already), and find the new state semantically equal to
// itself. A request it cannot read is answered with an error and the prior state, before
// anything is sent.
func (s *jobBatchServer) apply(ctx context.Context, req *tfprotov6.ApplyResourceChangeRequest) *tfprotov6.ApplyResourceChangeResponse {
	in, diags := s.applyRequest(req)
	private, ok := frameworkPrivate(req.PlannedPrivate)
	if !ok {
		diags.AddError("Reading the private state failed", "svc_job_batch's private state is not a JSON object of JSON values. Nothing was sent. This is a bug in the provider.")
	}
	data := s.configured()
	if data == nil && in.planned != nil {
		diags.AddError("Provider not configured", "svc_job_batch was applied before the provider was configured. Nothing was sent. This is a bug in the provider.")
	}
	if diags.HasError() {
		return &tfprotov6.ApplyResourceChangeResponse{NewState: req.PriorState, Private: req.PlannedPrivate, Diagnostics: protocolDiagnostics(diags)}
	}
	applied := (&jobBatchResource{data: data}).applyBatch(ctx, in, private, &diags)
	newState := tftypes.NewValue(s.typ, nil)
	if applied != nil {
		var err error
		if newState, err = encodeJobBatch(applied); err != nil {
			diags.AddError("Saving the batch in state failed", err.Error()+"\n\nThis is a bug in the provider.")
			newState = tftypes.NewValue(s.typ, nil)
		}
	}
	if in.planned == nil && applied == nil {
		private = &privateKeys{} // the framework forgets the private state of a batch destroyed
	}
	return s.appliedResponse(newState, in.planned != nil, private, diags)
}

// applyRequest reads an apply's values: the plan and the prior state decoded, and of the
// configuration only the write-only rows and key (see applyConfig).
func (s *jobBatchServer) applyRequest(req *tfprotov6.ApplyResourceChangeRequest) (in batchApplyRequest, diags diag.Diagnostics) {
	planned, okPlan := s.decode(req.PlannedState)
	prior, okPrior := s.decode(req.PriorState)
	if !okPlan || !okPrior || (planned == nil && prior == nil) {
		diags.AddError("Reading the plan failed", "The plan of svc_job_batch is not a known object. Nothing was sent. This is a bug in the provider.")
		return in, diags
	}
	in = batchApplyRequest{planned: planned, held: prior, book: batchBook{}} // Create starts from no bookkeeping
	if prior != nil {
		in.book = privateBatchBook(req.PlannedPrivate)
	}
	if planned != nil {
		in.config = s.applyConfig(req.Config)
	}
	return in, diags
}

// applyConfig reads of the configuration only the write-only rows and key, the rows without
// building their type (an object of as many attributes as rows when they come from a for
// expression); a configuration it cannot read so is decoded whole, as the framework does.
func (s *jobBatchServer) applyConfig(v *tfprotov6.DynamicValue) batchApplyConfig {
	if config, null, ok := msgpackObjectFields(msgpackOf(v)); ok && !null {
		rows, okRows := msgpackDynamicGoValue(config["rows"])
		apiKeyWO, okKey := msgpackStringValue(config["partner_api_key_wo"])
		if okRows && okKey {
			return batchApplyConfig{known: true, rows: rows, apiKeyWO: apiKeyWO}
		}
	}
	config, ok := s.decode(v)
	if !ok || config == nil {
		return batchApplyConfig{}
	}
	return batchApplyConfigOf(*config, true)
}

// appliedResponse is the framework's answer to an apply that left newState, private and diags;
// planned is whether the apply had a plan (a destroy leaves no state).
func (s *jobBatchServer) appliedResponse(newState tftypes.Value, planned bool, private *privateKeys, diags diag.Diagnostics) *tfprotov6.ApplyResourceChangeResponse {
	if planned && !diags.HasError() && newState.IsNull() {
		// The resource's apply sets a state on every way out without an error: this is a bug,
		// which the framework reports so.
		diags.AddError("Missing Resource State After Apply", "The Terraform Provider unexpectedly returned no resource state "+
			"after having no errors in the resource's apply. This is always an issue in the Terraform Provider and should be "+
			"reported to the provider developers.")
	}
	resp := &tfprotov6.ApplyResourceChangeResponse{Diagnostics: protocolDiagnostics(diags)}
	encoded, err := tfprotov6.NewDynamicValue(s.typ, s.withWriteOnlyNull(newState))
	if err != nil {
		resp.Diagnostics = append(resp.Diagnostics, &tfprotov6.Diagnostic{Severity: tfprotov6.DiagnosticSeverityError,
			Summary: "Encoding the batch's state failed", Detail: err.Error() + "\n\nThis is a bug in the provider."})
		return resp
	}
	resp.NewState = &encoded
	resp.Private = private.bytes()
	return resp
}

// withWriteOnlyNull is state with its write-only attributes null, as the framework hands every
// new state back.
func (s *jobBatchServer) withWriteOnlyNull(state tftypes.Value) tftypes.Value {
	attrs, ok := objectAttrs(state)
	if !ok {
		return state
	}
	attrs = maps.Clone(attrs)
	for _, name := range s.writeOnly {
		attrs[name] = tftypes.NewValue(s.typ.(tftypes.Object).AttributeTypes[name], nil)
	}
	return tftypes.NewValue(s.typ, attrs)
}

// privateKeys is a private state as the framework keeps it: its own keys (a "." prefix) and the
// resource's, each a JSON value.
type privateKeys struct {
	keys map[string][]byte
}

// frameworkPrivate reads a private state as the framework does; ok is false when the framework
// would not read it as it is (not a JSON object of JSON values), which the framework then answers.
func frameworkPrivate(raw []byte) (*privateKeys, bool) {
	p := &privateKeys{keys: map[string][]byte{}}
	if len(raw) == 0 {
		return p, true
	}
	if json.Unmarshal(raw, &p.keys) != nil {
		return nil, false
	}
	for _, v := range p.keys {
		if !utf8.Valid(v) || !json.Valid(v) {
			return nil, false
		}
	}
	return p, true
}

// SetKey sets a key of the resource's, as the framework's private state does: an empty value
// removes it, and a value must be JSON.
func (p *privateKeys) SetKey(_ context.Context, key string, value []byte) diag.Diagnostics {
	var diags diag.Diagnostics
	switch {
	case strings.HasPrefix(key, "."):
		diags.AddError("Restricted Resource Private State Namespace", "Using a period ('.') as a prefix for a key used in private state is not allowed.")
	case len(value) == 0:
		delete(p.keys, key)
	case !utf8.Valid(value) || !json.Valid(value):
		diags.AddError("JSON Invalid", "Values stored in private state must be valid JSON.")
	default:
		p.keys[key] = value
	}
	return diags
}

// bytes is the private state as the framework encodes it: nil when it holds nothing.
func (p *privateKeys) bytes() []byte {
	if len(p.keys) == 0 {
		return nil
	}
	raw, err := json.Marshal(p.keys)
	if err != nil {
		return nil // []byte values always encode
	}
	return raw
}

// protocolDiagnostics are diags as the framework hands them to Terraform.
func protocolDiagnostics(diags diag.Diagnostics) []*tfprotov6.Diagnostic {
	var out []*tfprotov6.Diagnostic
	for _, d := range diags {
		pd := &tfprotov6.Diagnostic{Summary: d.Summary(), Detail: d.Detail(), Severity: tfprotov6.DiagnosticSeverityInvalid}
		switch d.Severity() {
		case diag.SeverityError:
			pd.Severity = tfprotov6.DiagnosticSeverityError
		case diag.SeverityWarning:
			pd.Severity = tfprotov6.DiagnosticSeverityWarning
		}
		if withPath, ok := d.(diag.DiagnosticWithPath); ok {
			pd.Attribute = attributePath(withPath.Path())
		}
		out = append(out, pd)
	}
	return out
}

// attributePath is a path of attribute names and element keys in Terraform's terms.
func attributePath(p path.Path) *tftypes.AttributePath {
	out := tftypes.NewAttributePath()
	for _, step := range p.Steps() {
		switch step := step.(type) {
		case path.PathStepAttributeName:
			out = out.WithAttributeName(string(step))
		case path.PathStepElementKeyString:
			out = out.WithElementKeyString(string(step))
		case path.PathStepElementKeyInt:
			out = out.WithElementKeyInt(int(step))
		}
	}
	return out
}
