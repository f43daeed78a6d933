package emulator

import (
	"bytes"
	"encoding/json"
	"image"
	"image/png"
	"io"
	"testing"

	"github.com/svc-org/terraform-provider-svc/internal/workflow"
)

// The reference server's object_info has the engine's shape, so an editor export converts against
// it: the seed's control value, the image loader's upload value and the forceInput sockets are
// placed as the editor places them, and the converted workflow runs.
func TestObjectInfoConvertsEditorExports(t *testing.T) {
	t.Parallel()
	h := newHarness(t, Options{})
	h.s.PutAsset("in.png", "image/png", tinyPNG(t))
	_, body := h.do("GET", "/api/object_info", nil, nil)
	defs, err := workflow.ParseClassDefs(body)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []struct {
		class, input string
		check        func(workflow.ClassInput) bool
	}{
		{"ImageNoiseSampler", "seed", func(in workflow.ClassInput) bool { return in.ControlFlagSet && in.ControlAfterGenerate }},
		{"JoinText", "text_a", func(in workflow.ClassInput) bool { return in.ForceInput }},
		{"LoadImage", "image", func(in workflow.ClassInput) bool { return in.ImageUpload && in.Type == "COMBO" }},
		{"ImageFlip", "flip_method", func(in workflow.ClassInput) bool { return in.Type == "COMBO" }},
	} {
		in, ok := defs[want.class].Input(want.input)
		if !ok || !want.check(in) {
			t.Errorf("object_info %s.%s = %+v", want.class, want.input, in)
		}
	}
	const export = `{"nodes": [
	  {"id": 1, "type": "LoadImage", "mode": 0, "outputs": [{"name": "IMAGE", "type": "IMAGE", "links": [1]}], "widgets_values": ["in.png", "image"]},
	  {"id": 2, "type": "ImageNoiseSampler", "mode": 0, "inputs": [{"name": "image", "type": "IMAGE", "link": 1}],
	   "outputs": [{"name": "IMAGE", "type": "IMAGE", "links": [2]}], "widgets_values": [5, "randomize", 2, 0.5]},
	  {"id": 3, "type": "ImageFlip", "mode": 0, "inputs": [{"name": "image", "type": "IMAGE", "link": 2}],
	   "outputs": [{"name": "IMAGE", "type": "IMAGE", "links": [3]}], "widgets_values": ["y-axis: horizontally"]},
	  {"id": 4, "type": "SaveImage", "mode": 0, "inputs": [{"name": "images", "type": "IMAGE", "link": 3}], "widgets_values": ["flipped"]},
	  {"id": 5, "type": "PrimitiveString", "mode": 0, "outputs": [{"name": "STRING", "type": "STRING", "links": [4]}], "widgets_values": ["left"]},
	  {"id": 6, "type": "PrimitiveString", "mode": 0, "outputs": [{"name": "STRING", "type": "STRING", "links": [5]}], "widgets_values": ["right"]},
	  {"id": 7, "type": "JoinText", "mode": 0, "inputs": [{"name": "text_a", "type": "STRING", "link": 4}, {"name": "text_b", "type": "STRING", "link": 5}],
	   "outputs": [{"name": "STRING", "type": "STRING", "links": [6]}], "widgets_values": [" & "]},
	  {"id": 8, "type": "SaveText", "mode": 0, "inputs": [{"name": "text", "type": "STRING", "widget": {"name": "text"}, "link": 6}], "widgets_values": ["", "joined"]}
	], "links": [[1, 1, 0, 2, 0, "IMAGE"], [2, 2, 0, 3, 0, "IMAGE"], [3, 3, 0, 4, 0, "IMAGE"],
	             [4, 5, 0, 7, 0, "STRING"], [5, 6, 0, 7, 1, "STRING"], [6, 7, 0, 8, 0, "STRING"]]}`
	api, err := defs.FromUI([]byte(export))
	if err != nil {
		t.Fatal(err)
	}
	var wf map[string]any
	if err := json.Unmarshal(api, &wf); err != nil {
		t.Fatal(err)
	}
	job := h.mustSubmit(wf)
	done := h.waitStatus(job["id"].(string), "succeeded")
	outputs, _ := done["outputs"].([]any)
	if len(outputs) != 2 {
		t.Fatalf("outputs = %v, want an image and a text", done["outputs"])
	}
	h.s.mu.Lock()
	a := h.s.assetByNameLocked("joined_00001_.txt")
	h.s.mu.Unlock()
	if a == nil {
		t.Fatalf("no joined text among %v", outputs)
	}
	if text, _ := io.ReadAll(a.content()); string(text) != "left & right" {
		t.Fatalf("joined text = %q", text)
	}
}

func tinyPNG(t *testing.T) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := png.Encode(&buf, image.NewNRGBA(image.Rect(0, 0, 4, 4))); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
