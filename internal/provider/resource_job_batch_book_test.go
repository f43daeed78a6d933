package provider

import (
	"reflect"
	"testing"

	"github.com/svc-org/terraform-provider-svc/internal/client"
)

// A row survives state: results (what users read) and the bookkeeping (what the provider reads)
// give back the row it was, and show it again the same.
func TestBatchRow_roundTripsThroughResultsAndBook(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		row       batchRow // outputs in results' order: by node id, then as listed
		wantError string
	}{
		{name: "succeeded, outputs of two nodes", row: batchRow{ID: "j1", Status: "succeeded", InputHash: "h1", Outputs: []batchOutput{
			{ID: "a3", Name: "prompt.txt", NodeID: "2", SizeBytes: 3, Hash: "blake3:cc"},
			{ID: "a1", Name: "image_1.png", NodeID: "5", SizeBytes: 10, Hash: "blake3:aa"},
			{ID: "a2", Name: "image_2.png", NodeID: "5", SizeBytes: 11},
		}}},
		{name: "unknown outcome keeps its key", row: batchRow{Status: batchRowUnknown, Key: "k1", InputHash: "h2",
			Error: &batchRowError{Code: "unknown_outcome", Message: "connection reset"}},
			wantError: "unknown_outcome: connection reset [Idempotency-Key k1]"},
		{name: "failed", row: batchRow{ID: "j3", Status: "failed", Key: "k3", InputHash: "h3",
			Error: &batchRowError{Code: "node_execution_error", Message: "no such file", NodeID: "1", ClassType: "LoadImage"}},
			wantError: `node_execution_error: no such file (node "1", LoadImage)`},
		{name: "not submitted", row: batchRow{Status: batchRowNotSubmitted, InputHash: "h4"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			shown := tt.row.value()
			got, ok := batchRowOf(shown, tt.row.book())
			if !ok {
				t.Fatal("the row does not read back")
			}
			if !got.value().Equal(shown) {
				t.Fatalf("the row read back shows as %v, want %v", got.value(), shown)
			}
			attrs, _ := objectAttrs(shown)
			if e := stringAttr(attrs, "error"); e != tt.wantError {
				t.Fatalf("error %q, want %q", e, tt.wantError)
			}
			want := tt.row
			want.Error = nil
			if want.ID != "" {
				want.Key = "" // once the service returned a job id, the id names the job
			}
			got.Error = nil
			if !reflect.DeepEqual(*got, want) {
				t.Fatalf("read back %+v\nwant        %+v", *got, want)
			}
		})
	}
}

// rowFromJob lists outputs by node id, then as the service listed them: the order results shows
// them in and the bookkeeping records them in.
func TestRowFromJob_outputsByNode(t *testing.T) {
	t.Parallel()
	job := &client.Job{ID: "j", Status: "succeeded", Outputs: []client.Output{
		{NodeID: "9", Asset: client.Asset{ID: "b"}}, {NodeID: "10", Asset: client.Asset{ID: "a"}},
		{NodeID: "9", Asset: client.Asset{ID: "c"}}, {NodeID: "9", Asset: client.Asset{ID: "b"}},
	}}
	var ids []string
	for _, o := range rowFromJob(job, "k", "h").Outputs {
		ids = append(ids, o.NodeID+"/"+o.ID)
	}
	if want := []string{"10/a", "9/b", "9/c"}; !reflect.DeepEqual(ids, want) {
		t.Fatalf("outputs %v, want %v", ids, want)
	}
}

// A row whose bookkeeping is missing (state edited by hand) is taken as unchanged: a plan does
// not run it again.
func TestPlanBatchRows_missingBookkeepingRunsNothing(t *testing.T) {
	t.Parallel()
	row := batchRow{ID: "j1", Status: "succeeded", InputHash: "h1"}
	held := batchHeld{results: map[string]batchResult{"a": row.result()}, book: batchBook{}}
	plan := planBatchRows([]batchRowInput{{key: "a", hash: "h-configured"}}, held, batchPlanSettings{})
	if plan.unknown != 0 || plan.succeeded != 1 {
		t.Fatalf("plan: %d rows to run, %d succeeded; want 0 and 1", plan.unknown, plan.succeeded)
	}
	changed := planBatchRows([]batchRowInput{{key: "a", hash: "h-configured"}},
		batchHeld{results: held.results, book: batchBook{"a": row.book()}}, batchPlanSettings{})
	if changed.unknown != 1 {
		t.Fatalf("a row whose digest changed: %d rows to run, want 1", changed.unknown)
	}
}
