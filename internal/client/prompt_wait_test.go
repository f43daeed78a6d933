package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/svc-org/terraform-provider-svc/internal/emulator"
)

// Servers written from the same documents report outputs under other list names than images,
// video and audio, put lists of non-files beside them, and add fields.
func TestExecutedOutputs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		data string
		want []PromptOutput
	}{
		{"images, video, audio", `{"node":"9","prompt_id":"p","output":{"images":[{"filename":"a.png","subfolder":"","type":"output"}],
			"video":[{"filename":"v.mp4","subfolder":"s","type":"output"}],"audio":[{"filename":"a.flac","type":"temp"}]}}`, []PromptOutput{
			{NodeID: "9", Filename: "a.flac", Type: "temp", Kind: "audio"},
			{NodeID: "9", Filename: "a.png", Type: "output", Kind: "image"},
			{NodeID: "9", Filename: "v.mp4", Subfolder: "s", Type: "output", Kind: "video"},
		}},
		{"gifs and an unknown list of files", `{"node":"4","output":{"gifs":[{"filename":"g.webp","type":"output","format":"image/webp"}],
			"meshes":[{"filename":"m.glb","type":"output"}]},"display_node":"4","extra":{"x":1}}`, []PromptOutput{
			{NodeID: "4", Filename: "g.webp", Type: "output", Kind: "video"},
			{NodeID: "4", Filename: "m.glb", Type: "output", Kind: "meshes"},
		}},
		{"text, flags and a string beside files", `{"node":"5","output":{"text":["hello"],"animated":[true],"note":"x",
			"images":[{"filename":"i.png","type":"temp"}]}}`, []PromptOutput{
			{NodeID: "5", Filename: "i.png", Type: "temp", Kind: "image"},
		}},
		{"no output", `{"node":"6","output":null}`, nil},
		{"not an object", `[1]`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := executedOutputs(json.RawMessage(tt.data)); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("outputs = %+v, want %+v", got, tt.want)
			}
		})
	}
}

// A socket that floods executed messages (the emulator's V1ExecutedFlood) neither grows the
// result without bound nor repeats a file: the same file, subfolder and type is one output,
// at most MaxPromptOutputs are kept and the rest are counted. Before the bound, the 20,000
// messages here gave 20,000 outputs.
func TestPromptExecutedFloodIsBoundedAndDeduplicated(t *testing.T) {
	t.Parallel()
	const flood = 20000
	srv := v1Server(t, emulator.Options{V1ExecutedFlood: flood})
	c := v1Client(t, srv, nil)
	sock, promptID := dialAndSubmit(t, c, "7d3f8a52-0c0e-4b9a-9d7e-3a1f7a8c2b13", SubmitPromptInput{Workflow: json.RawMessage(v1Workflow)})
	// The grace for the socket's last word is long: the flood comes before it, and under the
	// race detector reading 20,000 messages takes seconds. The wait ends at that last word.
	opts := fastWait
	opts.SocketGrace = time.Minute
	res, err := c.WaitPrompt(context.Background(), promptID, sock, opts)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Succeeded() || !res.OutputsComplete || res.PromptID != promptID {
		t.Fatalf("result: status %q, prompt id %q", res.Status, res.PromptID)
	}
	if len(res.Outputs) != MaxPromptOutputs {
		t.Fatalf("%d outputs kept, want the bound %d", len(res.Outputs), MaxPromptOutputs)
	}
	// flood/2 distinct flooded files, one repeated file, and the workflow's own 2 images.
	if want := flood/2 + 1 + 2 - MaxPromptOutputs; res.OutputsDropped != want {
		t.Errorf("%d outputs dropped, want %d", res.OutputsDropped, want)
	}
	repeats := 0
	for _, o := range res.Outputs {
		if o.Filename == "flood_repeat.png" {
			repeats++
		}
	}
	if repeats != 1 {
		t.Errorf("the repeated file appears %d times, want once", repeats)
	}
}

