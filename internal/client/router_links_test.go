package client

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/svc-org/terraform-provider-svc/internal/emulator"
)

// Queue links on another origin than the one that answered (the router names itself by a
// public base URL) are rebased onto the answering origin: path and query kept, nothing sent to
// the other origin, and a warning says so once per submission.
func TestQueueLinksOnAnotherOriginAreRebased(t *testing.T) {
	var foreignHits atomic.Int32
	foreign := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { foreignHits.Add(1) }))
	defer foreign.Close()
	srv := emulator.New(emulator.Options{Router: emulator.RouterOptions{PublicBaseURL: foreign.URL}})
	hs := httptest.NewServer(srv.Handler())
	defer func() { hs.Close(); srv.Close() }()
	log := &recordingLogger{}
	c := testClient(t, hs.URL, func(cfg *Config) { cfg.Logger = log })
	ctx := context.Background()

	q, err := c.SubmitModelRequest(ctx, InvokeInput{Model: emulator.ModelEcho, Input: json.RawMessage(`{"prompt":"hi"}`), IdempotencyKey: "k1"})
	if err != nil {
		t.Fatal(err)
	}
	base := hs.URL + "/v2/models/demo/echo/requests/" + q.RequestID
	if q.StatusURL != base+"/status" || q.ResponseURL != base || q.CancelURL != base+"/cancel" {
		t.Fatalf("links not rebased onto %s: %+v", hs.URL, q)
	}
	if !strings.Contains(log.all(), "another origin") || !strings.Contains(log.all(), "status_url, response_url, cancel_url") {
		t.Fatalf("no warning names the rebased links:\n%s", log.all())
	}
	final, res, err := c.AwaitModelResult(ctx, q, RouterWaitOptions{PollMin: 1, PollMax: 1})
	if err != nil || res == nil {
		t.Fatalf("collect through rebased links: %v", err)
	}
	res.Body.Close()
	if final.StatusURL != base+"/status" {
		t.Fatalf("a status answer's links were not rebased: %s", final.StatusURL)
	}
	if _, err := c.CancelModelRequest(ctx, q); err != nil {
		t.Fatal(err)
	}
	if srv.Requests(emulator.OpCollectRequest) == 0 || srv.Requests(emulator.OpCancelRequest) != 1 {
		t.Fatal("collect and cancel did not reach the configured origin")
	}
	if n := foreignHits.Load(); n != 0 {
		t.Fatalf("the other origin received %d requests", n)
	}
}

// Links that carry credentials or another scheme are still refused, and the accepted handle
// comes back with the error.
func TestQueueLinksWithCredentialsOrOtherSchemesRefused(t *testing.T) {
	const id = "0b0c8f2e-0000-4000-8000-0000000000a1"
	hs := httptest.NewServer(status(201, map[string]string{"Content-Type": "application/json"}, `{"request_id":"`+id+`","status":"IN_QUEUE",`+
		`"status_url":"https://u:p@elsewhere.example/s","response_url":"/r","cancel_url":"javascript:alert(1)"}`))
	defer hs.Close()
	c := testClient(t, hs.URL)
	q, err := c.SubmitModelRequest(context.Background(), InvokeInput{Model: "demo/echo", Input: json.RawMessage(`{}`), IdempotencyKey: "k1"})
	if q == nil || q.RequestID != id {
		t.Fatalf("the accepted handle was lost: %+v, %v", q, err)
	}
	if err == nil || !strings.Contains(err.Error(), "carries credentials") || !strings.Contains(err.Error(), `unsupported scheme "javascript"`) {
		t.Fatalf("err = %v, want both links refused", err)
	}
	if strings.Contains(err.Error(), "u:p@") {
		t.Fatalf("the error shows the link's credentials: %v", err)
	}
	if q.StatusURL != "" || q.CancelURL != "" || q.ResponseURL != hs.URL+"/r" {
		t.Fatalf("refused links must be left empty, the good one resolved: %+v", q)
	}
}

// A held queue link that answers 404 (rebased onto a path the router does not serve, say) is
// checked against the link built on the router endpoint before the run is taken for gone.
func TestHeldQueueLinkNotFoundTriesTheBuiltLink(t *testing.T) {
	const id = "0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"
	base := "/v2/models/demo/echo/requests/" + id
	for _, tc := range []struct {
		name     string
		model    string // the held handle's model; empty: no link can be built
		heldPath string
		wantOK   bool
		wantHits int32 // requests reaching the built links
	}{
		{name: "wrong held links, built links answer", model: "demo/echo", heldPath: "/elsewhere/" + id, wantOK: true, wantHits: 3},
		{name: "held links are the built ones: 404 believed", model: "demo/echo", heldPath: base, wantHits: 3},
		{name: "no model: 404 believed", heldPath: "/elsewhere/" + id},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var builtHits atomic.Int32
			hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if !strings.HasPrefix(r.URL.Path, base) || tc.heldPath == base {
					if strings.HasPrefix(r.URL.Path, base) {
						builtHits.Add(1)
					}
					w.Header().Set("X-Svc-Error-Type", "not_found")
					w.WriteHeader(http.StatusNotFound)
					return
				}
				builtHits.Add(1)
				switch r.URL.Path {
				case base + "/status":
					// The router keeps naming the links it named before, wrong or not.
					fmt.Fprintf(w, `{"request_id":%q,"status":"COMPLETED","status_url":"%s/status","response_url":%q,"cancel_url":"%s/cancel"}`, id, tc.heldPath, tc.heldPath, tc.heldPath)
				case base + "/cancel":
					w.WriteHeader(http.StatusAccepted)
				default:
					fmt.Fprint(w, `{"echo":"hi"}`)
				}
			}))
			defer hs.Close()
			c := testClient(t, hs.URL)
			held := &QueueRequest{RequestID: id, Model: tc.model, StatusURL: hs.URL + tc.heldPath + "/status", ResponseURL: hs.URL + tc.heldPath, CancelURL: hs.URL + tc.heldPath + "/cancel"}
			ctx := context.Background()
			st, errStatus := c.ModelRequestStatus(ctx, held)
			if tc.wantOK && errStatus == nil && st.StatusURL != hs.URL+base+"/status" {
				t.Errorf("status_url after the fallback %q; want the built link that answered", st.StatusURL)
			}
			res, _, errCollect := c.CollectModelRequest(ctx, held)
			if res != nil {
				res.Body.Close()
			}
			_, errCancel := c.CancelModelRequest(ctx, held)
			for what, err := range map[string]error{"status": errStatus, "collect": errCollect, "cancel": errCancel} {
				if tc.wantOK && err != nil {
					t.Errorf("%s: %v; want the built link's answer", what, err)
				}
				if !tc.wantOK && !Gone(err) {
					t.Errorf("%s: err = %v; want the 404", what, err)
				}
			}
			if n := builtHits.Load(); n != tc.wantHits {
				t.Errorf("%d requests reached the built links, want %d", n, tc.wantHits)
			}
		})
	}
}
