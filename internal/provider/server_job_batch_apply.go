package provider

import (
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"math"
	"math/big"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
	"github.com/vmihailenco/msgpack/v5"
	"github.com/vmihailenco/msgpack/v5/msgpcode"
)

// The apply of jobBatchServer: every apply of svc_job_batch run by the resource's applyBatch,
// on the values as Terraform sent them, and answered as the framework answers it; below it, the
// MessagePack readers of Terraform's bytes that the apply (and the layer's plan and refresh,
// server_job_batch.go) read values with.

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

// The MessagePack readers: Terraform's bytes of a value (tfprotov6.DynamicValue) read as plain
// Go values, and the bookkeeping read from private state, without building the framework's or
// tftypes' values.

// msgpackNil is the MessagePack encoding of a null value.
const msgpackNil = 0xc0

func isMsgpackNull(raw []byte) bool {
	return len(raw) == 1 && raw[0] == msgpackNil
}

// msgpackObjectFields splits the MessagePack encoding of an object value, as Terraform sends
// it, into each attribute's encoding, without decoding them. null is true for a null object;
// ok is false when raw is not the encoding of an object.
//
// Terraform encodes every value of one type the same way (attributes and map keys in sorted
// order), so two attributes with equal encodings hold equal values; unequal encodings prove
// nothing, and whoever compares them must then decode them.
func msgpackObjectFields(raw []byte) (fields map[string][]byte, null, ok bool) {
	if isMsgpackNull(raw) {
		return nil, true, true
	}
	dec := msgpack.NewDecoder(bytes.NewReader(raw))
	n, err := dec.DecodeMapLen()
	if err != nil || n < 0 {
		return nil, false, false
	}
	fields = make(map[string][]byte, n)
	for range n {
		name, err := dec.DecodeString()
		if err != nil {
			return nil, false, false
		}
		value, err := dec.DecodeRaw()
		if err != nil {
			return nil, false, false
		}
		fields[name] = value
	}
	return fields, false, true
}

// rowsStandIn is the MessagePack encoding of a known dynamic value that is an empty object:
// its type as JSON (["object",{}]), then the value.
var rowsStandIn = append(append([]byte{0x92, 0xc4, byte(len(`["object",{}]`))}, `["object",{}]`...), 0x80)

// msgpackWithRowsStandIn is the MessagePack encoding of a batch's configuration raw with its
// rows, a known map or object, replaced by rowsStandIn, without decoding them; ok is false when
// raw is not an object's encoding or its rows are anything else: null, unknown, or a value of
// another kind or not known (a dynamic value of a known type is an array of its type and its
// value, which may itself be null or unknown).
func msgpackWithRowsStandIn(raw []byte) (config []byte, ok bool) {
	fields, null, ok := msgpackObjectFields(raw)
	if !ok || null || !msgpackDynamicMap(fields[jobBatchAttrRows]) {
		return nil, false
	}
	fields[jobBatchAttrRows] = rowsStandIn
	var b bytes.Buffer
	enc := msgpack.NewEncoder(&b)
	if enc.EncodeMapLen(len(fields)) != nil {
		return nil, false
	}
	for _, name := range slices.Sorted(maps.Keys(fields)) {
		if enc.EncodeString(name) != nil || enc.Encode(msgpack.RawMessage(fields[name])) != nil {
			return nil, false
		}
	}
	return b.Bytes(), true
}

// msgpackDynamicMap reports whether raw encodes a dynamic value that is a known map or object,
// reading no more than its type and the header of its value.
func msgpackDynamicMap(raw []byte) bool {
	dec := msgpack.NewDecoder(bytes.NewReader(raw))
	if n, err := dec.DecodeArrayLen(); err != nil || n != 2 {
		return false
	}
	if _, err := dec.DecodeBytes(); err != nil {
		return false
	}
	c, err := dec.PeekCode()
	return err == nil && (msgpcode.IsFixedMap(c) || c == msgpcode.Map16 || c == msgpcode.Map32)
}

// msgpackDynamicGoValue reads the MessagePack encoding of a known, non-null value of a dynamic
// attribute (its type as JSON, then the value) into the plain Go values goValueOf gives for it,
// reading the type as plain JSON rather than building it (for rows written as a for
// expression, an object type of as many attributes as rows). ok is false for a null or unknown
// value and for any value it cannot read as goValueOf would.
func msgpackDynamicGoValue(raw []byte) (v any, ok bool) {
	dec := msgpack.NewDecoder(bytes.NewReader(raw))
	if n, err := dec.DecodeArrayLen(); err != nil || n != 2 {
		return nil, false
	}
	typeJSON, err := dec.DecodeBytes()
	if err != nil {
		return nil, false
	}
	var typ any
	if json.Unmarshal(typeJSON, &typ) != nil {
		return nil, false
	}
	decoded, err := dec.DecodeInterface()
	if err != nil || decoded == nil {
		return nil, false // an unknown value is an extension no decoder knows
	}
	return typedGoValue(decoded, typ)
}

