package provider

import (
	"math"
	"math/big"
	"reflect"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// msgpackDynamicGoValue reads a dynamic value as goValueOf does, or refuses it: never another
// value.
func TestMsgpackDynamicGoValueReadsAsGoValueOf(t *testing.T) {
	t.Parallel()
	inputs := func(attrs map[string]tftypes.Value) tftypes.Value {
		types := map[string]tftypes.Type{}
		for k, v := range attrs {
			types[k] = v.Type()
		}
		return tftypes.NewValue(tftypes.Object{AttributeTypes: types}, attrs)
	}
	num := func(s string) tftypes.Value {
		f, _, err := big.ParseFloat(s, 10, 512, big.ToNearestEven)
		if err != nil {
			t.Fatal(err)
		}
		return tftypes.NewValue(tftypes.Number, f)
	}
	str := func(s string) tftypes.Value { return tftypes.NewValue(tftypes.String, s) }
	strings := tftypes.List{ElementType: tftypes.String}
	tests := []struct {
		name  string
		value tftypes.Value
		read  bool // false: refused, and left to the framework's decoding
	}{
		{"strings", inputs(map[string]tftypes.Value{"6": inputs(map[string]tftypes.Value{"text": str("a cat"), "empty": str("")})}), true},
		{"whole numbers", inputs(map[string]tftypes.Value{"2": inputs(map[string]tftypes.Value{"seed": num("0"), "big": num("9007199254740993"), "neg": num("-7"), "max": num("9223372036854775807")})}), true},
		{"fractions and a whole float", inputs(map[string]tftypes.Value{"2": inputs(map[string]tftypes.Value{"denoise": num("0.5"), "cfg": num("7.0"), "tiny": num("1e-300"), "huge": num("1e300")})}), true},
		{"bools, nulls and lists", inputs(map[string]tftypes.Value{"2": inputs(map[string]tftypes.Value{"on": tftypes.NewValue(tftypes.Bool, true),
			"none": tftypes.NewValue(tftypes.String, nil), "tags": tftypes.NewValue(strings, []tftypes.Value{str("a"), str("b")}),
			"set": tftypes.NewValue(tftypes.Set{ElementType: tftypes.Number}, []tftypes.Value{num("1"), num("2")}),
			"ref": tftypes.NewValue(tftypes.Tuple{ElementTypes: []tftypes.Type{tftypes.String, tftypes.Number}}, []tftypes.Value{str("1"), num("0")})})}), true},
		{"empty collections", inputs(map[string]tftypes.Value{"2": inputs(map[string]tftypes.Value{"tags": tftypes.NewValue(strings, []tftypes.Value{}),
			"none": tftypes.NewValue(tftypes.Map{ElementType: tftypes.String}, map[string]tftypes.Value{})})}), true},
		{"a map of rows (tomap)", tftypes.NewValue(tftypes.Map{ElementType: tftypes.Map{ElementType: tftypes.String}},
			map[string]tftypes.Value{"a": tftypes.NewValue(tftypes.Map{ElementType: tftypes.String}, map[string]tftypes.Value{"text": str("5")})}), true},
		// Terraform spells as a string a number that neither an int64 nor a float64 holds
		// exactly (0.1 among them): the type tells it from a string.
		{"strings that read as numbers beside numbers", inputs(map[string]tftypes.Value{"2": inputs(map[string]tftypes.Value{"seed": num("1"), "text": str("42"), "denoise": str("0.1")})}), true},
		{"numbers no float64 holds", inputs(map[string]tftypes.Value{"2": inputs(map[string]tftypes.Value{"denoise": num("0.1"), "fine": num("0.1000000000000000000000001")})}), true},
		{"an integer past int64", inputs(map[string]tftypes.Value{"2": inputs(map[string]tftypes.Value{"seed": num("18446744073709551615"), "huge": num("1e400")})}), true},
		{"unknown", inputs(map[string]tftypes.Value{"2": inputs(map[string]tftypes.Value{"seed": tftypes.NewValue(tftypes.Number, tftypes.UnknownValue)})}), false},
		{"null", tftypes.NewValue(tftypes.Object{AttributeTypes: map[string]tftypes.Type{}}, nil), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			encoded, err := tfprotov6.NewDynamicValue(tftypes.DynamicPseudoType, tt.value)
			if err != nil {
				t.Fatal(err)
			}
			got, ok := msgpackDynamicGoValue(encoded.MsgPack)
			if ok != tt.read {
				t.Fatalf("read %v (%#v), want %v", ok, got, tt.read)
			}
			if !ok {
				return
			}
			want, err := goValueOf(tt.value)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("got  %#v\nwant %#v", got, want)
			}
		})
	}
}

func TestMsgpackObjectFields(t *testing.T) {
	t.Parallel()
	typ := tftypes.Object{AttributeTypes: map[string]tftypes.Type{"a": tftypes.String, "b": tftypes.Number}}
	encoded, err := tfprotov6.NewDynamicValue(typ, tftypes.NewValue(typ, map[string]tftypes.Value{"a": tftypes.NewValue(tftypes.String, "x"), "b": tftypes.NewValue(tftypes.Number, nil)}))
	if err != nil {
		t.Fatal(err)
	}
	fields, null, ok := msgpackObjectFields(encoded.MsgPack)
	if !ok || null || len(fields) != 2 || !isMsgpackNull(fields["b"]) || string(fields["a"]) != "\xa1x" {
		t.Fatalf("fields %q, null %v, ok %v", fields, null, ok)
	}
	nullValue, _ := tfprotov6.NewDynamicValue(typ, tftypes.NewValue(typ, nil))
	if _, null, ok := msgpackObjectFields(nullValue.MsgPack); !null || !ok {
		t.Fatalf("null object: null %v, ok %v", null, ok)
	}
	if _, _, ok := msgpackObjectFields([]byte{0x92, 0x01, 0x02}); ok {
		t.Fatal("an array read as an object")
	}
}

// A number read from the encoding is what tftypes reads; NaN, which no Terraform number is, is
// refused rather than handed to big.NewFloat (which panics on it).
func TestBigFloatOf(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   any
		want string // "" when refused
	}{
		{int8(-7), "-7"}, {uint16(300), "300"}, {int64(9007199254740993), "9.007199254740993e+15"},
		{uint64(18446744073709551615), "1.8446744073709551615e+19"}, {float32(0.5), "0.5"}, {float64(1e300), "1e+300"},
		{"0.1", "0.1"}, {math.NaN(), ""}, {true, ""}, {"x", ""},
	}
	for _, tt := range tests {
		f, ok := bigFloatOf(tt.in)
		if got := ""; ok {
			got = f.Text('g', -1)
			if got != tt.want {
				t.Errorf("bigFloatOf(%#v) = %s, want %s", tt.in, got, tt.want)
			}
		} else if tt.want != "" {
			t.Errorf("bigFloatOf(%#v) refused, want %s", tt.in, tt.want)
		}
	}
}
