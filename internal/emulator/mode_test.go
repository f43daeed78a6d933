package emulator

import (
	"net/http"
	"testing"
	"time"
)

// The strict preset fills the knobs a test left unset and keeps those it set.
func TestStrictModeKnobs(t *testing.T) {
	t.Parallel()
	o := Options{Mode: ModeStrict}.withDefaults()
	if !o.LazyHashes || !o.ResignOnRead || !o.EventsDisabled || !o.FlatProgress || !o.IgnoreRange || o.V1NoSocket ||
		o.URLTTL != StrictURLTTL || o.ReadRetryAfter != 1 || o.Router.RetryAfter != 1 || o.HashDelay != 0 {
		t.Errorf("strict preset: %+v", o)
	}
	o = Options{Mode: ModeStrict, URLTTL: time.Minute, ReadRetryAfter: 5, HashDelay: time.Second}.withDefaults()
	if o.URLTTL != time.Minute || o.ReadRetryAfter != 5 || o.HashDelay != time.Second {
		t.Errorf("strict preset overrode set knobs: %+v", o)
	}
	if g := (Options{}).withDefaults(); g.LazyHashes || g.IgnoreRange || g.EventsDisabled || g.FlatProgress || g.ReadRetryAfter != 0 || g.URLTTL != time.Hour {
		t.Errorf("generous defaults changed: %+v", g)
	}
}

// On the strict server a finished job's hashes stay null in the job and the asset record, its
// signed URLs are refused seconds later, it has no event stream, and reads of a job that runs
// carry Retry-After.
func TestStrictModeServer(t *testing.T) {
	t.Parallel()
	clock := &testClock{}
	h := newHarness(t, Options{Mode: ModeStrict, Now: clock.Now, StepDuration: 2 * time.Millisecond})
	id := h.mustSubmit(imageWorkflow(1, 10000))["id"].(string)
	h.waitStatus(id, "running")
	resp, body := h.do("GET", "/api/v2/jobs/"+id, nil, nil)
	if got := resp.Header.Get("Retry-After"); got != "1" || decode(t, body)["status"] != "running" {
		t.Errorf("read of a running job: Retry-After %q, want 1 (%s)", got, body)
	}
	h.s.CompleteJobs()
	job := h.waitStatus(id, "succeeded")
	resp, _ = h.do("GET", "/api/v2/jobs/"+id, nil, nil)
	if got := resp.Header.Get("Retry-After"); got != "" {
		t.Errorf("read of a finished job: Retry-After %q, want none", got)
	}
	out := job["outputs"].([]any)[0].(map[string]any)
	if out["hash"] != nil {
		t.Errorf("job output hash %v, want null", out["hash"])
	}
	_, body = h.do("GET", "/api/v2/assets/"+out["id"].(string), nil, nil)
	if rec := decode(t, body); rec["hash"] != nil {
		t.Errorf("asset record hash %v, want null", rec["hash"])
	}
	if resp, _ := h.do("GET", h.resolve(out["url"].(string)), nil, nil); resp.StatusCode != http.StatusOK {
		t.Fatalf("fresh signed url: status %d", resp.StatusCode)
	}
	clock.Advance(StrictURLTTL + time.Second)
	if resp, _ := h.do("GET", h.resolve(out["url"].(string)), nil, nil); resp.StatusCode != http.StatusForbidden {
		t.Errorf("signed url %s later: status %d, want 403", StrictURLTTL+time.Second, resp.StatusCode)
	}
	if resp, _ := h.do("GET", "/api/v2/jobs/"+id+"/events", nil, nil); resp.StatusCode != http.StatusNotImplemented {
		t.Errorf("events: status %d, want 501", resp.StatusCode)
	}
}

// With HashDelay, the hash of an output appears that long after its job ended, on the server's
// clock, in the job record and the asset record alike.
func TestLazyHashesAppearAfterHashDelay(t *testing.T) {
	t.Parallel()
	clock := &testClock{}
	h := newHarness(t, Options{Mode: ModeStrict, Now: clock.Now, HashDelay: time.Minute})
	id := h.mustSubmit(imageWorkflow(1, 1))["id"].(string)
	out := h.waitStatus(id, "succeeded")["outputs"].([]any)[0].(map[string]any)
	if out["hash"] != nil {
		t.Fatalf("hash %v at once, want null", out["hash"])
	}
	clock.Advance(time.Minute)
	out = h.getJob(id)["outputs"].([]any)[0].(map[string]any)
	hash, _ := out["hash"].(string)
	if len(hash) != len("blake3:")+64 {
		t.Fatalf("hash a minute later: %v", out["hash"])
	}
	_, body := h.do("GET", "/api/v2/assets/"+out["id"].(string), nil, nil)
	if rec := decode(t, body); rec["hash"] != hash {
		t.Errorf("asset record hash %v, want %s", rec["hash"], hash)
	}
}

// With ReadMinInterval, a second read of a job within the interval (on the server's clock) is
// refused with 429 rate_limited and a Retry-After; once the interval passed, it is answered.
func TestReadMinInterval(t *testing.T) {
	t.Parallel()
	clock := &testClock{}
	h := newHarness(t, Options{Now: clock.Now, ReadMinInterval: 1500 * time.Millisecond})
	id := h.mustSubmit(imageWorkflow(1, 1))["id"].(string)
	if resp, body := h.do("GET", "/api/v2/jobs/"+id, nil, nil); resp.StatusCode != http.StatusOK {
		t.Fatalf("first read: %d %s", resp.StatusCode, body)
	}
	resp, body := h.do("GET", "/api/v2/jobs/"+id, nil, nil)
	if resp.StatusCode != http.StatusTooManyRequests || errCode(decode(t, body)) != "rate_limited" || resp.Header.Get("Retry-After") != "2" {
		t.Fatalf("read at once: %d, Retry-After %q, %s; want 429 rate_limited, Retry-After 2", resp.StatusCode, resp.Header.Get("Retry-After"), body)
	}
	clock.Advance(1500 * time.Millisecond)
	if resp, body := h.do("GET", "/api/v2/jobs/"+id, nil, nil); resp.StatusCode != http.StatusOK {
		t.Fatalf("read after the interval: %d %s", resp.StatusCode, body)
	}
}
