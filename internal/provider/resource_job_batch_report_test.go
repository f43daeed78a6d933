package provider

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"

	"github.com/svc-org/terraform-provider-svc/internal/client"
)

// An apply's row outcomes become warnings, never errors: each names the first rows in full
// (the node, class and message of a failure; the key of an unknown outcome), counts the rest,
// and masks the provider's secrets.
func TestBatchEngineReport(t *testing.T) {
	t.Parallel()
	failedRows := func(n int) []rowNote {
		var notes []rowNote
		for i := range n {
			notes = append(notes, rowNote{key: fmt.Sprintf("k%d", i), row: &batchRow{ID: fmt.Sprintf("job-%d", i), Status: client.JobFailed,
				Error: &batchRowError{Code: "execution_error", Message: "CUDA out of memory\ntraceback", NodeID: "4", ClassType: "KSampler"}}})
		}
		return notes
	}
	rejected := rowNote{key: "bad-06", row: &batchRow{Status: batchRowRejected, Key: "0f0e-key",
		Error: &batchRowError{Code: "invalid_workflow", Message: "the workflow is invalid; steps: value_out_of_range (HTTP 422)", NodeID: "4", ClassType: "ImageNoiseSampler"}}}
	tests := []struct {
		name        string
		news        batchNews
		interrupted bool
		rerunFailed bool
		wantSummary string
		want        []string // in the warning's detail
		notWant     []string
	}{
		{
			name: "failed rows: five in full, the rest counted", news: batchNews{failed: failedRows(7)},
			wantSummary: "Rows failed",
			want: []string{"7 rows did not succeed", `rows["k0"]: job job-0 failed: node "4" (KSampler) raised execution_error: CUDA out of memory ...`,
				`rows["k4"]`, "... and 2 more.", "rerun_failed = true"},
			notWant: []string{`rows["k5"]`, "traceback"},
		},
		{
			name: "one failed row, rerun_failed already on", news: batchNews{failed: failedRows(1)}, rerunFailed: true,
			wantSummary: "Rows failed",
			want:        []string{"1 row did not succeed", "`rerun_failed` is on: the next apply runs them again"},
			notWant:     []string{"Set `rerun_failed = true`"},
		},
		{
			name: "a rejected row: the node and what the service refused, on one line", news: batchNews{failed: []rowNote{rejected}},
			wantSummary: "Rows failed",
			want:        []string{`rows["bad-06"]: rejected (Idempotency-Key 0f0e-key): node "4" (ImageNoiseSampler): invalid_workflow: the workflow is invalid; steps: value_out_of_range (HTTP 422)`},
			notWant:     []string{"raised"},
		},
		{
			name:        "unknown outcome: named by its key",
			news:        batchNews{unknown: []rowNote{{key: "sku-1", row: &batchRow{Status: batchRowUnknown, Key: "0f0e-key"}, err: errors.New("connection reset")}}},
			wantSummary: "Rows with an unknown outcome",
			want:        []string{`rows["sku-1"]: Idempotency-Key 0f0e-key: connection reset`, "not resent"},
		},
		{
			name:        "interrupted with rows running",
			news:        batchNews{stillRunning: 3},
			interrupted: true,
			wantSummary: "Batch not finished: the next apply goes on",
			want:        []string{"Terraform was interrupted with 3 rows still running", "Every job id the service returned is in state"},
		},
		{
			name:        "a secret echoed in an error is masked",
			news:        batchNews{waitErrors: []rowNote{{key: "a", row: &batchRow{ID: "job-a"}, err: errors.New("bad key sk-secret-value")}}},
			wantSummary: "Rows not followed to the end",
			want:        []string{`rows["a"]: job job-a: bad key (redacted)`},
			notWant:     []string{"sk-secret-value"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := &batchEngine{data: &providerData{secrets: []string{"sk-secret-value"}}, rows: map[string]*batchRow{}, news: tt.news, rerunFailed: tt.rerunFailed}
			ctx := context.Background()
			if tt.interrupted {
				var cancel context.CancelFunc
				ctx, cancel = context.WithCancel(ctx)
				cancel()
			}
			var diags diag.Diagnostics
			e.report(ctx, &diags, time.Minute)
			if diags.HasError() || diags.WarningsCount() != 1 {
				t.Fatalf("diagnostics %v, want one warning", diags)
			}
			w := diags.Warnings()[0]
			if w.Summary() != tt.wantSummary {
				t.Errorf("summary %q, want %q", w.Summary(), tt.wantSummary)
			}
			for _, s := range tt.want {
				if !strings.Contains(w.Detail(), s) {
					t.Errorf("detail lacks %q:\n%s", s, w.Detail())
				}
			}
			for _, s := range tt.notWant {
				if strings.Contains(w.Detail(), s) {
					t.Errorf("detail has %q:\n%s", s, w.Detail())
				}
			}
		})
	}
}

// A submission the service refused keeps, in the row's error, what the service said and no
// more: its code once, the fields it refused, the node and class when one node was at fault,
// the HTTP status and the request id.
func TestBatchRejectionError(t *testing.T) {
	t.Parallel()
	invalid := func(nodes map[string][]client.NodeError) error {
		return &client.APIError{Operation: "submit job", StatusCode: 422, RequestID: "req-1", Code: "invalid_workflow",
			Message: "the workflow is invalid", NodeErrors: nodes, NodeClasses: map[string]string{"4": "ImageNoiseSampler", "5": "SaveImage"}}
	}
	tests := []struct {
		name string
		err  error
		want batchRowError
	}{
		{"one node at fault", invalid(map[string][]client.NodeError{"4": {{Field: "steps", Reason: "value_out_of_range"}}}),
			batchRowError{Code: "invalid_workflow", Message: "the workflow is invalid; steps: value_out_of_range (HTTP 422, request id req-1)",
				NodeID: "4", ClassType: "ImageNoiseSampler"}},
		{"two nodes at fault", invalid(map[string][]client.NodeError{"4": {{Field: "steps", Reason: "value_out_of_range"}}, "5": {{Field: "images", Reason: "missing"}}}),
			batchRowError{Code: "invalid_workflow", Message: "the workflow is invalid; steps: value_out_of_range; images: missing (HTTP 422, request id req-1)"}},
		{"not the service's answer", errors.New("tls: bad certificate"),
			batchRowError{Code: "submission_refused", Message: "tls: bad certificate"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := &batchEngine{data: &providerData{}}
			if got := e.rejectionError(tt.err, "0f0e-key"); *got != tt.want {
				t.Errorf("row error %+v, want %+v", *got, tt.want)
			}
		})
	}
}
