package emulator

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"image/png"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"lukechampine.com/blake3"
)

func TestSubmitPollSucceedsWithVerifiableOutputs(t *testing.T) {
	h := newHarness(t, Options{})
	resp, job := h.submit(imageWorkflow(2, 3), "")
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("status %d: %v", resp.StatusCode, job)
	}
	if _, err := uuid.Parse(resp.Header.Get("X-Svc-Request-Id")); err != nil {
		t.Errorf("X-Svc-Request-Id not a UUID: %q", resp.Header.Get("X-Svc-Request-Id"))
	}
	for _, k := range []string{"id", "status", "created_at", "started_at", "completed_at", "expires_at", "queue_position", "progress", "outputs", "error", "metrics", "urls"} {
		if _, ok := job[k]; !ok {
			t.Errorf("201 body lacks %q", k)
		}
	}
	if job["status"] != "queued" && job["status"] != "running" {
		t.Errorf("new job status %v", job["status"])
	}
	if outs, ok := job["outputs"].([]any); !ok || len(outs) != 0 {
		t.Errorf("outputs of a new job = %#v, want []", job["outputs"])
	}
	id := job["id"].(string)
	done := h.waitStatus(id, "succeeded")

	metrics := done["metrics"].(map[string]any)
	for _, k := range []string{"queue_ms", "execution_ms"} {
		if _, ok := metrics[k].(float64); !ok {
			t.Errorf("metrics.%s = %v, want a number", k, metrics[k])
		}
	}
	prog := done["progress"].(map[string]any)
	if prog["value"] != 1.0 || prog["nodes_done"] != 3.0 || prog["nodes_total"] != 3.0 {
		t.Errorf("final progress %v", prog)
	}
	if done["error"] != nil || done["completed_at"] == nil || done["started_at"] == nil {
		t.Errorf("final job %v", done)
	}
	outs := done["outputs"].([]any)
	if len(outs) != 2 {
		t.Fatalf("outputs: %v", outs)
	}
	for i, o := range outs {
		out := o.(map[string]any)
		if want := fmt.Sprintf("out_%05d_.png", i+1); out["name"] != want {
			t.Errorf("output %d name %v, want %s", i, out["name"], want)
		}
		if out["type"] != "image" || out["content_type"] != "image/png" || out["node_id"] != "3" || out["job_id"] != id {
			t.Errorf("output %d: %v", i, out)
		}
		resp, data := h.do("GET", h.resolve(out["url"].(string)), nil, nil)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("download: %d %s", resp.StatusCode, data)
		}
		if resp.Header.Get("Content-Type") != "image/png" || resp.Header.Get("Content-Length") != strconv.Itoa(len(data)) {
			t.Errorf("download headers %v", resp.Header)
		}
		sum := blake3.Sum256(data)
		if got := "blake3:" + hex.EncodeToString(sum[:]); got != out["hash"] {
			t.Errorf("hash %v, bytes hash to %s", out["hash"], got)
		}
		if out["size_bytes"] != float64(len(data)) {
			t.Errorf("size_bytes %v, got %d bytes", out["size_bytes"], len(data))
		}
		img, err := png.Decode(bytes.NewReader(data))
		if err != nil || img.Bounds().Dx() != 16 || img.Bounds().Dy() != 8 {
			t.Errorf("png: %v %v", err, img)
		}
		// the asset record gives a fresh url to the same bytes
		resp, body := h.do("GET", "/api/v2/assets/"+out["id"].(string), nil, nil)
		rec := decode(t, body)
		if resp.StatusCode != 200 || rec["hash"] != out["hash"] || rec["job_id"] != id || rec["name"] != out["name"] || rec["url_expires_at"] == nil {
			t.Errorf("asset record %d %v", resp.StatusCode, rec)
		}
	}
}

func TestOutputsAreDeterministic(t *testing.T) {
	h := newHarness(t, Options{Workers: 2})
	var hashes []any
	for i := 0; i < 2; i++ {
		id := h.mustSubmit(imageWorkflow(1, 4))["id"].(string)
		done := h.waitStatus(id, "succeeded")
		hashes = append(hashes, done["outputs"].([]any)[0].(map[string]any)["hash"])
	}
	if hashes[0] != hashes[1] {
		t.Errorf("same workflow, different outputs: %v", hashes)
	}
}

