package emulator

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"testing"
	"time"
)

// An asset's content answers a single range 206 from the byte asked, unless IgnoreRange (and so
// the strict server) serves it whole; a Cut fault ends the body early; an outage answers 503.
func TestAssetContentRangesCutsAndOutages(t *testing.T) {
	t.Parallel()
	content := make([]byte, 100_000)
	for i := range content {
		content[i] = byte(i % 251)
	}
	tests := []struct {
		name       string
		opts       Options
		fault      *Fault
		outage     bool
		rng        string
		wantStatus int
		wantRange  string // Content-Range
		wantBody   []byte
		wantCut    bool // the body ends early: an unexpected EOF
	}{
		{name: "whole", wantStatus: 200, wantBody: content},
		{name: "a range", rng: "bytes=40000-", wantStatus: 206, wantRange: "bytes 40000-99999/100000", wantBody: content[40000:]},
		{name: "a range, ignored", opts: Options{IgnoreRange: true}, rng: "bytes=40000-", wantStatus: 200, wantBody: content},
		{name: "a range on the strict server, ignored", opts: Options{Mode: ModeStrict}, rng: "bytes=40000-", wantStatus: 200, wantBody: content},
		{name: "cut", fault: &Fault{Op: OpAssetContent, Nth: 1, Cut: true, CutAfter: 1000}, wantStatus: 200, wantBody: content[:1000], wantCut: true},
		{name: "a range, cut", fault: &Fault{Op: OpAssetContent, Nth: 1, Cut: true, CutAfter: 1000}, rng: "bytes=500-",
			wantStatus: 206, wantRange: "bytes 500-99999/100000", wantBody: content[500:1500], wantCut: true},
		{name: "inside an outage", outage: true, rng: "bytes=40000-", wantStatus: 503},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, tt.opts)
			id := h.s.PutAsset("out.bin", "application/octet-stream", content)
			_, rec := h.do("GET", "/api/v2/assets/"+id, nil, nil)
			link := decode(t, rec)["url"].(string)
			if tt.fault != nil {
				h.s.Inject(*tt.fault)
			}
			if tt.outage {
				h.s.Outage(time.Now().Add(-time.Second), time.Minute, 2)
			}
			req, err := http.NewRequest("GET", h.resolve(link), nil)
			if err != nil {
				t.Fatal(err)
			}
			if tt.rng != "" {
				req.Header.Set("Range", tt.rng)
			}
			resp, err := h.client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, err := io.ReadAll(resp.Body)
			if resp.StatusCode != tt.wantStatus || resp.Header.Get("Content-Range") != tt.wantRange {
				t.Fatalf("answered %d, Content-Range %q; want %d, %q", resp.StatusCode, resp.Header.Get("Content-Range"), tt.wantStatus, tt.wantRange)
			}
			if tt.wantStatus == 503 {
				return
			}
			if cut := errors.Is(err, io.ErrUnexpectedEOF); cut != tt.wantCut || (err != nil && !cut) {
				t.Fatalf("reading the body: %v (cut short wanted: %v)", err, tt.wantCut)
			}
			if !bytes.Equal(body, tt.wantBody) {
				t.Fatalf("body of %d bytes, want %d", len(body), len(tt.wantBody))
			}
			if tt.wantCut && resp.ContentLength <= int64(len(body)) {
				t.Fatalf("a cut body declared Content-Length %d for the %d bytes sent: nothing tells it was cut", resp.ContentLength, len(body))
			}
		})
	}
}
