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
		"CredentialsRefused":     CredentialsRefused,
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
		{"401", answer(401, ""), []string{"Unauthenticated", "CredentialsRefused"}},
		{"403", answer(403, ""), []string{"Forbidden", "CredentialsRefused"}},
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

// RouteNotFound tells a 404 from something that is not the API (a wrong endpoint or mount
// prefix) apart from the API's own 404 of a record.
func TestRouteNotFound(t *testing.T) {
	t.Parallel()
	typed := http.Header{"X-Svc-Error-Type": {"not_found"}}
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"router 404 without its error type", &APIError{StatusCode: 404, fromRouter: true, Header: http.Header{}}, true},
		{"router 404 with its error type", &APIError{StatusCode: 404, fromRouter: true, Header: typed}, false},
		{"v2 404 with an error code", &APIError{StatusCode: 404, Code: "not_found", enveloped: true, Header: http.Header{}}, false},
		{"registry 404 with a message only", &APIError{StatusCode: 404, enveloped: true, Header: http.Header{}}, false},
		{"a proxy's 404 page", fmt.Errorf("read job: %w", &APIError{StatusCode: 404, BodyExcerpt: "404 page not found", Header: http.Header{}}), true},
		{"not a 404", &APIError{StatusCode: 500, Header: http.Header{}}, false},
		{"not an API error", errors.New("connection reset"), false},
	}
	for _, tt := range tests {
		if got := RouteNotFound(tt.err); got != tt.want {
			t.Errorf("%s: RouteNotFound = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// DeclinedUntilDeadline holds when the deadline came while the client waited after a "not now"
// that did nothing (a 429), with no attempt on its way; not when an attempt may have reached the
// service, nor when the last answer said the run goes on.
func TestDeclinedUntilDeadline(t *testing.T) {
	t.Parallel()
	ended := func(last comeBackAnswer) error {
		return fmt.Errorf("submit: %w", &waitEndedError{err: errors.New("context deadline exceeded"), last: last})
	}
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"429 until the deadline", ended(comeBackAnswer{status: 429, header: http.Header{}}), true},
		{"an attempt in flight at the deadline", ended(comeBackAnswer{status: 429, header: http.Header{}, inFlight: true}), false},
		{"the router's run goes on", ended(comeBackAnswer{status: 409, header: http.Header{"X-Svc-Error-Type": {RouterErrConcurrencyLimit}}}), false},
		{"a plain deadline", errors.New("context deadline exceeded"), false},
	}
	for _, tt := range tests {
		if got := DeclinedUntilDeadline(tt.err); got != tt.want {
			t.Errorf("%s: DeclinedUntilDeadline = %v, want %v", tt.name, got, tt.want)
		}
	}
}
