package provider

import (
	"context"
	"reflect"
	"slices"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// svc_job's attribute table, its schema, its model and its codec name the same attributes: an
// attribute added to one and not the others fails here. Every value (known, null or unknown, at
// every level of the record) goes through the codec and back unchanged, so each row's field is
// its own and the codec reads and writes every attribute of the schema's type.
func TestJobAttributeTableSchemaAndCodecAgree(t *testing.T) {
	t.Parallel()
	schema, typ := jobSchemaForTest(t)
	var table []string
	for _, a := range jobAttributeTable {
		table = append(table, a.name)
	}
	slices.Sort(table)
	assertSameNames(t, "svc_job's attribute table", table, sortedKeys(schema.Schema.Attributes))
	if fields := modelFieldCount(reflect.TypeFor[jobModel]()); fields != len(jobAttributeTable) {
		t.Errorf("jobModel has %d fields, its attribute table %d rows: a field without a row is never read or written", fields, len(jobAttributeTable))
	}
	for name, value := range jobValuesForCodecTest(typ) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			m, ok := decodeJob(value)
			if !ok {
				t.Fatal("does not decode")
			}
			back, err := encodeJob(&m)
			if err != nil {
				t.Fatal(err)
			}
			if !back.Equal(value) {
				diffs, _ := back.Diff(value)
				t.Fatalf("the codec changed the value: %v", diffs)
			}
		})
	}
}

// modelFieldCount is the number of fields of a model struct, those of embedded structs counted
// one by one.
func modelFieldCount(typ reflect.Type) int {
	n := 0
	for i := range typ.NumField() {
		if f := typ.Field(i); f.Anonymous {
			n += modelFieldCount(f.Type)
		} else {
			n++
		}
	}
	return n
}

// jobValuesForCodecTest are values of svc_job's type: every attribute set (each string
// attribute to its own name, so that two rows reading one field tell), every attribute null,
// and a plan's unknowns.
func jobValuesForCodecTest(typ tftypes.Object) map[string]tftypes.Value {
	full := map[string]tftypes.Value{}
	nulls := map[string]tftypes.Value{}
	unknowns := map[string]tftypes.Value{}
	flip := false
	for name, at := range typ.AttributeTypes {
		nulls[name] = tftypes.NewValue(at, nil)
		unknowns[name] = tftypes.NewValue(at, tftypes.UnknownValue)
		full[name] = fullValueForCodecTest(at, name, &flip)
	}
	partial := map[string]tftypes.Value{}
	for name, v := range full {
		partial[name] = v
	}
	outputs := typ.AttributeTypes[jobAttrOutputs].(tftypes.List)
	partial[jobAttrOutputs] = tftypes.NewValue(outputs, []tftypes.Value{tftypes.NewValue(outputs.ElementType, nullsOf(outputs.ElementType.(tftypes.Object)))})
	partial[jobAttrError] = tftypes.NewValue(typ.AttributeTypes[jobAttrError], nullsOf(typ.AttributeTypes[jobAttrError].(tftypes.Object)))
	partial[jobAttrTimeouts] = tftypes.NewValue(typ.AttributeTypes[jobAttrTimeouts], nullsOf(typ.AttributeTypes[jobAttrTimeouts].(tftypes.Object)))
	values := map[string]tftypes.Value{
		"every attribute set":       tftypes.NewValue(typ, full),
		"every attribute null":      tftypes.NewValue(typ, nulls),
		"every attribute unknown":   tftypes.NewValue(typ, unknowns),
		"nested attributes null":    tftypes.NewValue(typ, partial),
		"no outputs, error unknown": tftypes.NewValue(typ, withValues(full, map[string]tftypes.Value{jobAttrOutputs: tftypes.NewValue(outputs, []tftypes.Value{}), jobAttrError: tftypes.NewValue(typ.AttributeTypes[jobAttrError], tftypes.UnknownValue)})),
	}
	// Two values tell two bool attributes apart only one at a time.
	for name, at := range typ.AttributeTypes {
		if !at.Is(tftypes.Bool) {
			continue
		}
		bools := map[string]tftypes.Value{}
		for other, ot := range typ.AttributeTypes {
			if ot.Is(tftypes.Bool) {
				bools[other] = tftypes.NewValue(tftypes.Bool, other == name)
			}
		}
		values["only "+name+" true"] = tftypes.NewValue(typ, withValues(full, bools))
	}
	return values
}

func nullsOf(typ tftypes.Object) map[string]tftypes.Value {
	out := map[string]tftypes.Value{}
	for name, at := range typ.AttributeTypes {
		out[name] = tftypes.NewValue(at, nil)
	}
	return out
}

func withValues(base, more map[string]tftypes.Value) map[string]tftypes.Value {
	out := map[string]tftypes.Value{}
	for k, v := range base {
		out[k] = v
	}
	for k, v := range more {
		out[k] = v
	}
	return out
}

