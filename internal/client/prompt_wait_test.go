package client

import (
	"encoding/json"
	"reflect"
	"testing"
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
