package provider

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/svc-org/terraform-provider-svc/internal/client"
)

// The journal's directory: the setting, else SVC_JOURNAL (set to "", off), else the default in
// Terraform's data directory.
func TestJournalDir(t *testing.T) {
	tests := []struct {
		name    string
		setting types.String
		env     *string // nil: unset
		dataDir string
		want    string
	}{
		{name: "the setting wins", setting: types.StringValue("/j"), env: ptr("/e"), want: "/j"},
		{name: "the setting turns it off", setting: types.StringValue(""), env: ptr("/e"), want: ""},
		{name: "the environment", setting: types.StringNull(), env: ptr("/e"), want: "/e"},
		{name: "the environment turns it off", setting: types.StringNull(), env: ptr(""), want: ""},
		{name: "the default", setting: types.StringNull(), want: filepath.Join(".terraform", "svc-journal")},
		{name: "the default under TF_DATA_DIR", setting: types.StringNull(), dataDir: "/data", want: filepath.Join("/data", "svc-journal")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(journalEnv, "")
			if tt.env == nil {
				unsetEnv(t, journalEnv)
			} else {
				t.Setenv(journalEnv, *tt.env)
			}
			t.Setenv("TF_DATA_DIR", tt.dataDir)
			if got := journalDir(tt.setting); got != tt.want {
				t.Fatalf("journalDir = %q; want %q", got, tt.want)
			}
		})
	}
}

func ptr(s string) *string { return &s }

// The digest of a submission ignores formatting and tells apart what decides it.
func TestSubmissionDigest(t *testing.T) {
	t.Parallel()
	base := submissionDigest(journalKindJob, `{"1":{"a":1}}`, "")
	tests := []struct {
		name  string
		parts []string
		same  bool
	}{
		{name: "reformatted", parts: []string{"{ \"1\" : { \"a\" : 1.0 } }", ""}, same: true},
		{name: "another input", parts: []string{`{"1":{"a":2}}`, ""}},
		{name: "a configured key", parts: []string{`{"1":{"a":1}}`, "k"}},
	}
	for _, tt := range tests {
		if got := submissionDigest(journalKindJob, tt.parts...); (got == base) != tt.same {
			t.Errorf("%s: same digest %v; want %v", tt.name, got == base, tt.same)
		}
	}
	if submissionDigest(journalKindRun, `{"1":{"a":1}}`, "") == base {
		t.Error("two kinds share a digest")
	}
}

// An entry is removed only when its submission ran nothing for sure.
func TestRanNothing(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{name: "not sent", err: &client.NotSentError{Cause: errors.New("refused")}, want: true},
		{name: "invalid workflow", err: &client.APIError{StatusCode: 422, Code: "invalid_workflow"}, want: true},
		{name: "a key seen", err: &client.APIError{StatusCode: 422, Code: "idempotency_key_reuse"}},
		{name: "unknown outcome", err: &client.UnknownOutcomeError{Cause: errors.New("timeout")}},
		{name: "a server error", err: &client.APIError{StatusCode: 500}},
	}
	for _, tt := range tests {
		if got := ranNothing(tt.err); got != tt.want {
			t.Errorf("%s: ranNothing = %v; want %v", tt.name, got, tt.want)
		}
	}
}

// unsetEnv unsets name for the test (t.Setenv first, so that it is restored after).
func unsetEnv(t *testing.T, name string) {
	t.Helper()
	t.Setenv(name, "")
	if err := os.Unsetenv(name); err != nil {
		t.Fatal(err)
	}
}
