package client

import (
	"errors"
	"fmt"
	"net/http"
	"testing"
)

// TestErrorKinds pins which answers each predicate the provider asks about an error accepts:
// the provider decides on these names and never on a status number.
func TestErrorKinds(t *testing.T) {
	t.Parallel()
	answer := func(status int, code string) error {
		return fmt.Errorf("wrapped: %w", &APIError{StatusCode: status, Code: code, Header: http.Header{}})
	}
	kinds := map[string]func(error) bool{
		"Unauthenticated":        Unauthenticated,
		"Forbidden":              Forbidden,
		"NotFound":               NotFound,
		"Gone":                   Gone,
		"RefusedForNow":          RefusedForNow,
		"RateLimited":            RateLimited,
		"InputRejected":          InputRejected,
		"IdempotencyKeyConflict": IdempotencyKeyConflict,
		"AlreadyClaimed":         AlreadyClaimed,
		"UnknownServerErrorType": func(err error) bool { _, ok := UnknownServerErrorType(err); return ok },
	}
	tests := []struct {
		name string
		err  error
		want []string // the kinds that hold; every other kind must not
	}{
		{"no error", nil, nil},
		{"not an API error", errors.New("connection reset"), nil},
		{"401", answer(401, ""), []string{"Unauthenticated"}},
		{"403", answer(403, ""), []string{"Forbidden"}},
		{"404", answer(404, "not_found"), []string{"NotFound", "Gone"}},
		{"410", answer(410, ""), []string{"Gone"}},
		{"429", answer(429, RouterErrRateLimited), []string{"RefusedForNow", "RateLimited"}},
		{"503", answer(503, RouterErrServiceUnavailable), []string{"RefusedForNow"}},
		{"422", answer(422, ""), []string{"InputRejected"}},
		{"409 invalid_input", answer(409, RouterErrInvalidInput), []string{"IdempotencyKeyConflict", "AlreadyClaimed"}},
		{"409 concurrency_limit_exceeded", answer(409, RouterErrConcurrencyLimit), []string{"AlreadyClaimed"}},
		{"500 unknown type", answer(500, "quota_melted"), []string{"UnknownServerErrorType"}},
		{"500 known type", answer(500, RouterErrInternal), nil},
		{"502 without type", answer(502, ""), nil},
		{"400 unknown type", answer(400, "quota_melted"), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			want := map[string]bool{}
			for _, k := range tt.want {
				want[k] = true
			}
			for name, kind := range kinds {
				if got := kind(tt.err); got != want[name] {
					t.Errorf("%s(%v) = %v, want %v", name, tt.err, got, want[name])
				}
			}
		})
	}
	if typ, _ := UnknownServerErrorType(answer(500, "quota_melted")); typ != "quota_melted" {
		t.Errorf("UnknownServerErrorType names %q, want the type the router sent", typ)
	}
}