func TestSubmitRejections(t *testing.T) {
	h := newHarness(t, Options{})
	node := func(class string, inputs map[string]any) map[string]any {
		return map[string]any{"class_type": class, "inputs": inputs}
	}
	save := node("SaveImage", map[string]any{"images": []any{"1", 0}, "filename_prefix": "x"})
	empty := node("EmptyImage", map[string]any{"width": 8, "height": 8, "batch_size": 1, "color": 0})
	type nodeErr struct{ node, field, reason string }
	cases := []struct {
		name    string
		body    any
		status  int
		code    string
		nodeErr *nodeErr
	}{
		{name: "not json", body: "{", status: 400, code: "invalid_request"},
		{name: "array body", body: "[]", status: 400, code: "invalid_request"},
		{name: "no workflow", body: map[string]any{}, status: 422, code: "invalid_request"},
		{name: "workflow not object", body: map[string]any{"workflow": "x"}, status: 422, code: "invalid_request"},
		{name: "ui format", body: map[string]any{"workflow": map[string]any{"nodes": []any{}, "links": []any{}}}, status: 422, code: "workflow_format_ui"},
		{name: "ui format as body", body: map[string]any{"nodes": []any{}, "links": []any{}, "version": 0.4}, status: 422, code: "workflow_format_ui"},
		{name: "webhook_url", body: map[string]any{"workflow": textWorkflow("a"), "webhook_url": "https://x"}, status: 422, code: "reserved_field"},
		{name: "inputs", body: map[string]any{"workflow": textWorkflow("a"), "inputs": map[string]any{}}, status: 422, code: "reserved_field"},
		{name: "extra_data unknown key", body: map[string]any{"workflow": textWorkflow("a"), "extra_data": map[string]any{"client_id": "x"}}, status: 422, code: "invalid_request"},
		{name: "extra_data not string", body: map[string]any{"workflow": textWorkflow("a"), "extra_data": map[string]any{"api_key_svc_org": 1}}, status: 422, code: "invalid_request"},
		{name: "extra_data not object", body: map[string]any{"workflow": textWorkflow("a"), "extra_data": "k"}, status: 422, code: "invalid_request"},
		{name: "unknown class", body: map[string]any{"workflow": map[string]any{"1": empty, "2": save, "9": node("NoSuchNode", nil)}}, status: 422, code: "invalid_workflow", nodeErr: &nodeErr{"9", "class_type", "unknown_class"}},
		{name: "missing required input", body: map[string]any{"workflow": map[string]any{"1": node("EmptyImage", map[string]any{"width": 8, "height": 8, "batch_size": 1}), "2": save}}, status: 422, code: "invalid_workflow", nodeErr: &nodeErr{"1", "color", "required_input_missing"}},
		{name: "link to missing node", body: map[string]any{"workflow": map[string]any{"2": save}}, status: 422, code: "invalid_workflow", nodeErr: &nodeErr{"2", "images", "bad_link"}},
		{name: "bad output slot", body: map[string]any{"workflow": map[string]any{"1": empty, "2": node("SaveImage", map[string]any{"images": []any{"1", 3}, "filename_prefix": "x"})}}, status: 422, code: "invalid_workflow", nodeErr: &nodeErr{"2", "images", "bad_link"}},
		{name: "wrong literal type", body: map[string]any{"workflow": map[string]any{"1": node("EmptyImage", map[string]any{"width": "8", "height": 8, "batch_size": 1, "color": 0}), "2": save}}, status: 422, code: "invalid_workflow", nodeErr: &nodeErr{"1", "width", "invalid_type"}},
		{name: "wrong linked type", body: map[string]any{"workflow": map[string]any{"1": node("PrimitiveString", map[string]any{"value": "a"}), "2": save}}, status: 422, code: "invalid_workflow", nodeErr: &nodeErr{"2", "images", "invalid_type"}},
		{name: "out of range", body: map[string]any{"workflow": map[string]any{"1": node("EmptyImage", map[string]any{"width": 0, "height": 8, "batch_size": 1, "color": 0}), "2": save}}, status: 422, code: "invalid_workflow", nodeErr: &nodeErr{"1", "width", "value_out_of_range"}},
		{name: "cycle", body: map[string]any{"workflow": map[string]any{"1": node("ImageInvert", map[string]any{"image": []any{"2", 0}}), "2": node("ImageInvert", map[string]any{"image": []any{"1", 0}}), "3": node("SaveImage", map[string]any{"images": []any{"2", 0}, "filename_prefix": "x"})}}, status: 422, code: "invalid_workflow"},
		{name: "no output node", body: map[string]any{"workflow": map[string]any{"1": empty}}, status: 422, code: "invalid_workflow"},
		{name: "unknown file name", body: map[string]any{"workflow": map[string]any{"1": node("LoadImage", map[string]any{"image": "nope.png"}), "2": save}}, status: 422, code: "invalid_workflow", nodeErr: &nodeErr{"1", "image", "unknown_file"}},
		{name: "missing asset", body: map[string]any{"workflow": map[string]any{"1": node("LoadImage", map[string]any{"image": map[string]any{"type": "core/ASSET", "id": uuid.NewString()}}), "2": save}}, status: 422, code: "missing_asset"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := h.do("POST", "/api/v2/jobs", tc.body, nil)
			env := decode(t, body)
			if resp.StatusCode != tc.status || errCode(env) != tc.code {
				t.Fatalf("got %d %s, want %d %s: %s", resp.StatusCode, errCode(env), tc.status, tc.code, body)
			}
			if msg, _ := env["error"].(map[string]any)["message"].(string); msg == "" {
				t.Errorf("no error.message: %s", body)
			}
			if tc.nodeErr == nil {
				return
			}
			details, _ := env["error"].(map[string]any)["details"].(map[string]any)
			entries, _ := details["node_errors"].(map[string]any)[tc.nodeErr.node].([]any)
			for _, e := range entries {
				m := e.(map[string]any)
				if m["field"] == tc.nodeErr.field && m["reason"] == tc.nodeErr.reason {
					return
				}
			}
			t.Errorf("node_errors lack %+v: %s", *tc.nodeErr, body)
		})
	}
	if n := h.s.JobCount(); n != 0 {
		t.Errorf("rejected submissions created %d jobs", n)
	}
}

