package client

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// One value that does not fit its field never loses the record: the id, the status and the
// other fields are kept, and a warning names what was left out.
func TestJobRecordWithAFieldThatDoesNotFit(t *testing.T) {
	t.Parallel()
	const id = "88888888-8888-8888-8888-888888888888"
	record := func(progress, output, metrics string) string {
		return fmt.Sprintf(`{"id":%q,"status":"succeeded","created_at":"2026-01-01T00:00:00Z","expires_at":"2026-01-02T00:00:00Z",`+
			`"progress":%s,"outputs":[%s,{"id":"a2","name":"b.png","size_bytes":7}],"metrics":%s,`+
			`"urls":{"self":"/api/v2/jobs/%[1]s"}}`, id, progress, output, metrics)
	}
	okProgress := `{"value":1,"nodes_done":2,"nodes_total":2}`
	okOutput := `{"id":"a1","name":"a.png","size_bytes":5}`
	tests := []struct {
		name         string
		body         string
		wantWarning  string // "" when the record decodes without one
		wantSize     int64  // outputs[0].size_bytes
		wantProgress float64
	}{
		{"progress NaN", record(`{"value":NaN,"nodes_done":2,"nodes_total":2}`, okOutput, `{}`), "NaN or Infinity", 5, 0},
		{"progress Infinity", record(`{"value":-Infinity,"nodes_done":2,"nodes_total":2}`, okOutput, `{}`), "NaN or Infinity", 5, 0},
		{"progress 1e400", record(`{"value":1e400,"nodes_done":2,"nodes_total":2}`, okOutput, `{}`), "progress.value = 1e400", 5, 0},
		{"size_bytes 1e18", record(okProgress, `{"id":"a1","name":"a.png","size_bytes":1e18}`, `{}`), "", 1e18, 1},
		{"size_bytes 1e30", record(okProgress, `{"id":"a1","name":"a.png","size_bytes":1e30}`, `{}`), "outputs[0].size_bytes = 1e30", 0, 1},
		{"size_bytes a string", record(okProgress, `{"id":"a1","name":"a.png","size_bytes":"5"}`, `{}`), "outputs[0].size_bytes", 0, 1},
		{"metric a fraction", record(okProgress, okOutput, `{"queue_ms":1.5,"execution_ms":3}`), "metrics.queue_ms", 5, 1},
		{"progress a string", record(`"half"`, okOutput, `{}`), "progress", 5, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(status(http.StatusOK, nil, tt.body))
			defer srv.Close()
			job, err := testClient(t, srv.URL).GetJob(context.Background(), id)
			if err != nil {
				t.Fatalf("the record was lost: %v", err)
			}
			if job.ID != id || job.Status != "succeeded" || len(job.Outputs) != 2 || job.Outputs[1].SizeBytes != 7 {
				t.Fatalf("record not kept: %+v", job)
			}
			if job.Outputs[0].SizeBytes != tt.wantSize {
				t.Errorf("size_bytes %d, want %d", job.Outputs[0].SizeBytes, tt.wantSize)
			}
			if job.Progress != nil && job.Progress.Value != tt.wantProgress {
				t.Errorf("progress.value %v, want %v", job.Progress.Value, tt.wantProgress)
			}
			got := strings.Join(job.DecodeWarnings, "\n")
			if (tt.wantWarning == "") != (got == "") || !strings.Contains(got, tt.wantWarning) {
				t.Errorf("warnings %q, want one saying %q", got, tt.wantWarning)
			}
		})
	}
}

func TestNullNonFiniteLeavesStringsAlone(t *testing.T) {
	t.Parallel()
	in := `{"a":NaN,"b":"NaN \"Infinity\" \\","c":[-Infinity,Infinity],"d":"x\\"}`
	got, n := nullNonFinite([]byte(in))
	want := `{"a":null,"b":"NaN \"Infinity\" \\","c":[null,null],"d":"x\\"}`
	if string(got) != want || n != 3 {
		t.Fatalf("got %s (%d), want %s (3)", got, n, want)
	}
}
