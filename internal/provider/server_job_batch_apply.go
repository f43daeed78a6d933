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

// The apply of jobBatchServer: a create or an update of svc_job_batch run by the resource's own
// apply, on the values as Terraform sent them, and answered as the framework answers it.

// applyRows applies a create or an update of a batch as the framework's path does, without its
// walks over every value of every row (of the prior state, the plan and the configuration): the
// resource's apply, given the values as Terraform sent them, sets the new state and the
// bookkeeping; the framework would then keep the plan's private state but for the resource's
// keys, null the write-only attributes (the plan holds them null already), and find the new
// state semantically equal to itself. nil, before anything is sent, when the call is one the
// framework must answer: the provider not configured, a value it cannot read.
func (s *jobBatchServer) applyRows(ctx context.Context, req *tfprotov6.ApplyResourceChangeRequest) *tfprotov6.ApplyResourceChangeResponse {
	data := s.configured()
	if data == nil {
		return nil
	}
	in, ok := s.applyRequest(req)
	if !ok {
		return nil
	}
	private, ok := frameworkPrivate(req.PlannedPrivate)
	if !ok {
		return nil
	}
	var diags diag.Diagnostics
	applied := (&jobBatchResource{data: data}).apply(ctx, in, private, &diags)
	if applied == nil {
		applied = in.held // an update that sets no state keeps the prior one; a create, none
	}
	newState := tftypes.NewValue(s.typ, nil)
	if applied != nil {
		var err error
		if newState, err = encodeJobBatch(applied); err != nil {
			diags.AddError("Saving the batch in state failed", err.Error()+"\n\nThis is a bug in the provider.")
			newState = tftypes.NewValue(s.typ, nil)
		}
	}
	return s.appliedResponse(newState, private, diags)
}

// applyRequest reads an apply's values: the plan and the prior state decoded, and of the
// configuration only the write-only rows and key (the rows read without building their type, an
// object of as many attributes as rows when they come from a for expression). ok is false for a
// destroy or any value it cannot read.
func (s *jobBatchServer) applyRequest(req *tfprotov6.ApplyResourceChangeRequest) (in batchApplyRequest, ok bool) {
	planned, ok := s.decode(req.PlannedState)
	if !ok || planned == nil {
		return in, false
	}
	prior, ok := s.decode(req.PriorState)
	if !ok {
		return in, false
	}
	config, null, ok := msgpackObjectFields(msgpackOf(req.Config))
	if !ok || null {
		return in, false
	}
	rows, ok := msgpackDynamicGoValue(config["rows"])
	if !ok {
		return in, false
	}
	apiKeyWO, ok := msgpackStringValue(config["partner_api_key_wo"])
	if !ok {
		return in, false
	}
	in = batchApplyRequest{planned: *planned, held: prior, book: privateBatchBook(req.PlannedPrivate), update: prior != nil,
		config: batchApplyConfig{known: true, rows: rows, apiKeyWO: apiKeyWO}}
	if !in.update {
		in.book = batchBook{} // Create starts from no bookkeeping
	}
	return in, true
}

// appliedResponse is the framework's answer to an apply that left newState, private and diags.
func (s *jobBatchServer) appliedResponse(newState tftypes.Value, private *privateKeys, diags diag.Diagnostics) *tfprotov6.ApplyResourceChangeResponse {
	if !diags.HasError() && newState.IsNull() {
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