// While a socket floods executed messages, the end of the context ends the wait before the
// next message is handled: the engine checks the context before every message rather than
// leaving it to select's random choice between a closed Done channel and a flood that is always
// ready. A deadline and an interrupt end the context alike; here it is cancelled from OnMessage
// (on the wait's goroutine) at the 3,000th executed message of 10,000, so it ends mid-flood
// whatever the machine's speed. The result still names the prompt, so the caller keeps its id,
// and holds what the flood brought so far, bounded.
func TestPromptWaitDeadlineHonouredDuringAFlood(t *testing.T) {
	t.Parallel()
	const flood, endAt = 10000, 3000
	srv := v1Server(t, emulator.Options{V1ExecutedFlood: flood, NodeDuration: time.Hour})
	c := v1Client(t, srv, nil)
	sock, promptID := dialAndSubmit(t, c, "7d3f8a52-0c0e-4b9a-9d7e-3a1f7a8c2b12", SubmitPromptInput{Workflow: json.RawMessage(v1Workflow)})
	waitCtx, cancel := context.WithCancel(context.Background())
	defer cancel()
	executed, handledAfterEnd := 0, 0
	opts := fastWait
	opts.OnMessage = func(m *SocketMessage) {
		if waitCtx.Err() != nil {
			handledAfterEnd++
		}
		if m.Type == "executed" {
			if executed++; executed == endAt {
				cancel()
			}
		}
	}
	res, err := c.WaitPrompt(waitCtx, promptID, sock, opts)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("WaitPrompt error = %v after %d executed messages, want the context's end", err, executed)
	}
	if handledAfterEnd != 0 || executed != endAt {
		t.Errorf("%d message(s) handled after the context ended (%d executed in all); want none after the %dth", handledAfterEnd, executed, endAt)
	}
	if res == nil || res.PromptID != promptID {
		t.Fatalf("result %+v; want one naming prompt %s", res, promptID)
	}
	// endAt/2 distinct flooded files and the repeated one: the bound kept, the rest counted.
	if len(res.Outputs) != MaxPromptOutputs || res.OutputsDropped != endAt/2+1-MaxPromptOutputs {
		t.Errorf("%d outputs kept, %d dropped; want %d and %d", len(res.Outputs), res.OutputsDropped, MaxPromptOutputs, endAt/2+1-MaxPromptOutputs)
	}
}

// The same output reported twice, in one message or in two, is kept once.
func TestPromptOutputsDeduplicated(t *testing.T) {
	t.Parallel()
	w := &promptWait{res: &PromptResult{}}
	msg := `{"node":"9","prompt_id":"p","output":{"images":[{"filename":"a.png","subfolder":"","type":"output"},` +
		`{"filename":"a.png","subfolder":"","type":"output"},{"filename":"a.png","subfolder":"s","type":"output"},` +
		`{"filename":"a.png","subfolder":"","type":"temp"}]}}`
	for range 3 {
		w.apply(&SocketMessage{Type: "executed", PromptID: "p", Data: json.RawMessage(msg)})
	}
	if len(w.res.Outputs) != 3 || w.res.OutputsDropped != 0 {
		t.Fatalf("outputs %+v (dropped %d); want a.png, s/a.png and temp a.png once each", w.res.Outputs, w.res.OutputsDropped)
	}
}

// An output dropped past MaxPromptOutputs and reported again is counted once.
func TestPromptDroppedOutputRepeatsCountedOnce(t *testing.T) {
	t.Parallel()
	w := &promptWait{res: &PromptResult{}}
	for i := range MaxPromptOutputs + 5 {
		w.addOutputs([]PromptOutput{{Filename: fmt.Sprintf("f%d.png", i), Type: "output"}})
	}
	for range 3 { // the five dropped files, reported again
		for i := MaxPromptOutputs; i < MaxPromptOutputs+5; i++ {
			w.addOutputs([]PromptOutput{{Filename: fmt.Sprintf("f%d.png", i), Type: "output"}})
		}
	}
	if len(w.res.Outputs) != MaxPromptOutputs || w.res.OutputsDropped != 5 {
		t.Fatalf("%d kept, %d dropped; want %d kept and 5 dropped", len(w.res.Outputs), w.res.OutputsDropped, MaxPromptOutputs)
	}
}