// fullValueForCodecTest is a known value of typ with every attribute set: a string is name, a
// bool alternates, a number is the name's length, a list holds two elements.
func fullValueForCodecTest(typ tftypes.Type, name string, flip *bool) tftypes.Value {
	return knownValueForCodecTest(typ, name, func(typ tftypes.Type, name string) tftypes.Value {
		switch {
		case typ.Is(tftypes.Bool):
			*flip = !*flip
			return tftypes.NewValue(typ, *flip)
		case typ.Is(tftypes.Number):
			return tftypes.NewValue(typ, int64(len(name)))
		}
		return tftypes.NewValue(typ, name)
	})
}

// knownValueForCodecTest is a known value of typ with every attribute set, each primitive to
// leaf of its type and path (name, then .attribute, [index] or [key]); a list or a map holds two
// elements, a dynamic value is null.
func knownValueForCodecTest(typ tftypes.Type, name string, leaf func(typ tftypes.Type, name string) tftypes.Value) tftypes.Value {
	switch typ := typ.(type) {
	case tftypes.Object:
		attrs := map[string]tftypes.Value{}
		for n, at := range typ.AttributeTypes {
			attrs[n] = knownValueForCodecTest(at, name+"."+n, leaf)
		}
		return tftypes.NewValue(typ, attrs)
	case tftypes.List:
		return tftypes.NewValue(typ, []tftypes.Value{knownValueForCodecTest(typ.ElementType, name+"[0]", leaf),
			knownValueForCodecTest(typ.ElementType, name+"[1]", leaf)})
	case tftypes.Map:
		return tftypes.NewValue(typ, map[string]tftypes.Value{name + "-k0": knownValueForCodecTest(typ.ElementType, name+"[k0]", leaf),
			name + "-k1": knownValueForCodecTest(typ.ElementType, name+"[k1]", leaf)})
	}
	if typ.Is(tftypes.DynamicPseudoType) {
		return tftypes.NewValue(typ, nil)
	}
	return leaf(typ, name)
}

// svc_job_batch's attribute table, its schema, its model and its codec name the same
// attributes, and every value of a plan or a state (rows, write-only, always null there) goes
// through the codec and back unchanged: a row planned unknown, a row's null values, results
// unknown or null.
func TestJobBatchAttributeTableSchemaAndCodecAgree(t *testing.T) {
	t.Parallel()
	var resp resource.SchemaResponse
	NewJobBatchResource().Schema(context.Background(), resource.SchemaRequest{}, &resp)
	typ := resp.Schema.Type().TerraformType(context.Background()).(tftypes.Object)
	var table []string
	for _, a := range jobBatchAttributeTable {
		table = append(table, a.name)
	}
	slices.Sort(table)
	assertSameNames(t, "svc_job_batch's attribute table", table, sortedKeys(resp.Schema.Attributes))
	if fields := modelFieldCount(reflect.TypeFor[jobBatchModel]()); fields != len(jobBatchAttributeTable) {
		t.Errorf("jobBatchModel has %d fields, its attribute table %d rows", fields, len(jobBatchAttributeTable))
	}
	full, nulls, unknowns := map[string]tftypes.Value{}, map[string]tftypes.Value{}, map[string]tftypes.Value{}
	flip := false
	for name, at := range typ.AttributeTypes {
		full[name] = fullValueForCodecTest(at, name, &flip)
		nulls[name], unknowns[name] = tftypes.NewValue(at, nil), tftypes.NewValue(at, tftypes.UnknownValue)
	}
	full["rows"], unknowns["rows"] = nulls["rows"], nulls["rows"]
	full["results"] = tftypes.NewValue(batchResultsTyp, map[string]tftypes.Value{
		"a": fullValueForCodecTest(batchRowType, "a", &flip),
		"b": tftypes.NewValue(batchRowType, tftypes.UnknownValue),
		"c": tftypes.NewValue(batchRowType, nil),
		"d": tftypes.NewValue(batchRowType, nullsOf(batchRowType)),
		"e": tftypes.NewValue(batchRowType, withValues(nullsOf(batchRowType), map[string]tftypes.Value{"outputs": tftypes.NewValue(batchOutputsType, map[string]tftypes.Value{})})),
	})
	values := map[string]tftypes.Value{
		"every attribute set": tftypes.NewValue(typ, full), "every attribute null": tftypes.NewValue(typ, nulls),
		"every attribute unknown but rows": tftypes.NewValue(typ, unknowns),
	}
	for name, at := range typ.AttributeTypes {
		if at.Is(tftypes.Bool) {
			values["only "+name+" true"] = tftypes.NewValue(typ, withValues(full, onlyTrue(typ, name)))
		}
	}
	for name, value := range values {
		m, ok := decodeJobBatch(value)
		if !ok {
			t.Fatalf("%s: does not decode", name)
		}
		back, err := encodeJobBatch(&m)
		if err != nil || !back.Equal(value) {
			diffs, _ := back.Diff(value)
			t.Errorf("%s: the codec changed the value (%v): %v", name, err, diffs)
		}
	}
}

// onlyTrue is every bool attribute of typ false but name.
func onlyTrue(typ tftypes.Object, name string) map[string]tftypes.Value {
	bools := map[string]tftypes.Value{}
	for other, ot := range typ.AttributeTypes {
		if ot.Is(tftypes.Bool) {
			bools[other] = tftypes.NewValue(tftypes.Bool, other == name)
		}
	}
	return bools
}
