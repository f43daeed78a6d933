package workflow

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func TestCanonical(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want, wantErr string }{
		{in: "{ \"b\" : [1.0, 2.50, 1e2, -0, -0.0],\n \"a\": {\"y\": true, \"x\": null} }", want: `{"a":{"x":null,"y":true},"b":[1,2.5,100,0,0]}`},
		{in: `18446744073709551615`, want: `18446744073709551615`},
		{in: `1.5e300`, want: `1.5e+300`},
		{in: `0.000001`, want: `0.000001`},
		{in: `1e-7`, want: `1e-7`},
		{in: `"<a & b>\u00e9"`, want: `"<a & b>é"`},
		{in: `{"a":1} {"b":2}`, wantErr: "more than one value"},
		{in: `1e400`, wantErr: "out of range"},
		{in: `{"a":`, wantErr: "not valid JSON"},
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
			return // an integer beyond float64: kept exactly, and compared above only
		}
		if json.Unmarshal(once, &b) != nil || !reflect.DeepEqual(a, b) {
			t.Fatalf("Canonical changed the value: %s -> %s", data, once)
		}
	})
}
