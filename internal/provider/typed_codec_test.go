package provider

import (
	"context"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// Every attribute of the typed resources, at every level, reaches the model's field of its own
// name: a value with a distinct value in every attribute (each string its own path, each number
// its own, each bool true alone in one value) is decoded by the codec through the attribute
// table, and each field of the model, found by its Go name (PartnerAPIKeyWO for
// partner_api_key_wo), must hold what the framework reads at that attribute's path. Two rows of
// the table (or two entries of a nested object's fields) that swap fields of one type
// (succeeded and failed, completed_at and expires_at) fail here, though they go through the
// codec and back unchanged.
func TestTypedModelsHoldEachAttributeInItsOwnField(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	jobSchema, jobType := jobSchemaForTest(t)
	var batchSchema resource.SchemaResponse
	NewJobBatchResource().Schema(ctx, resource.SchemaRequest{}, &batchSchema)
	batchType := batchSchema.Schema.Type().TerraformType(ctx).(tftypes.Object)
	tests := []struct {
		name   string
		schema resource.SchemaResponse
		values map[string]tftypes.Value
		decode func(tftypes.Value) (any, bool)
	}{
		{"svc_job", jobSchema, distinctValuesForCodecTest(jobType, nil),
			func(v tftypes.Value) (any, bool) { m, ok := decodeJob(v); return m, ok }},
		{"svc_job_batch", batchSchema, distinctValuesForCodecTest(batchType, map[string]tftypes.Value{
			jobBatchAttrRows: tftypes.NewValue(tftypes.Map{ElementType: tftypes.String}, map[string]tftypes.Value{
				"row-a": tftypes.NewValue(tftypes.String, "rows.a"), "row-b": tftypes.NewValue(tftypes.String, "rows.b"),
			}),
		}), func(v tftypes.Value) (any, bool) { m, ok := decodeJobBatch(v); return m, ok }},
	}
	for _, tt := range tests {
		for name, value := range tt.values {
			t.Run(tt.name+"/"+name, func(t *testing.T) {
				t.Parallel()
				m, ok := tt.decode(value)
				if !ok {
					t.Fatal("does not decode")
				}
				plan := tfsdk.Plan{Raw: value, Schema: tt.schema.Schema}
				for attrName := range tt.schema.Schema.Attributes {
					assertFieldHoldsAttribute(ctx, t, plan, path.Root(attrName), reflect.ValueOf(m))
				}
			})
		}
	}
}

// distinctValuesForCodecTest are values of typ with a distinct value in every attribute: every
// attribute set, strings to their path and numbers to their order, and, since two bools are
// told apart only one at a time, one value per bool attribute with it alone true; set overrides
// attributes (the batch's rows, whose type is dynamic).
func distinctValuesForCodecTest(typ tftypes.Object, set map[string]tftypes.Value) map[string]tftypes.Value {
	n := int64(0)
	full := map[string]tftypes.Value{}
	for name, at := range typ.AttributeTypes {
		full[name] = distinctValueForCodecTest(at, name, &n)
	}
	full = withValues(full, set)
	values := map[string]tftypes.Value{"every attribute distinct": tftypes.NewValue(typ, full)}
	for name, at := range typ.AttributeTypes {
		if at.Is(tftypes.Bool) {
			values["only "+name+" true"] = tftypes.NewValue(typ, withValues(full, onlyTrue(typ, name)))
		}
	}
	return values
}

// distinctValueForCodecTest is a known value of typ, every string in it its path (quoted: JSON,
// as a workflow must be), every bool true and every number the next of n.
func distinctValueForCodecTest(typ tftypes.Type, at string, n *int64) tftypes.Value {
	return knownValueForCodecTest(typ, at, func(typ tftypes.Type, at string) tftypes.Value {
		switch {
		case typ.Is(tftypes.Bool):
			return tftypes.NewValue(typ, true)
		case typ.Is(tftypes.Number):
			*n++
			return tftypes.NewValue(typ, *n)
		}
		return tftypes.NewValue(typ, strconv.Quote(at))
	})
}

// assertFieldHoldsAttribute fails unless the field of parent (a model struct, or a nested
// object's struct) named for the attribute at p holds what the framework reads at p, nested
// objects, lists and maps attribute by attribute.
func assertFieldHoldsAttribute(ctx context.Context, t *testing.T, plan tfsdk.Plan, p path.Path, parent reflect.Value) {
	t.Helper()
	step, _ := p.Steps().LastStep()
	name := string(step.(path.PathStepAttributeName))
	field := parent.FieldByName(goFieldName(name))
	if !field.IsValid() {
		t.Errorf("%s: %s has no field %s", p, parent.Type(), goFieldName(name))
		return
	}
	var want attr.Value
	if diags := plan.GetAttribute(ctx, p, &want); diags.HasError() {
		t.Fatalf("%s: the framework does not read it: %v", p, diags)
	}
	assertFieldHolds(ctx, t, plan, p, field, want)
}

// assertFieldHolds fails unless field holds want, the framework's value at p.
func assertFieldHolds(ctx context.Context, t *testing.T, plan tfsdk.Plan, p path.Path, field reflect.Value, want attr.Value) {
	t.Helper()
	switch got := field.Interface().(type) {
	case attr.Value: // types.String, types.Bool, types.Int64, timeouts.Value
		gotTF, _ := got.ToTerraformValue(ctx)
		wantTF, _ := want.ToTerraformValue(ctx)
		if !gotTF.Equal(wantTF) {
			t.Errorf("%s: field %s holds %s, the framework reads %s", p, field.Type(), gotTF, wantTF)
		}
	case jobOutputList:
		list := want.(basetypes.ListValue)
		assertSameState(t, p, got.State, list)
		for i := range got.Elems {
			assertStructHolds(ctx, t, plan, p.AtListIndex(i), reflect.ValueOf(got.Elems[i]))
		}
		if len(got.Elems) != len(list.Elements()) {
			t.Errorf("%s: %d elements, the framework reads %d", p, len(got.Elems), len(list.Elements()))
		}
	case jobErrorObject:
		assertSameState(t, p, got.State, want)
		assertStructHolds(ctx, t, plan, p, field)
	case batchResults:
		results := want.(basetypes.MapValue)
		assertSameState(t, p, got.State, results)
		for key, r := range got.Rows {
			assertStructHolds(ctx, t, plan, p.AtMapKey(key), reflect.ValueOf(r))
		}
		if len(got.Rows) != len(results.Elements()) {
			t.Errorf("%s: %d rows, the framework reads %d", p, len(got.Rows), len(results.Elements()))
		}
	case map[string][]string: // a results element's outputs: asset ids by node id
		wantTF, _ := want.ToTerraformValue(ctx)
		wantIDs, err := batchOutputsOf(wantTF)
		if err != nil || !reflect.DeepEqual(got, wantIDs) {
			t.Errorf("%s: field holds %v, the framework reads %v (%v)", p, got, wantIDs, err)
		}
	case batchRowsValue:
		wantTF, _ := want.ToTerraformValue(ctx)
		wantRows, err := goValueOf(wantTF)
		if !got.Known || got.Err != nil || err != nil || !reflect.DeepEqual(got.Value, wantRows) {
			t.Errorf("%s: field holds %#v, the framework reads %#v", p, got, wantRows)
		}
	default:
		t.Errorf("%s: no comparison for a field of type %T", p, got)
	}
}

// assertStructHolds checks each attribute of the nested object at p against the field of s (a
// nested object's struct) of its name.
func assertStructHolds(ctx context.Context, t *testing.T, plan tfsdk.Plan, p path.Path, s reflect.Value) {
	t.Helper()
	var object attr.Value
	if diags := plan.GetAttribute(ctx, p, &object); diags.HasError() {
		t.Fatalf("%s: the framework does not read it: %v", p, diags)
	}
	o, ok := object.(basetypes.ObjectValue)
	if !ok || o.IsNull() || o.IsUnknown() {
		return // its state is compared by the caller
	}
	for name := range o.AttributeTypes(ctx) {
		assertFieldHoldsAttribute(ctx, t, plan, p.AtName(name), s)
	}
}

// assertSameState fails unless a field's state (null, unknown, known) is the framework's value's.
func assertSameState(t *testing.T, p path.Path, state attr.ValueState, want attr.Value) {
	t.Helper()
	wantState := attr.ValueStateKnown
	switch {
	case want.IsNull():
		wantState = attr.ValueStateNull
	case want.IsUnknown():
		wantState = attr.ValueStateUnknown
	}
	if state != wantState {
		t.Errorf("%s: field is %v, the framework reads %v", p, state, wantState)
	}
}

// goFieldName is the Go name of the field holding the attribute name: its words capitalized,
// initialisms upper case (partner_api_key_wo is PartnerAPIKeyWO).
func goFieldName(name string) string {
	var b strings.Builder
	for _, word := range strings.Split(name, "_") {
		switch word {
		case "id", "api", "wo", "url", "urls":
			b.WriteString(strings.ToUpper(word))
		default:
			r := []rune(word)
			b.WriteString(string(unicode.ToUpper(r[0])) + string(r[1:]))
		}
	}
	return b.String()
}
