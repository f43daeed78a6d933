package provider

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"

	"github.com/svc-org/terraform-provider-svc/internal/client"
)

func TestUniqueBounded(t *testing.T) {
	t.Parallel()
	ids := func(n int, repeat int) []string {
		var out []string
		for i := range n {
			for range repeat {
				out = append(out, strconv.Itoa(i))
			}
		}
		return out
	}
	tests := []struct {
		name        string
		in          []string
		wantKept    int
		wantOmitted int
	}{
		{name: "none", in: nil, wantKept: 0},
		{name: "few", in: ids(3, 1), wantKept: 3},
		{name: "repeats kept once", in: ids(3, 3), wantKept: 3},
		{name: "at the bound", in: ids(maxOutputsInState, 1), wantKept: maxOutputsInState},
		{name: "over the bound", in: ids(20000, 1), wantKept: maxOutputsInState, wantOmitted: 19000},
		{name: "repeats over the bound are not counted twice", in: ids(1500, 2), wantKept: maxOutputsInState, wantOmitted: 500},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			kept, omitted := uniqueBounded(tt.in, func(s string) string { return s })
			if len(kept) != tt.wantKept || omitted != tt.wantOmitted {
				t.Fatalf("kept %d, omitted %d; want %d, %d", len(kept), omitted, tt.wantKept, tt.wantOmitted)
			}
			for i, k := range kept {
				if k != strconv.Itoa(i) {
					t.Fatalf("kept[%d] = %s: the order of first appearance is lost", i, k)
				}
			}
		})
	}
}

func TestBoundText(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		in       string
		bound    func(string) string
		limit    int // the bound's byte limit, before the note of what was cut
		wantSame bool
		keep     string // what must survive
	}{
		{name: "short message unchanged", in: "boom", bound: boundText, wantSame: true},
		{name: "long message keeps its start", in: "start" + strings.Repeat("é", maxTextInState), bound: boundText, limit: maxTextInState, keep: "start"},
		{name: "short traceback unchanged", in: "Traceback", bound: tracebackBound, wantSame: true},
		{name: "long traceback keeps its end", in: strings.Repeat("ü", maxTracebackInState) + "RuntimeError: the cause", bound: tracebackBound, limit: maxTracebackInState, keep: "RuntimeError: the cause"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := tt.bound(tt.in)
			if tt.wantSame {
				if got != tt.in {
					t.Fatalf("changed %q to %q", tt.in, got)
				}
				return
			}
			if len(got) > tt.limit+64 || !strings.Contains(got, tt.keep) || !strings.Contains(got, "not kept") || !utf8.ValidString(got) {
				t.Fatalf("bounded to %d bytes (valid UTF-8: %v); want under the bound, %q kept and the cut said", len(got), utf8.ValidString(got), tt.keep)
			}
		})
	}
}

func tracebackBound(s string) string { return boundTail(s, maxTracebackInState) }

// The job record's texts and outputs reach the model bounded.
func TestNewJobRecordModelBoundsWhatReachesState(t *testing.T) {
	t.Parallel()
	tb := strings.Repeat("frame\n", 1<<20) + "ValueError: x"
	msg := strings.Repeat("m", 1<<20)
	job := &client.Job{ID: "j", Status: client.JobFailed, Error: &client.JobError{Code: "node_execution_error", Message: msg, Traceback: &tb}}
	for i := range 5000 {
		job.Outputs = append(job.Outputs, client.Output{Asset: client.Asset{ID: strconv.Itoa(i % 2500), URL: strings.Repeat("u", 1<<16)}})
	}
	m, diags := newJobRecordModel(context.Background(), job)
	if diags.HasError() {
		t.Fatal(diags)
	}
	if n := len(m.Outputs.Elements()); n != maxOutputsInState {
		t.Fatalf("%d outputs in the model, want %d", n, maxOutputsInState)
	}
	if _, omitted := liveOutputsTerraformValue(job.Outputs); omitted != 1500 {
		t.Fatalf("outputs_omitted = %d, want 1500 (2500 distinct assets, 1000 kept)", omitted)
	}
	var e jobErrorModel
	if d := m.Error.As(context.Background(), &e, basetypes.ObjectAsOptions{}); d.HasError() {
		t.Fatal(d)
	}
	if len(e.Message.ValueString()) > maxTextInState+64 || len(e.Traceback.ValueString()) > maxTracebackInState+64 ||
		!strings.HasSuffix(e.Traceback.ValueString(), "ValueError: x") {
		t.Fatalf("message %d bytes, traceback %d bytes (ending %q): not bounded", len(e.Message.ValueString()), len(e.Traceback.ValueString()),
			e.Traceback.ValueString()[max(0, len(e.Traceback.ValueString())-20):])
	}
}

// A v1 socket that reports the same file several times, or floods files, leaves each file once
// and at most maxOutputsInState in state.
func TestPromptOutputsValueDeduplicatesAndBounds(t *testing.T) {
	t.Parallel()
	var outs []client.PromptOutput
	for range 3 {
		outs = append(outs, client.PromptOutput{NodeID: "9", Filename: "a.png", Type: "output", Kind: "images"})
	}
	for i := range 5000 {
		outs = append(outs, client.PromptOutput{NodeID: "9", Filename: strconv.Itoa(i) + ".png", Type: "output", Kind: "images"})
	}
	list, omitted, diags := promptOutputsValue(context.Background(), outs)
	if diags.HasError() {
		t.Fatal(diags)
	}
	if n := len(list.Elements()); n != maxOutputsInState || omitted != 5001-maxOutputsInState {
		t.Fatalf("%d outputs kept, %d omitted; want %d and %d", n, omitted, maxOutputsInState, 5001-maxOutputsInState)
	}
}
