package client

import (
	"net/http"
	"testing"
)

// TestRouterInvokeRetryableRows pins routerInvokeRetryable and routerStillRunning row by row: which answers a call or
// submission resends with the same key, and which of those say the run goes on.
func TestRouterInvokeRetryableRows(t *testing.T) {
	t.Parallel()
	tests := []struct {
		status       int
		errorType    string
		retryAfter   string
		retry        bool
		stillRunning bool
	}{
		{409, RouterErrConcurrencyLimit, "", true, true},
		{409, RouterErrInvalidInput, "", false, false},
		{409, "some_new_type", "", false, false}, // unknown acts as internal_error: not retried
		{504, RouterErrDeadlineExceeded, "3", true, true},
		{504, RouterErrDeadlineExceeded, "", true, false},
		{504, RouterErrProviderTimeout, "3", true, false},
		{429, RouterErrRateLimited, "", true, false},
		{429, RouterErrConcurrencyLimit, "", true, false},
		{408, "", "", true, false},
		{500, RouterErrInternal, "", true, false},
		{502, "", "", true, false},
		{503, "some_new_type", "", true, false},
		{400, RouterErrInvalidInput, "", false, false},
		{413, "", "", false, false},
		{422, RouterErrInvalidInput, "", false, false},
		{404, "", "", false, false},
	}
	for _, tt := range tests {
		h := http.Header{}
		if tt.errorType != "" {
			h.Set("X-Svc-Error-Type", tt.errorType)
		}
		if tt.retryAfter != "" {
			h.Set("Retry-After", tt.retryAfter)
		}
		resp := &http.Response{StatusCode: tt.status, Header: h}
		if got := routerInvokeRetryable(resp); got != tt.retry {
			t.Errorf("%d %s (Retry-After %q): retried %v, want %v", tt.status, tt.errorType, tt.retryAfter, got, tt.retry)
		}
		if got := routerStillRunning(resp); got != tt.stillRunning {
			t.Errorf("%d %s (Retry-After %q): still running %v, want %v", tt.status, tt.errorType, tt.retryAfter, got, tt.stillRunning)
		}
	}
}
