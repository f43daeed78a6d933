package canonicaljson

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestNumber(t *testing.T) {
	t.Parallel()
	for lit, want := range map[string]string{
		"1": "1", "1.0": "1", "1e0": "1", "10E-1": "1", "1.000e+0": "1", "-0": "0", "-0.0e5": "0",
		"0.5": "0.5", "5e-1": "0.5", "-12.5e3": "-12500", "100": "100", "1e2": "100",
		"9007199254740993":      "9007199254740993", // 2^53 + 1 keeps its last digit
		"0.1000000000000000055": "0.1000000000000000055",
		"1e20":                  "100000000000000000000", "1e21": "1e21", "1.5e30": "1.5e30",
		"1e-6": "0.000001", "1e-7": "1e-7", "-2.50e-8": "-2.5e-8", "1e400": "1e400",
		"1e99999999999999999999": "1e99999999999999999999", // exponent too large: kept as written
	} {
		if got := Number(lit); got != want {
			t.Errorf("Number(%s) = %s, want %s", lit, got, want)
		}
	}
}

func TestCanonicalAndEqual(t *testing.T) {
	t.Parallel()
	a := `{"b": [1, 2.0, {"y": true, "x": null}], "a": "<&>", "c": 1e3}`
	b := "{\n  \"c\": 1000,\n  \"a\": \"<&>\",\n  \"b\": [1.0, 2, {\"x\": null, \"y\": true}]\n}\n"
	got, err := Canonical([]byte(a))
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"a":"<&>","b":[1,2,{"x":null,"y":true}],"c":1000}`; string(got) != want {
		t.Errorf("Canonical = %s, want %s", got, want)
	}
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{a, b, true},
		{`{"a":1}`, `{"a":2}`, false},
		{`{"a":"1"}`, `{"a":1}`, false},
		{`[1,2]`, `[2,1]`, false},
		{`{"a":1}`, `{"a":1`, false},
		{`{"s":"\u00e9"}`, `{"s":"é"}`, true},
	} {
		if got := Equal([]byte(tc.a), []byte(tc.b)); got != tc.want {
			t.Errorf("Equal(%s, %s) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}

func TestCanonicalLocatesSyntaxErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		doc       string
		line, col int
	}{
		{"{\n  \"a\": 1,\n  \"b\": x\n}", 3, 8},
		{"{\"a\": 1,}", 1, 9},
		{"{\n \"a\": [1, 2\n", 3, 1},
		{"{} {}", 1, 4},
		{"", 1, 1},
	} {
		_, err := Canonical([]byte(tc.doc))
		var syn *SyntaxError
		if !errors.As(err, &syn) {
			t.Errorf("Canonical(%q) error %v, want a SyntaxError", tc.doc, err)
			continue
		}
		if syn.Line != tc.line || syn.Column != tc.col {
			t.Errorf("Canonical(%q): %v, want line %d column %d", tc.doc, err, tc.line, tc.col)
		}
	}
}

// TestCanonicalForms: whole documents, including what the UI converter's output relies on
// (seeds up to 2^64-1 kept exactly, no HTML escaping, exactly one value).
func TestCanonicalForms(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want, wantErr string }{
		{in: "{ \"b\" : [1.0, 2.50, 1e2, -0, -0.0],\n \"a\": {\"y\": true, \"x\": null} }", want: `{"a":{"x":null,"y":true},"b":[1,2.5,100,0,0]}`},
		{in: `18446744073709551615`, want: `18446744073709551615`},
		{in: `1.5e300`, want: `1.5e300`},
		{in: `0.000001`, want: `0.000001`},
		{in: `1e-7`, want: `1e-7`},
		{in: `1e400`, want: `1e400`}, // beyond float64, kept as its exact value
		{in: `"<a & b>\u00e9"`, want: `"<a & b>é"`},
		{in: `{"a":1} {"b":2}`, wantErr: "something follows the end of the document"},
		{in: `{"a":`, wantErr: "ends early"},
	}
	for _, tt := range tests {
		got, err := Canonical([]byte(tt.in))
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("Canonical(%s) = %s, %v; want error %q", tt.in, got, err, tt.wantErr)
			}
			continue
		}
		if err != nil || string(got) != tt.want {
			t.Errorf("Canonical(%s) = %s, %v; want %s", tt.in, got, err, tt.want)
		}
	}
}

// FuzzCanonical: the canonical form is a fixed point, and means what the input meant.
func FuzzCanonical(f *testing.F) {
	for _, s := range []string{`{"b":[1.0,2.5e3,-0],"a":"<&>"}`, `18446744073709551615`, `[true,null,{"x":{}}]`, `"\ud800"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		once, err := Canonical(data)
		if err != nil {
			return
		}
		twice, err := Canonical(once)
		if err != nil || !bytes.Equal(once, twice) {
			t.Fatalf("Canonical is not a fixed point: %s -> %s (%v)", once, twice, err)
		}
		var a, b any
		if json.Unmarshal(data, &a) != nil {
			return // a number beyond float64: kept exactly, and compared above only
		}
		if json.Unmarshal(once, &b) != nil || !reflect.DeepEqual(a, b) {
			t.Fatalf("Canonical changed the value: %s -> %s", data, once)
		}
	})
}
