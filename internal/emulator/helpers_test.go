package emulator

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"
)

// harness is a server under httptest with a plain net/http client.
type harness struct {
	t      *testing.T
	s      *Server
	ts     *httptest.Server
	base   string // ts.URL + mount prefix: what a client configures
	token  string
	client *http.Client
}

func newHarness(t *testing.T, opts Options) *harness {
	t.Helper()
	s := New(opts)
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(func() {
		ts.Close()
		s.Close()
	})
	return &harness{t: t, s: s, ts: ts, base: ts.URL + s.opts.MountPrefix, token: opts.Token, client: &http.Client{Timeout: 10 * time.Second}}
}

// resolve turns a link into a URL: host-relative links resolve against the origin.
func (h *harness) resolve(link string) string {
	h.t.Helper()
	u, err := url.Parse(h.ts.URL)
	if err != nil {
		h.t.Fatal(err)
	}
	ref, err := url.Parse(link)
	if err != nil {
		h.t.Fatalf("bad link %q: %v", link, err)
	}
	return u.ResolveReference(ref).String()
}

// do sends a request to base+path (or to an absolute URL) and returns the response and body.
func (h *harness) do(method, target string, body any, hdr map[string]string) (*http.Response, []byte) {
	h.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = bytes.NewBufferString(b)
	default:
		enc, err := json.Marshal(b)
		if err != nil {
			h.t.Fatal(err)
		}
		rd = bytes.NewReader(enc)
	}
	if len(target) > 0 && target[0] == '/' {
		target = h.base + target
	}
	req, err := http.NewRequest(method, target, rd)
	if err != nil {
		h.t.Fatal(err)
	}
	if h.token != "" {
		req.Header.Set("Authorization", "Bearer "+h.token)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := h.client.Do(req)
	if err != nil {
		h.t.Fatalf("%s %s: %v", method, target, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		h.t.Fatal(err)
	}
	return resp, data
}

// submit posts a workflow; key is the Idempotency-Key ("" for none).
func (h *harness) submit(wf map[string]any, key string) (*http.Response, map[string]any) {
	h.t.Helper()
	hdr := map[string]string{}
	if key != "" {
		hdr["Idempotency-Key"] = key
	}
	resp, body := h.do("POST", "/api/v2/jobs", map[string]any{"workflow": wf}, hdr)
	return resp, decode(h.t, body)
}

// mustSubmit submits and expects 201.
func (h *harness) mustSubmit(wf map[string]any) map[string]any {
	h.t.Helper()
	resp, job := h.submit(wf, "")
	if resp.StatusCode != http.StatusCreated {
		h.t.Fatalf("submit: status %d: %v", resp.StatusCode, job)
	}
	return job
}

func (h *harness) getJob(id string) map[string]any {
	h.t.Helper()
	resp, body := h.do("GET", "/api/v2/jobs/"+id, nil, nil)
	if resp.StatusCode != http.StatusOK {
		h.t.Fatalf("get job: status %d: %s", resp.StatusCode, body)
	}
	return decode(h.t, body)
}

// waitFor polls the job until cond holds or 5s pass.
func (h *harness) waitFor(id string, what string, cond func(job map[string]any) bool) map[string]any {
	h.t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		job := h.getJob(id)
		if cond(job) {
			return job
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("job %s: timed out waiting for %s; last: %v", id, what, job)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func (h *harness) waitStatus(id string, status string) map[string]any {
	h.t.Helper()
	return h.waitFor(id, "status "+status, func(j map[string]any) bool { return j["status"] == status })
}

func decode(t *testing.T, body []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if len(bytes.TrimSpace(body)) == 0 {
		return nil
	}
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatalf("not a JSON object: %v: %q", err, body)
	}
	return m
}

// errCode returns error.code of an envelope.
func errCode(m map[string]any) string {
	e, _ := m["error"].(map[string]any)
	c, _ := e["code"].(string)
	return c
}

// ---- workflows ----

func imageWorkflow(batch, steps int) map[string]any {
	return map[string]any{
		"1": map[string]any{"class_type": "EmptyImage", "inputs": map[string]any{"width": 16, "height": 8, "batch_size": batch, "color": 0x336699}},
		"2": map[string]any{"class_type": "ImageNoiseSampler", "inputs": map[string]any{"image": []any{"1", 0}, "seed": 7, "steps": steps, "denoise": 0.5}},
		"3": map[string]any{"class_type": "SaveImage", "inputs": map[string]any{"images": []any{"2", 0}, "filename_prefix": "out"}},
	}
}

func textWorkflow(text string) map[string]any {
	return map[string]any{
		"1": map[string]any{"class_type": "PrimitiveString", "inputs": map[string]any{"value": text}},
		"2": map[string]any{"class_type": "SaveText", "inputs": map[string]any{"text": []any{"1", 0}, "filename_prefix": "notes"}},
	}
}
