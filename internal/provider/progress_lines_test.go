package provider

import (
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/action"

	"github.com/svc-org/terraform-provider-svc/internal/client"
)

func pointerTo[T any](v T) *T { return &v }

// Each change of what a job's state says is one line; a record read again with nothing new
// (another poll) prints nothing.
func TestProgressLines(t *testing.T) {
	t.Parallel()
	const id = "0b0c8f2e-0000-4000-8000-000000000000"
	running := func(step int64, msg *string) *client.Job {
		return &client.Job{ID: id, Status: client.JobRunning, Progress: &client.Progress{Value: 0.5, NodesDone: 1, NodesTotal: 3,
			CurrentNode: pointerTo("2"), CurrentNodeClass: pointerTo("KSampler"), Step: &step, Steps: pointerTo(int64(20)), Message: msg}}
	}
	var got []string
	p := &progressLines{send: func(e action.InvokeProgressEvent) { got = append(got, e.Message) }}
	for _, j := range []*client.Job{
		{ID: id, Status: client.JobQueued, QueuePosition: pointerTo(int64(3))},
		{ID: id, Status: client.JobQueued, QueuePosition: pointerTo(int64(3))}, // a poll with nothing new
		{ID: id, Status: client.JobQueued, QueuePosition: pointerTo(int64(1))},
		{ID: id, Status: client.JobRunning},
		running(4, pointerTo("step 4/20")), // a message repeating the step adds nothing
		running(4, pointerTo("step 4/20")),
		running(5, pointerTo("loading\nweights")),
		{ID: id, Status: client.JobCanceling},
	} {
		p.job(j)
	}
	p.end(&client.Job{ID: id, Status: client.JobFailed, Error: &client.JobError{Code: "execution_error", Message: "out of memory",
		NodeID: pointerTo("2"), ClassType: pointerTo("KSampler")}}, 1234*time.Millisecond)
	want := []string{
		"job " + id + " queued, position 3",
		"job " + id + " queued, position 1",
		"job " + id + " running",
		"job " + id + ` running: node "2" (KSampler), step 4/20, 1/3 nodes, 50%`,
		"job " + id + ` running: node "2" (KSampler), step 5/20, 1/3 nodes, 50%, loading weights`,
		"job " + id + " canceling",
		"job " + id + ` failed after 1.2s: node "2" (KSampler) raised execution_error: out of memory`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("lines:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// A value from the service is put on one line and bounded.
func TestProgressText(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("é", maxProgressText)
	tests := []struct{ in, want string }{
		{in: "a\n b\tc", want: "a b c"},
		{in: long, want: long[:maxProgressText] + "…"},
	}
	for _, tt := range tests {
		if got := progressText(tt.in); got != tt.want {
			t.Errorf("progressText(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// An output is saved under its own name only when that is a plain file name, once.
func TestCheckOutputNames(t *testing.T) {
	t.Parallel()
	named := func(names ...string) []client.Output {
		var out []client.Output
		for i, n := range names {
			out = append(out, client.Output{Asset: client.Asset{ID: string(rune('a' + i)), Name: n}})
		}
		return out
	}
	tests := []struct {
		outputs []client.Output
		wantErr string
	}{
		{outputs: named("a.png", "b.png")},
		{outputs: nil},
		{outputs: named("../etc/passwd"), wantErr: "is not named as a file"},
		{outputs: named(`dir\a.png`), wantErr: "is not named as a file"},
		{outputs: named(".."), wantErr: "is not named as a file"},
		{outputs: named(""), wantErr: "is not named as a file"},
		{outputs: named("a\x00.png"), wantErr: "is not named as a file"},
		{outputs: named("a.png", "a.png"), wantErr: `two outputs are named "a.png"`},
	}
	for _, tt := range tests {
		err := checkOutputNames(tt.outputs)
		if (err == nil) != (tt.wantErr == "") || (err != nil && !strings.Contains(err.Error(), tt.wantErr)) {
			t.Errorf("checkOutputNames(%v) = %v, want an error with %q", tt.outputs, err, tt.wantErr)
		}
	}
}
