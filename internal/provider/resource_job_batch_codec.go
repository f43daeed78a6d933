package provider

import (
	"context"
	"fmt"
	"math/big"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// svc_job_batch's codec: its values as Terraform sends them (tftypes.Value) to and from
// jobBatchModel, attribute by attribute through jobBatchAttributeTable and the typed resources'
// codec (typed_codec.go), without reflection; its own fields (rows, results) code themselves
// here. These files and the server_*.go layers are the only ones of svc_job_batch that handle
// Terraform's raw values.

// The results element is flat on purpose: Terraform walks every value of the resource several
// times in each plan (decoding, comparing, checking, encoding, rendering), so the cost of a
// 10,000-row batch is in the number of values per row. Four attributes and one asset id per
// output cost a third of the values an object per output with an error object did.
var (
	batchRowType     = types.ObjectType{AttrTypes: batchRowAttrTypes}.TerraformType(context.Background()).(tftypes.Object)
	batchOutputsType = batchRowType.AttributeTypes[batchResultAttrOutputs].(tftypes.Map)
	batchAssetsType  = batchOutputsType.ElementType.(tftypes.List)
	batchResultsTyp  = tftypes.Map{ElementType: batchRowType}
	// jobBatchObjectType is svc_job_batch's type, from its schema.
	jobBatchObjectType = schema.Schema{Attributes: jobBatchAttributes()}.Type().TerraformType(context.Background()).(tftypes.Object)
)

// decodeJobBatch reads svc_job_batch's value v into a model; ok is false when v is null,
// unknown, not an object, or holds a value that does not fit its attribute.
func decodeJobBatch(v tftypes.Value) (m jobBatchModel, ok bool) {
	return decodeModel(v, jobBatchAttributeTable)
}

// encodeJobBatch is m as a value of svc_job_batch's type (its rows null: write-only).
func encodeJobBatch(m *jobBatchModel) (tftypes.Value, error) {
	return encodeModel(m, jobBatchAttributeTable, jobBatchObjectType)
}

func (rs *batchRowsValue) fromTerraform(v tftypes.Value) error {
	*rs = batchRowsValueOf(v)
	return nil
}

// toTerraform is null: the rows are write-only, never in a plan or a state.
func (rs *batchRowsValue) toTerraform(typ tftypes.Type) tftypes.Value {
	return tftypes.NewValue(typ, nil)
}

func (rs *batchResults) fromTerraform(v tftypes.Value) (err error) {
	*rs, err = batchResultsOf(v)
	return err
}

// toTerraform is the results map, of its one type (batchResultsTyp).
func (rs *batchResults) toTerraform(tftypes.Type) tftypes.Value { return rs.terraformValue() }

// batchRowsValueOf reads the rows value (goValueOf).
func batchRowsValueOf(v tftypes.Value) batchRowsValue {
	if !v.IsFullyKnown() {
		return batchRowsValue{Err: fmt.Errorf("value is not known yet")}
	}
	value, err := goValueOf(v)
	return batchRowsValue{Known: true, Value: value, Err: err}
}

// batchResultsOf reads the results map.
func batchResultsOf(v tftypes.Value) (batchResults, error) {
	switch {
	case v.Type() == nil:
		return batchResults{}, nil // absent: null
	case !v.IsKnown():
		return batchResults{State: attr.ValueStateUnknown}, nil
	case v.IsNull():
		return batchResults{}, nil
	}
	var elems map[string]tftypes.Value
	if err := v.As(&elems); err != nil {
		return batchResults{}, err
	}
	out := batchResults{State: attr.ValueStateKnown, Rows: make(map[string]batchResult, len(elems))}
	for key, e := range elems {
		r, err := batchResultOf(e)
		if err != nil {
			return batchResults{}, fmt.Errorf("results[%q]: %w", key, err)
		}
		out.Rows[key] = r
	}
	return out, nil
}

// batchResultOf reads one row's element of results.
func batchResultOf(v tftypes.Value) (r batchResult, err error) {
	switch {
	case !v.IsKnown():
		return batchResult{State: attr.ValueStateUnknown}, nil
	case v.IsNull():
		return batchResult{}, nil
	}
	attrs, ok := objectAttrs(v)
	if !ok {
		return r, fmt.Errorf("not an object")
	}
	r.State = attr.ValueStateKnown
	if err := decodeFields(attrs, map[string]any{batchResultAttrID: &r.ID, batchResultAttrStatus: &r.Status, batchResultAttrError: &r.Error}); err != nil {
		return r, err
	}
	r.Outputs, err = batchOutputsOf(attrs[batchResultAttrOutputs])
	return r, err
}

// batchOutputsOf reads a row's outputs: asset ids by node id; nil for null.
func batchOutputsOf(v tftypes.Value) (map[string][]string, error) {
	if v.Type() == nil || v.IsNull() {
		return nil, nil
	}
	var byNode map[string]tftypes.Value
	if err := v.As(&byNode); err != nil {
		return nil, err
	}
	out := make(map[string][]string, len(byNode))
	for node, list := range byNode {
		var ids []tftypes.Value
		if err := list.As(&ids); err != nil {
			return nil, err
		}
		out[node] = make([]string, 0, len(ids))
		for _, id := range ids {
			var s string
			if err := id.As(&s); err != nil {
				return nil, err
			}
			out[node] = append(out[node], s)
		}
	}
	return out, nil
}

func (rs *batchResults) terraformValue() tftypes.Value {
	switch rs.State {
	case attr.ValueStateUnknown:
		return tftypes.NewValue(batchResultsTyp, tftypes.UnknownValue)
	case attr.ValueStateNull:
		return tftypes.NewValue(batchResultsTyp, nil)
	}
	elems := make(map[string]tftypes.Value, len(rs.Rows))
	for key, r := range rs.Rows {
		elems[key] = r.terraformValue()
	}
	return tftypes.NewValue(batchResultsTyp, elems)
}

func (r batchResult) terraformValue() tftypes.Value {
	switch r.State {
	case attr.ValueStateUnknown:
		return tftypes.NewValue(batchRowType, tftypes.UnknownValue)
	case attr.ValueStateNull:
		return tftypes.NewValue(batchRowType, nil)
	}
	outputs := tftypes.NewValue(batchOutputsType, nil)
	if r.Outputs != nil {
		byNode := make(map[string]tftypes.Value, len(r.Outputs))
		for node, ids := range r.Outputs {
			list := make([]tftypes.Value, 0, len(ids))
			for _, id := range ids {
				list = append(list, tftypes.NewValue(tftypes.String, id))
			}
			byNode[node] = tftypes.NewValue(batchAssetsType, list)
		}
		outputs = tftypes.NewValue(batchOutputsType, byNode)
	}
	return tftypes.NewValue(batchRowType, map[string]tftypes.Value{
		batchResultAttrID: stringTerraformValue(r.ID), batchResultAttrStatus: stringTerraformValue(r.Status),
		batchResultAttrOutputs: outputs, batchResultAttrError: stringTerraformValue(r.Error),
	})
}

// goValueOf converts a Terraform value into plain Go values that encode to the equivalent JSON;
// an unknown value anywhere is an error.
func goValueOf(v tftypes.Value) (any, error) {
	if !v.IsFullyKnown() {
		return nil, fmt.Errorf("value is not known yet")
	}
	if v.IsNull() {
		return nil, nil
	}
	typ := v.Type()
	switch {
	case typ.Is(tftypes.String):
		var s string
		return s, v.As(&s)
	case typ.Is(tftypes.Bool):
		var b bool
		return b, v.As(&b)
	case typ.Is(tftypes.Number):
		f := new(big.Float)
		if err := v.As(&f); err != nil {
			return nil, err
		}
		return jsonNumber(f), nil
	case typ.Is(tftypes.List{}), typ.Is(tftypes.Tuple{}), typ.Is(tftypes.Set{}):
		var elems []tftypes.Value
		if err := v.As(&elems); err != nil {
			return nil, err
		}
		return goListOf(elems)
	case typ.Is(tftypes.Map{}), typ.Is(tftypes.Object{}):
		var elems map[string]tftypes.Value
		if err := v.As(&elems); err != nil {
			return nil, err
		}
		return goMapOf(elems)
	}
	return nil, fmt.Errorf("unsupported value type %s", typ)
}

func goListOf(elems []tftypes.Value) ([]any, error) {
	out := make([]any, 0, len(elems))
	for _, e := range elems {
		g, err := goValueOf(e)
		if err != nil {
			return nil, err
		}
		out = append(out, g)
	}
	return out, nil
}

func goMapOf(elems map[string]tftypes.Value) (map[string]any, error) {
	out := make(map[string]any, len(elems))
	for k, e := range elems {
		g, err := goValueOf(e)
		if err != nil {
			return nil, err
		}
		out[k] = g
	}
	return out, nil
}
