package emulator

import (
	"strings"
	"testing"
)

// A RaiseError node is accepted at submission and fails the job when it runs, after the
// nodes before it, with its message and an engine-style traceback.
func TestRaiseErrorFailsAtRunTimeWithTraceback(t *testing.T) {
	t.Parallel()
	h := newHarness(t, Options{})
	job := h.mustSubmit(map[string]any{
		"1": map[string]any{"class_type": "EmptyImage", "inputs": map[string]any{"width": 8, "height": 8, "batch_size": 1, "color": 0}},
		"2": map[string]any{"class_type": "RaiseError", "inputs": map[string]any{"message": "out of memory", "image": []any{"1", 0}}},
	})
	done := h.waitStatus(job["id"].(string), "failed")

	e, _ := done["error"].(map[string]any)
	if e["code"] != "node_execution_error" || e["message"] != "out of memory" || e["node_id"] != "2" || e["class_type"] != "RaiseError" {
		t.Errorf("error = %v", e)
	}
	tb, _ := e["traceback"].(string)
	if !strings.HasPrefix(tb, "Traceback (most recent call last):") || !strings.HasSuffix(tb, "RuntimeError: out of memory\n") {
		t.Errorf("traceback = %q", tb)
	}
	if prog := done["progress"].(map[string]any); prog["nodes_done"] != 1.0 {
		t.Errorf("progress %v: the node before RaiseError should have run", prog)
	}
}