func TestExtraDataReachesTheJob(t *testing.T) {
	h := newHarness(t, Options{})
	resp, body := h.do("POST", "/api/v2/jobs", map[string]any{
		"workflow":   textWorkflow("x"),
		"extra_data": map[string]any{"api_key_svc_org": "partner-key"},
	}, nil)
	if resp.StatusCode != 201 {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
	id := decode(t, body)["id"].(string)
	if got := h.s.JobExtraData(id); got["api_key_svc_org"] != "partner-key" || len(got) != 1 {
		t.Errorf("JobExtraData = %v", got)
	}
}

func TestIdempotencyKeyIsSingleUseAndReleasedOnDefinitiveFailure(t *testing.T) {
	h := newHarness(t, Options{})
	key := uuid.NewString()

	// a validation error releases the key
	bad := map[string]any{"1": map[string]any{"class_type": "Nope"}}
	if resp, env := h.submit(bad, key); resp.StatusCode != 422 || errCode(env) != "invalid_workflow" {
		t.Fatalf("invalid workflow: %d %v", resp.StatusCode, env)
	}
	resp, job := h.submit(textWorkflow("a"), key)
	if resp.StatusCode != 201 {
		t.Fatalf("first valid use: %d %v", resp.StatusCode, job)
	}
	// any later use is rejected, same body or not, and nothing runs again
	for _, wf := range []map[string]any{textWorkflow("a"), textWorkflow("b")} {
		if resp, env := h.submit(wf, key); resp.StatusCode != 422 || errCode(env) != "idempotency_key_reuse" {
			t.Errorf("reuse: %d %v", resp.StatusCode, env)
		}
	}
	if n := h.s.JobCount(); n != 1 {
		t.Errorf("JobCount = %d, want 1", n)
	}
	// other keys are independent
	if resp, _ := h.submit(textWorkflow("a"), uuid.NewString()); resp.StatusCode != 201 {
		t.Errorf("new key: %d", resp.StatusCode)
	}
}

func TestIdempotencyKeyExpires(t *testing.T) {
	clk := &testClock{}
	h := newHarness(t, Options{IdempotencyTTL: time.Hour, Now: clk.Now})
	key := uuid.NewString()
	if resp, _ := h.submit(textWorkflow("a"), key); resp.StatusCode != 201 {
		t.Fatal(resp.StatusCode)
	}
	if resp, _ := h.submit(textWorkflow("a"), key); resp.StatusCode != http.StatusUnprocessableEntity {
		t.Fatalf("key still claimed: %d, want 422", resp.StatusCode)
	}
	clk.Advance(time.Hour)
	if resp, env := h.submit(textWorkflow("a"), key); resp.StatusCode != 201 {
		t.Errorf("expired key: %d %v", resp.StatusCode, env)
	}
}

func TestQueueFull(t *testing.T) {
	h := newHarness(t, Options{Workers: 1, QueueLimit: 1, StepDuration: 20 * time.Millisecond, RetryAfter: 3})
	long := imageWorkflow(1, 500) // 10s unless canceled
	first := h.mustSubmit(long)["id"].(string)
	h.waitStatus(first, "running")
	second := h.mustSubmit(long)
	if second["status"] != "queued" || second["queue_position"] != 1.0 {
		t.Errorf("second job: status %v position %v", second["status"], second["queue_position"])
	}
	key := uuid.NewString()
	resp, env := h.submit(long, key)
	if resp.StatusCode != 429 || errCode(env) != "queue_full" || resp.Header.Get("Retry-After") != "3" {
		t.Fatalf("third job: %d %v Retry-After=%q", resp.StatusCode, env, resp.Header.Get("Retry-After"))
	}
	// queue_full released the key: once there is room, the same key works
	h.do("POST", "/api/v2/jobs/"+second["id"].(string)+"/cancel", nil, nil)
	if resp, env := h.submit(textWorkflow("a"), key); resp.StatusCode != 201 {
		t.Errorf("retry after queue_full: %d %v", resp.StatusCode, env)
	}
	h.do("POST", "/api/v2/jobs/"+first+"/cancel", nil, nil)
}

func TestCancel(t *testing.T) {
	h := newHarness(t, Options{Workers: 1, StepDuration: 20 * time.Millisecond})
	long := imageWorkflow(1, 500)
	running := h.mustSubmit(long)["id"].(string)
	h.waitStatus(running, "running")
	queued := h.mustSubmit(long)["id"].(string)

	resp, body := h.do("POST", "/api/v2/jobs/"+queued+"/cancel", nil, nil)
	if j := decode(t, body); resp.StatusCode != 200 || j["status"] != "canceled" || j["completed_at"] == nil {
		t.Errorf("cancel queued: %d %v", resp.StatusCode, j)
	}
	resp, body = h.do("POST", "/api/v2/jobs/"+running+"/cancel", nil, nil)
	if j := decode(t, body); resp.StatusCode != 200 || (j["status"] != "canceling" && j["status"] != "canceled") {
		t.Errorf("cancel running: %d %v", resp.StatusCode, j)
	}
	final := h.waitStatus(running, "canceled")
	if final["completed_at"] == nil || final["error"] != nil {
		t.Errorf("canceled job %v", final)
	}
	// terminal: unchanged and idempotent
	resp, body = h.do("POST", "/api/v2/jobs/"+running+"/cancel", nil, nil)
	if j := decode(t, body); resp.StatusCode != 200 || j["status"] != "canceled" {
		t.Errorf("cancel again: %d %v", resp.StatusCode, j)
	}
	done := h.mustSubmit(textWorkflow("x"))["id"].(string)
	h.waitStatus(done, "succeeded")
	resp, body = h.do("POST", "/api/v2/jobs/"+done+"/cancel", nil, nil)
	if j := decode(t, body); resp.StatusCode != 200 || j["status"] != "succeeded" {
		t.Errorf("cancel succeeded job: %d %v", resp.StatusCode, j)
	}
	if resp, body := h.do("POST", "/api/v2/jobs/"+uuid.NewString()+"/cancel", nil, nil); resp.StatusCode != 404 || errCode(decode(t, body)) != "not_found" {
		t.Errorf("cancel unknown: %d %s", resp.StatusCode, body)
	}
}

func TestProgressWhileRunning(t *testing.T) {
	h := newHarness(t, Options{StepDuration: 5 * time.Millisecond})
	id := h.mustSubmit(imageWorkflow(1, 200))["id"].(string)
	j := h.waitFor(id, "a sampler step", func(j map[string]any) bool {
		p, _ := j["progress"].(map[string]any)
		return p != nil && p["step"] != nil && p["step"].(float64) >= 2
	})
	p := j["progress"].(map[string]any)
	if p["current_node"] != "2" || p["current_node_class"] != "ImageNoiseSampler" || p["steps"] != 200.0 || p["nodes_total"] != 3.0 {
		t.Errorf("progress %v", p)
	}
	// 1 unit for EmptyImage + step units, out of 1 + 200 + 1
	if v := p["value"].(float64); v <= 0 || v >= 1 {
		t.Errorf("value %v", v)
	}
	h.do("POST", "/api/v2/jobs/"+id+"/cancel", nil, nil)
}

func TestFailNode(t *testing.T) {
	h := newHarness(t, Options{})
	h.s.FailNode("SaveText", "", "disk full")
	id := h.mustSubmit(textWorkflow("x"))["id"].(string)
	j := h.waitStatus(id, "failed")
	e, _ := j["error"].(map[string]any)
	if e["code"] != "node_execution_error" || e["message"] != "disk full" || e["node_id"] != "2" || e["class_type"] != "SaveText" {
		t.Errorf("error %v", e)
	}
	if tb, _ := e["traceback"].(string); strings.Count(tb, "\n") < 3 {
		t.Errorf("traceback not multi-line: %q", tb)
	}
	h.s.ClearNodeFailures()
	id = h.mustSubmit(textWorkflow("x"))["id"].(string)
	h.waitStatus(id, "succeeded")
}

func TestLoadImageFromAsset(t *testing.T) {
	h := newHarness(t, Options{})
	// make a PNG with the emulator itself, then feed it back
	src := h.waitStatus(h.mustSubmit(map[string]any{
		"1": map[string]any{"class_type": "EmptyImage", "inputs": map[string]any{"width": 4, "height": 4, "batch_size": 1, "color": 0x102030}},
		"2": map[string]any{"class_type": "SaveImage", "inputs": map[string]any{"images": []any{"1", 0}, "filename_prefix": "src"}},
	})["id"].(string), "succeeded")
	_, data := h.do("GET", h.resolve(src["outputs"].([]any)[0].(map[string]any)["url"].(string)), nil, nil)
	assetID := h.s.PutAsset("input.png", "image/png", data)

	for name, ref := range map[string]any{"by ref": map[string]any{"type": "core/ASSET", "id": assetID}, "by name": "input.png"} {
		t.Run(name, func(t *testing.T) {
			wf := map[string]any{
				"1": map[string]any{"class_type": "LoadImage", "inputs": map[string]any{"image": ref}},
				"2": map[string]any{"class_type": "ImageInvert", "inputs": map[string]any{"image": []any{"1", 0}}},
				"3": map[string]any{"class_type": "ImageBlur", "inputs": map[string]any{"image": []any{"2", 0}, "blur_radius": 1, "sigma": 1.0}},
				"4": map[string]any{"class_type": "PreviewImage", "inputs": map[string]any{"images": []any{"3", 0}}},
			}
			j := h.waitStatus(h.mustSubmit(wf)["id"].(string), "succeeded")
			out := j["outputs"].([]any)[0].(map[string]any)
			_, png1 := h.do("GET", h.resolve(out["url"].(string)), nil, nil)
			img, err := png.Decode(bytes.NewReader(png1))
			if err != nil {
				t.Fatal(err)
			}
			r, g, b, _ := img.At(1, 1).RGBA()
			if r>>8 != 0xff-0x10 || g>>8 != 0xff-0x20 || b>>8 != 0xff-0x30 {
				t.Errorf("pixel %x %x %x, want inverted 102030", r>>8, g>>8, b>>8)
			}
		})
	}
}

func TestLogs(t *testing.T) {
	t.Run("enabled", func(t *testing.T) {
		h := newHarness(t, Options{LogsLink: true})
		j := h.waitStatus(h.mustSubmit(textWorkflow("x"))["id"].(string), "succeeded")
		link, _ := j["urls"].(map[string]any)["logs"].(string)
		if link == "" {
			t.Fatalf("no urls.logs: %v", j["urls"])
		}
		resp, body := h.do("GET", h.resolve(link), nil, nil)
		if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") || !strings.Contains(string(body), "SaveText") {
			t.Errorf("logs: %d %q", resp.StatusCode, body)
		}
	})
	t.Run("disabled", func(t *testing.T) {
		h := newHarness(t, Options{})
		j := h.waitStatus(h.mustSubmit(textWorkflow("x"))["id"].(string), "succeeded")
		if _, ok := j["urls"].(map[string]any)["logs"]; ok {
			t.Errorf("urls.logs present: %v", j["urls"])
		}
		resp, body := h.do("GET", "/api/v2/jobs/"+j["id"].(string)+"/logs", nil, nil)
		if resp.StatusCode != 404 || errCode(decode(t, body)) != "not_found" {
			t.Errorf("logs route: %d %s", resp.StatusCode, body)
		}
	})
}

func TestCompleteJobs(t *testing.T) {
	h := newHarness(t, Options{StepDuration: time.Second, Workers: 1})
	a := h.mustSubmit(imageWorkflow(1, 1000))["id"].(string)
	b := h.mustSubmit(imageWorkflow(1, 1000))["id"].(string)
	h.s.CompleteJobs()
	for _, id := range []string{a, b} {
		if st, _ := h.s.JobStatus(id); st != "succeeded" {
			t.Errorf("job %s: %s", id, st)
		}
	}
}
