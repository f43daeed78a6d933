package client

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/svc-org/terraform-provider-svc/internal/emulator"
)

// POST /api/prompt and an upload without overwrite have no idempotency key: they are resent only
// when the service declined them for now (429 or 503 WITH Retry-After), which processes nothing.
// Any other 5xx may have done the work and is never resent. testClient allows 3 retries.
func TestSubmitPromptRetryPolicy(t *testing.T) {
	t.Parallel()
	retryAfter := func(v string) map[string]string {
		return map[string]string{"Retry-After": v, "X-Svc-Request-Id": "req-busy"}
	}
	tests := []struct {
		name         string
		fault        emulator.Fault
		wantRequests int
		wantPrompts  int
		wantErr      string // empty: success
		wantUnknown  bool
	}{
		{name: "429 with Retry-After is resent", fault: emulator.Fault{Nth: 1, Status: 429, Headers: retryAfter("0")},
			wantRequests: 2, wantPrompts: 1},
		{name: "503 with Retry-After is resent", fault: emulator.Fault{Nth: 1, Times: 2, Status: 503, Headers: retryAfter("0")},
			wantRequests: 3, wantPrompts: 1},
		{name: "503 with Retry-After until the retries run out is a definitive refusal", fault: emulator.Fault{Status: 503, Headers: retryAfter("0")},
			wantRequests: 4, wantErr: "HTTP 503"},
		{name: "503 with a Retry-After above the cap is a definitive refusal, not resent", fault: emulator.Fault{Status: 503, Headers: retryAfter("3600")},
			wantRequests: 1, wantErr: "longer than the"},
		{name: "429 without Retry-After is a refusal, not resent", fault: emulator.Fault{Status: 429},
			wantRequests: 1, wantErr: "HTTP 429"},
		{name: "503 without Retry-After is an unknown outcome, not resent", fault: emulator.Fault{Status: 503},
			wantRequests: 1, wantErr: "HTTP 503", wantUnknown: true},
		{name: "500 with Retry-After is an unknown outcome, not resent", fault: emulator.Fault{Status: 500, Headers: retryAfter("0")},
			wantRequests: 1, wantErr: "HTTP 500", wantUnknown: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := v1Server(t, emulator.Options{})
			tc.fault.Op = emulator.OpV1Prompt
			srv.Inject(tc.fault)
			sub, err := v1Client(t, srv, nil).SubmitPrompt(context.Background(), SubmitPromptInput{Workflow: json.RawMessage(v1Workflow)})
			if got := srv.Requests(emulator.OpV1Prompt); got != tc.wantRequests {
				t.Errorf("requests = %d, want %d (err %v)", got, tc.wantRequests, err)
			}
			if got := srv.JobCount(); got != tc.wantPrompts {
				t.Errorf("prompts created = %d, want %d", got, tc.wantPrompts)
			}
			if tc.wantErr == "" {
				if err != nil || sub.PromptID == "" {
					t.Fatalf("submission = %+v, err = %v", sub, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err = %v, want it to contain %q", err, tc.wantErr)
			}
			var unknown *UnknownOutcomeError
			if errors.As(err, &unknown) != tc.wantUnknown {
				t.Fatalf("err = %v; unknown outcome wanted: %v", err, tc.wantUnknown)
			}
			if statusOf(err) != tc.fault.Status {
				t.Fatalf("status of %v = %d, want %d", err, statusOf(err), tc.fault.Status)
			}
		})
	}
}

func TestUploadWithoutOverwriteRetryPolicy(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name         string
		fault        emulator.Fault
		wantRequests int
		wantUploads  int
	}{
		{name: "429 with Retry-After is resent", fault: emulator.Fault{Nth: 1, Status: http.StatusTooManyRequests, Headers: map[string]string{"Retry-After": "0"}},
			wantRequests: 2, wantUploads: 1},
		{name: "503 with Retry-After is resent", fault: emulator.Fault{Nth: 1, Status: http.StatusServiceUnavailable, Headers: map[string]string{"Retry-After": "0"}},
			wantRequests: 2, wantUploads: 1},
		{name: "503 without Retry-After is not resent", fault: emulator.Fault{Nth: 1, Status: http.StatusServiceUnavailable},
			wantRequests: 1},
		{name: "a lost response is not resent", fault: emulator.Fault{Nth: 1, Drop: true, AfterHandling: true},
			wantRequests: 1, wantUploads: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := v1Server(t, emulator.Options{})
			tc.fault.Op = emulator.OpV1UploadImage
			srv.Inject(tc.fault)
			up, err := v1Client(t, srv, nil).Upload(context.Background(), UploadInput{FileName: "cat.png", Content: pngBytes(t), Type: "input"})
			if got := srv.Requests(emulator.OpV1UploadImage); got != tc.wantRequests {
				t.Errorf("requests = %d, want %d (err %v)", got, tc.wantRequests, err)
			}
			if got := len(srv.Uploads()); got != tc.wantUploads {
				t.Errorf("files stored = %d, want %d", got, tc.wantUploads)
			}
			if wantOK := tc.wantRequests == 2; wantOK != (err == nil) {
				t.Fatalf("upload = %+v, err = %v; success wanted: %v", up, err, wantOK)
			}
		})
	}
}
