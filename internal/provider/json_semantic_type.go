package provider

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/attr/xattr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/svc-org/terraform-provider-svc/internal/canonicaljson"
)

var (
	_ basetypes.StringTypable                    = jsonSemanticType{}
	_ basetypes.StringValuableWithSemanticEquals = jsonSemantic{}
	_ xattr.ValidateableAttribute                = jsonSemantic{}
)

// jsonSemanticType is a string attribute holding a JSON document, where two documents that
// differ only in whitespace, key order or the spelling of a number (1, 1.0, 1e0) are the same
// value. It replaces jsontypes.Normalized, whose equality tells 1 from 1.0 and whose syntax
// error echoes the whole document: this one names the line and column instead.
type jsonSemanticType struct {
	basetypes.StringType
}

func (t jsonSemanticType) String() string { return "provider.jsonSemanticType" }

func (t jsonSemanticType) Equal(o attr.Type) bool {
	_, ok := o.(jsonSemanticType)
	return ok
}

func (t jsonSemanticType) ValueType(context.Context) attr.Value { return jsonSemantic{} }

func (t jsonSemanticType) ValueFromString(_ context.Context, in basetypes.StringValue) (basetypes.StringValuable, diag.Diagnostics) {
	return jsonSemantic{StringValue: in}, nil
}

func (t jsonSemanticType) ValueFromTerraform(ctx context.Context, in tftypes.Value) (attr.Value, error) {
	v, err := t.StringType.ValueFromTerraform(ctx, in)
	if err != nil {
		return nil, err
	}
	s, ok := v.(basetypes.StringValue)
	if !ok {
		return nil, fmt.Errorf("unexpected value type %T", v)
	}
	return jsonSemantic{StringValue: s}, nil
}

// jsonSemantic is a value of jsonSemanticType.
type jsonSemantic struct {
	basetypes.StringValue
}

func newJSONSemanticValue(s string) jsonSemantic {
	return jsonSemantic{StringValue: basetypes.NewStringValue(s)}
}

func (v jsonSemantic) Type(context.Context) attr.Type { return jsonSemanticType{} }

func (v jsonSemantic) Equal(o attr.Value) bool {
	other, ok := o.(jsonSemantic)
	return ok && v.StringValue.Equal(other.StringValue)
}

// StringSemanticEquals reports whether both documents have the same canonical form. The
// framework uses it to keep the configured spelling when the service answers with another.
func (v jsonSemantic) StringSemanticEquals(_ context.Context, o basetypes.StringValuable) (bool, diag.Diagnostics) {
	other, err := o.ToStringValue(context.Background())
	if err != nil {
		return false, err
	}
	return jsonEquivalent(v.StringValue, other), nil
}

// jsonEquivalent is true when a and b are both known JSON documents meaning the same.
func jsonEquivalent(a, b basetypes.StringValue) bool {
	if a.IsNull() || a.IsUnknown() || b.IsNull() || b.IsUnknown() {
		return false
	}
	if a.ValueString() == b.ValueString() {
		return true
	}
	return canonicaljson.Equal([]byte(a.ValueString()), []byte(b.ValueString()))
}

// ValidateAttribute refuses a document that is not JSON, naming the line and column of the
// first problem rather than echoing the document back.
func (v jsonSemantic) ValidateAttribute(_ context.Context, req xattr.ValidateAttributeRequest, resp *xattr.ValidateAttributeResponse) {
	if v.IsNull() || v.IsUnknown() {
		return
	}
	doc := []byte(v.ValueString())
	if json.Valid(doc) {
		return // every document json.Valid accepts has a canonical form; only a bad one is located
	}
	if _, err := canonicaljson.Canonical(doc); err != nil {
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid JSON", err.Error())
	}
}
