package workflow

import (
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
