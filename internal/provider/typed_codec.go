package provider

import (
	"context"
	"fmt"
	"math/big"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// The codec of the typed resources (svc_job, svc_job_batch): a resource's value as Terraform
// sends it (tftypes.Value) to and from its model struct M, attribute by attribute through the
// resource's attribute table, without reflection. A field is a framework value (types.String,
// types.Bool, types.Int64, timeouts.Value), read and written here, or a value of the resource's
// own that codes itself (terraformField), in that resource's codec file.

// terraformField is a field of a resource's own type (a nested object, a list, the batch's rows
// or results), which reads and writes itself; its methods are in its resource's codec file.
type terraformField interface {
	// fromTerraform reads v into the field.
	fromTerraform(v tftypes.Value) error
	// toTerraform is the field as a value of typ.
	toTerraform(typ tftypes.Type) tftypes.Value
}

// decodeModel reads a resource's value v into its model M through its attribute table; ok is
// false when v is null, unknown, not an object, or holds a value that does not fit its field.
func decodeModel[M any](v tftypes.Value, table []modelAttribute[M]) (m M, ok bool) {
	attrs, ok := objectAttrs(v)
	if !ok {
		return m, false
	}
	for _, a := range table {
		if decodeField(a.field(&m), attrs[a.name]) != nil {
			return m, false
		}
	}
	return m, true
}

// encodeModel is m as a value of typ, the type of the schema its attribute table makes.
func encodeModel[M any](m *M, table []modelAttribute[M], typ tftypes.Object) (v tftypes.Value, err error) {
	// tftypes.NewValue panics on a value that does not fit its type: a bug there is an error.
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	attrs := make(map[string]tftypes.Value, len(table))
	for _, a := range table {
		if attrs[a.name], err = encodeField(a.field(m), typ.AttributeTypes[a.name]); err != nil {
			return tftypes.Value{}, fmt.Errorf("%s: %w", a.name, err)
		}
	}
	return tftypes.NewValue(typ, attrs), nil
}

// decodeField reads v into the field p points to.
func decodeField(p any, v tftypes.Value) (err error) {
	switch p := p.(type) {
	case *types.String:
		*p, err = stringOf(v)
	case *types.Bool:
		*p, err = boolOf(v)
	case *types.Int64:
		*p, err = int64Of(v)
	case *timeouts.Value:
		*p, err = timeoutsOf(v)
	case terraformField:
		err = p.fromTerraform(v)
	default:
		err = fmt.Errorf("no codec for a field of type %T", p)
	}
	return err
}

// encodeField is the field p points to as a value of typ.
func encodeField(p any, typ tftypes.Type) (tftypes.Value, error) {
	switch p := p.(type) {
	case *types.String:
		return stringTerraformValue(*p), nil
	case *types.Bool:
		return primitiveTerraformValue(tftypes.Bool, p.IsUnknown(), p.IsNull(), p.ValueBool()), nil
	case *types.Int64:
		return primitiveTerraformValue(tftypes.Number, p.IsUnknown(), p.IsNull(), p.ValueInt64()), nil
	case *timeouts.Value:
		return timeoutsTerraformValue(*p, typ)
	case terraformField:
		return p.toTerraform(typ), nil
	}
	return tftypes.Value{}, fmt.Errorf("no codec for a field of type %T", p)
}

func stringTerraformValue(s types.String) tftypes.Value {
	return primitiveTerraformValue(tftypes.String, s.IsUnknown(), s.IsNull(), s.ValueString())
}

func primitiveTerraformValue(typ tftypes.Type, unknown, null bool, v any) tftypes.Value {
	switch {
	case unknown:
		return tftypes.NewValue(typ, tftypes.UnknownValue)
	case null:
		return tftypes.NewValue(typ, nil)
	}
	return tftypes.NewValue(typ, v)
}

func stringOf(v tftypes.Value) (types.String, error) {
	var s string
	switch {
	case !v.IsKnown():
		return types.StringUnknown(), nil
	case v.IsNull():
		return types.StringNull(), nil
	}
	err := v.As(&s)
	return types.StringValue(s), err
}

func boolOf(v tftypes.Value) (types.Bool, error) {
	var b bool
	switch {
	case !v.IsKnown():
		return types.BoolUnknown(), nil
	case v.IsNull():
		return types.BoolNull(), nil
	}
	err := v.As(&b)
	return types.BoolValue(b), err
}

func int64Of(v tftypes.Value) (types.Int64, error) {
	switch {
	case !v.IsKnown():
		return types.Int64Unknown(), nil
	case v.IsNull():
		return types.Int64Null(), nil
	}
	f := new(big.Float)
	if err := v.As(&f); err != nil {
		return types.Int64{}, err
	}
	n, acc := f.Int64()
	if acc != big.Exact {
		return types.Int64{}, fmt.Errorf("%s is not an int64", f)
	}
	return types.Int64Value(n), nil
}

// timeoutsOf reads a timeouts value as the timeouts package does.
func timeoutsOf(v tftypes.Value) (timeouts.Value, error) {
	if v.Type() == nil {
		return timeouts.Value{}, nil // absent: null
	}
	ctx := context.Background()
	value, err := timeoutsTypeOf(v.Type()).ValueFromTerraform(ctx, v)
	if err != nil {
		return timeouts.Value{}, err
	}
	t, ok := value.(timeouts.Value)
	if !ok {
		return timeouts.Value{}, fmt.Errorf("timeouts read as %T", value)
	}
	return t, nil
}

// timeoutOf is the timeout that timeout (timeouts.Value.Create, .Update or .Delete) reads from
// a typed resource's timeouts t (as timeoutsOf decoded them), or def when t is null or not known
// yet.
func timeoutOf(ctx context.Context, t timeouts.Value, def time.Duration,
	timeout func(timeouts.Value, context.Context, time.Duration) (time.Duration, diag.Diagnostics),
) (time.Duration, diag.Diagnostics) {
	if t.IsNull() || t.IsUnknown() {
		return def, nil
	}
	return timeout(t, ctx, def)
}

// timeoutsTypeOf is the timeouts type of the value type typ: svc_job's and svc_job_batch's made
// once (a plan of many jobs reads one per call), any other made now.
func timeoutsTypeOf(typ tftypes.Type) timeouts.Type {
	for _, known := range knownTimeoutsTypes {
		if known.tf.Equal(typ) {
			return known.typ
		}
	}
	return timeouts.Type{ObjectType: types.ObjectType{AttrTypes: timeoutsAttrTypesOf(typ)}}
}

// knownTimeoutsType is a timeouts type made once, beside its value type.
type knownTimeoutsType struct {
	tf  tftypes.Type
	typ timeouts.Type
}

// knownTimeoutsTypes are the timeouts types of svc_job and svc_job_batch.
var knownTimeoutsTypes = func() []knownTimeoutsType {
	var out []knownTimeoutsType
	for _, tf := range []tftypes.Type{jobObjectType.AttributeTypes[jobAttrTimeouts], jobBatchObjectType.AttributeTypes[jobBatchAttrTimeouts]} {
		out = append(out, knownTimeoutsType{tf: tf, typ: timeouts.Type{ObjectType: types.ObjectType{AttrTypes: timeoutsAttrTypesOf(tf)}}})
	}
	return out
}()

// timeoutsAttrTypesOf is the attribute types of a timeouts object type: every attribute a string.
func timeoutsAttrTypesOf(typ tftypes.Type) map[string]attr.Type {
	object, _ := typ.(tftypes.Object)
	out := make(map[string]attr.Type, len(object.AttributeTypes))
	for name := range object.AttributeTypes {
		out[name] = types.StringType
	}
	return out
}

func timeoutsTerraformValue(t timeouts.Value, typ tftypes.Type) (tftypes.Value, error) {
	switch {
	case t.IsUnknown():
		return tftypes.NewValue(typ, tftypes.UnknownValue), nil
	case t.IsNull():
		return tftypes.NewValue(typ, nil), nil
	}
	return t.ToTerraformValue(context.Background())
}

func decodeFields(attrs map[string]tftypes.Value, fields map[string]any) error {
	for name, p := range fields {
		if err := decodeField(p, attrs[name]); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	return nil
}

// encodeFields is fields as an object of type typ.
func encodeFields(fields map[string]any, typ tftypes.Object) tftypes.Value {
	attrs := make(map[string]tftypes.Value, len(fields))
	for name, p := range fields {
		attrs[name], _ = encodeField(p, typ.AttributeTypes[name]) // every field is a primitive: no error
	}
	return tftypes.NewValue(typ, attrs)
}

// objectAttrs is the attributes of v, an object; ok is false when v is null, unknown or not an
// object. The map is v's own (tftypes hands it over): it is cloned before any change.
func objectAttrs(v tftypes.Value) (attrs map[string]tftypes.Value, ok bool) {
	if !v.IsKnown() || v.IsNull() || v.As(&attrs) != nil {
		return nil, false
	}
	return attrs, true
}

// stringAttr is attrs[name] as a string; "" when missing, null, unknown or not a string.
func stringAttr(attrs map[string]tftypes.Value, name string) string {
	var s string
	if v, ok := attrs[name]; ok && v.IsKnown() && !v.IsNull() && v.As(&s) == nil {
		return s
	}
	return ""
}
