package emulator

import (
	"slices"
	"testing"
)

// TotalRequests counts the requests of every op, so a test can show that nothing was sent.
func TestTotalRequestsCountsEveryOp(t *testing.T) {
	t.Parallel()
	h := newHarness(t, Options{})
	if n := h.s.TotalRequests(); n != 0 {
		t.Fatalf("a new server counts %d requests", n)
	}
	h.do("GET", "/api/v2/jobs/00000000-0000-0000-0000-000000000000", nil, nil)
	h.do("GET", "/api/v2/assets/00000000-0000-0000-0000-000000000000", nil, nil)
	if got, want := h.s.TotalRequests(), h.s.Requests(OpGetJob)+h.s.Requests(OpGetAsset); got != 2 || want != 2 {
		t.Fatalf("TotalRequests = %d, per op %d; want 2 for one job read and one asset read", got, want)
	}
}

// SubmitKeys lists the key of every submission, in order, those a fault answered included.
func TestSubmitKeysListsEverySubmission(t *testing.T) {
	t.Parallel()
	h := newHarness(t, Options{})
	h.s.Inject(Fault{Op: OpSubmitJob, Nth: 2, Status: 503})
	for _, key := range []string{"k1", "k2", "k2", ""} {
		h.submit(textWorkflow("x"), key)
	}
	if got, want := h.s.SubmitKeys(), []string{"k1", "k2", "k2", ""}; !slices.Equal(got, want) {
		t.Fatalf("SubmitKeys = %q, want %q", got, want)
	}
}