// typedGoValue is a decoded MessagePack value of type typ (Terraform's JSON spelling of a type:
// "string", "number", "bool", ["list", T], ["set", T], ["map", T], ["object", {name: T}],
// ["tuple", [T...]]) as goValueOf gives it. Numbers come in whatever Go type the encoding sized
// them to, or as a string when neither an int64 nor a float64 holds them exactly; they become
// what jsonNumber makes of them.
func typedGoValue(v any, typ any) (any, bool) {
	if v == nil {
		return nil, true
	}
	switch typ := typ.(type) {
	case string:
		return primitiveGoValue(v, typ)
	case []any:
		if len(typ) < 2 {
			return nil, false
		}
		kind, _ := typ[0].(string)
		return collectionGoValue(v, kind, typ[1])
	}
	return nil, false
}

func primitiveGoValue(v any, typ string) (any, bool) {
	switch typ {
	case "string":
		s, ok := v.(string)
		return s, ok
	case "bool":
		b, ok := v.(bool)
		return b, ok
	case "number":
		f, ok := bigFloatOf(v)
		if !ok {
			return nil, false
		}
		return jsonNumber(f), true
	}
	return nil, false
}

func collectionGoValue(v any, kind string, elem any) (any, bool) {
	switch kind {
	case "list", "set", "tuple":
		elems, ok := v.([]any)
		if !ok {
			return nil, false
		}
		tupleTypes, _ := elem.([]any)
		if kind == "tuple" && len(tupleTypes) != len(elems) {
			return nil, false
		}
		for i, e := range elems {
			et := elem
			if kind == "tuple" {
				et = tupleTypes[i]
			}
			if elems[i], ok = typedGoValue(e, et); !ok {
				return nil, false
			}
		}
		return elems, true
	case "map", "object":
		attrs, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		attrTypes, _ := elem.(map[string]any)
		for name, e := range attrs {
			et := elem
			if kind == "object" {
				if et, ok = attrTypes[name]; !ok {
					return nil, false
				}
			}
			if attrs[name], ok = typedGoValue(e, et); !ok {
				return nil, false
			}
		}
		return attrs, true
	}
	return nil, false
}

// bigFloatOf is a decoded MessagePack number as tftypes reads it: the decoder gives each in the
// Go type the encoding sized it to, or as a string when neither an int64 nor a float64 holds it.
func bigFloatOf(v any) (*big.Float, bool) {
	if s, ok := v.(string); ok {
		f, _, err := big.ParseFloat(s, 10, 512, big.ToNearestEven)
		return f, err == nil
	}
	switch n := v.(type) {
	case int8:
		return new(big.Float).SetInt64(int64(n)), true
	case int16:
		return new(big.Float).SetInt64(int64(n)), true
	case int32:
		return new(big.Float).SetInt64(int64(n)), true
	case int64:
		return new(big.Float).SetInt64(n), true
	case int:
		return new(big.Float).SetInt64(int64(n)), true
	case uint8:
		return new(big.Float).SetUint64(uint64(n)), true
	case uint16:
		return new(big.Float).SetUint64(uint64(n)), true
	case uint32:
		return new(big.Float).SetUint64(uint64(n)), true
	case uint64:
		return new(big.Float).SetUint64(n), true
	case uint:
		return new(big.Float).SetUint64(uint64(n)), true
	case float32:
		return finiteBigFloat(float64(n))
	case float64:
		return finiteBigFloat(n)
	}
	return nil, false
}

// finiteBigFloat is f as a big.Float; NaN is no Terraform number (and big.NewFloat would panic).
func finiteBigFloat(f float64) (*big.Float, bool) {
	if math.IsNaN(f) {
		return nil, false
	}
	return big.NewFloat(f), true
}

// msgpackStringValue reads the MessagePack encoding of a string attribute: null when absent or
// nil; ok is false for an unknown value or anything but a string.
func msgpackStringValue(raw []byte) (v types.String, ok bool) {
	if len(raw) == 0 || isMsgpackNull(raw) {
		return types.StringNull(), true
	}
	s, err := msgpack.NewDecoder(bytes.NewReader(raw)).DecodeString()
	if err != nil {
		return types.String{}, false
	}
	return types.StringValue(s), true
}

// decode is a batch value as its model, nil for a null value; ok is false when it cannot be
// read or is unknown.
func (s *jobBatchServer) decode(v *tfprotov6.DynamicValue) (m *jobBatchModel, ok bool) {
	if v == nil {
		return nil, false
	}
	value, err := v.Unmarshal(s.typ)
	if err != nil || !value.IsKnown() {
		return nil, false
	}
	if value.IsNull() {
		return nil, true
	}
	decoded, ok := decodeJobBatch(value)
	return &decoded, ok
}

// msgpackOf is a value's MessagePack encoding; nil when Terraform sent it otherwise.
func msgpackOf(v *tfprotov6.DynamicValue) []byte {
	if v == nil {
		return nil
	}
	return v.MsgPack
}

// privateBatchBook is the bookkeeping in private state as Terraform sends it: the framework's
// JSON object of keys to (base64) values.
func privateBatchBook(private []byte) batchBook {
	var keys map[string][]byte
	if len(private) == 0 || json.Unmarshal(private, &keys) != nil {
		return batchBook{}
	}
	return decodeBatchBook(keys[batchBookKey])
}
