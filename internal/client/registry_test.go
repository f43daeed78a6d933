package client

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// recorder answers with h and keeps what each request carried.
type recorder struct {
	mu     sync.Mutex
	method []string
	path   []string
	auth   []string
	body   []string
	h      http.HandlerFunc
}

func (rec *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	rec.mu.Lock()
	rec.method = append(rec.method, r.Method)
	rec.path = append(rec.path, r.URL.EscapedPath())
	rec.auth = append(rec.auth, r.Header.Get("Authorization"))
	rec.body = append(rec.body, string(b))
	rec.mu.Unlock()
	rec.h(w, r)
}

func TestRegistryRequests(t *testing.T) {
	tests := []struct {
		name      string
		token     string // registry_token; empty: defaults to the api key
		call      func(c *Client) error
		answer    int
		method    string
		path      string
		body      string
		wantAuth  string
		wantError bool
	}{
		{
			name: "claim", token: "eyJhbGciOi.jwt.sig", answer: 204,
			call: func(c *Client) error {
				return c.ClaimNode(context.Background(), ClaimNodeInput{PublisherID: "acme", NodeID: "my node", RepoToken: "ghp_repo"})
			},
			method: "POST", path: "/reg/publishers/acme/nodes/my%20node/claim-my-node", body: `{"REPO_TOKEN":"ghp_repo"}`,
			wantAuth: "Bearer eyJhbGciOi.jwt.sig",
		},
		{
			name: "translations, registry token defaults to the api key", answer: 201,
			call: func(c *Client) error {
				return c.CreateNodeTranslations(context.Background(), "n1", json.RawMessage(`{"fr":{"title":"Bonjour"}}`))
			},
			method: "POST", path: "/reg/nodes/n1/translations", body: `{"data":{"fr":{"title":"Bonjour"}}}`,
			wantAuth: "Bearer k-secret",
		},
		{
			name: "delete", token: "svc_prefixed_key", answer: 204,
			call: func(c *Client) error {
				_, err := c.DeleteNode(context.Background(), "acme", "n/1")
				return err
			},
			method: "DELETE", path: "/reg/publishers/acme/nodes/n%2F1", wantAuth: "Bearer svc_prefixed_key",
		},
		{
			name: "a node id that would change the path is refused before sending",
			call: func(c *Client) error {
				return c.ClaimNode(context.Background(), ClaimNodeInput{PublisherID: "acme", NodeID: ".."})
			},
			wantError: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &recorder{h: status(tt.answer, nil, "")}
			srv := httptest.NewServer(rec)
			defer srv.Close()
			c := testClient(t, srv.URL, func(cfg *Config) { cfg.RegistryEndpoint = srv.URL + "/reg/"; cfg.RegistryToken = tt.token })
			err := tt.call(c)
			if tt.wantError {
				if err == nil || len(rec.path) != 0 {
					t.Fatalf("err = %v after %d requests; want an error and nothing sent", err, len(rec.path))
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(rec.path) != 1 || rec.method[0] != tt.method || rec.path[0] != tt.path || rec.body[0] != tt.body || rec.auth[0] != tt.wantAuth {
				t.Fatalf("sent %v %v auth %q body %q; want %s %s auth %q body %q",
					rec.method, rec.path, rec.auth, rec.body, tt.method, tt.path, tt.wantAuth, tt.body)
			}
		})
	}
}

func TestRegistryRetryPolicy(t *testing.T) {
	busy := status(429, map[string]string{"Retry-After": "0"}, `{"error":"RATE_LIMITED","message":"slow down"}`)
	unavailableRetryAfter := status(503, map[string]string{"Retry-After": "0"}, `{"message":"maintenance"}`)
	unavailable := status(503, nil, `{"message":"maintenance"}`)
	serverError := status(500, map[string]string{"X-Svc-Request-Id": "r-500"}, `{"error":"INTERNAL","message":"boom"}`)
	claimed := status(409, map[string]string{"X-Svc-Request-Id": "r-409"}, `{"error":"NODE_ALREADY_CLAIMED","message":"node n is already claimed"}`)
	ok := status(204, nil, "")

	claim := func(c *Client) error {
		return c.ClaimNode(context.Background(), ClaimNodeInput{PublisherID: "p", NodeID: "n", RepoToken: "t"})
	}
	translate := func(c *Client) error {
		return c.CreateNodeTranslations(context.Background(), "n", json.RawMessage(`{"de":{}}`))
	}
	del := func(c *Client) error { _, err := c.DeleteNode(context.Background(), "p", "n"); return err }

	tests := []struct {
		name         string
		call         func(*Client) error
		steps        []http.HandlerFunc
		wantRequests int
		wantUnknown  bool
		wantCode     string
		wantStatus   int
	}{
		{name: "claim: 429 with Retry-After is retried", call: claim, steps: []http.HandlerFunc{busy, ok}, wantRequests: 2},
		{name: "claim: 503 with Retry-After is retried", call: claim, steps: []http.HandlerFunc{unavailableRetryAfter, ok}, wantRequests: 2},
		{name: "claim: 503 with Retry-After until the retries run out is a definitive refusal", call: claim, steps: []http.HandlerFunc{unavailableRetryAfter}, wantRequests: 4, wantStatus: 503},
		{name: "translations: 429 with a Retry-After above the cap is a definitive refusal", call: translate, steps: []http.HandlerFunc{status(429, map[string]string{"Retry-After": "3600"}, `{"error":"RATE_LIMITED","message":"later"}`)}, wantRequests: 1, wantCode: "RATE_LIMITED"},
		{name: "claim: 503 without Retry-After is an unknown outcome", call: claim, steps: []http.HandlerFunc{unavailable, ok}, wantRequests: 1, wantUnknown: true},
		{name: "claim: 500 is an unknown outcome", call: claim, steps: []http.HandlerFunc{serverError, ok}, wantRequests: 1, wantUnknown: true},
		{name: "claim: dropped connection is an unknown outcome", call: claim, steps: []http.HandlerFunc{dropConnection, ok}, wantRequests: 1, wantUnknown: true},
		{name: "claim: a refusal is definitive", call: claim, steps: []http.HandlerFunc{claimed, ok}, wantRequests: 1, wantCode: "NODE_ALREADY_CLAIMED"},
		{name: "translations: 429 with Retry-After is retried", call: translate, steps: []http.HandlerFunc{busy, status(201, nil, `{"id":"n"}`)}, wantRequests: 2},
		{name: "translations: 502 is an unknown outcome", call: translate, steps: []http.HandlerFunc{status(502, nil, "<html>bad gateway</html>"), ok}, wantRequests: 1, wantUnknown: true},
		{name: "delete: 503 without Retry-After is retried", call: del, steps: []http.HandlerFunc{unavailable, ok}, wantRequests: 2},
		{name: "delete: dropped connection is retried", call: del, steps: []http.HandlerFunc{dropConnection, ok}, wantRequests: 2},
		{name: "delete: 404 is success", call: del, steps: []http.HandlerFunc{status(404, nil, `{"error":"NODE_NOT_FOUND","message":"gone"}`)}, wantRequests: 1},
		{name: "delete: 403 is an error", call: del, steps: []http.HandlerFunc{status(403, nil, `{"error":"PERMISSION_DENIED","message":"no"}`)}, wantRequests: 1, wantCode: "PERMISSION_DENIED"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, c := scriptedClient(t, tt.steps)
			err := tt.call(c)
			if got := s.count(); got != tt.wantRequests {
				t.Fatalf("requests = %d, want %d (err %v)", got, tt.wantRequests, err)
			}
			var unknown *UnknownOutcomeError
			if errors.As(err, &unknown) != tt.wantUnknown {
				t.Fatalf("err = %v; unknown outcome wanted: %v", err, tt.wantUnknown)
			}
			switch {
			case tt.wantStatus != 0:
				if statusOf(err) != tt.wantStatus {
					t.Fatalf("err = %v, want HTTP %d", err, tt.wantStatus)
				}
			case tt.wantCode != "":
				if !HasCode(err, tt.wantCode) {
					t.Fatalf("err = %v, want code %s", err, tt.wantCode)
				}
			case !tt.wantUnknown && err != nil:
				t.Fatalf("err = %v, want success", err)
			}
		})
	}
}

func TestDeleteNodeReportsAlreadyGone(t *testing.T) {
	for _, tt := range []struct {
		status int
		gone   bool
	}{{204, false}, {200, false}, {404, true}} {
		srv := httptest.NewServer(status(tt.status, nil, ""))
		gone, err := testClient(t, srv.URL).DeleteNode(context.Background(), "p", "n")
		srv.Close()
		if err != nil || gone != tt.gone {
			t.Errorf("HTTP %d: gone, err = %v, %v; want %v, nil", tt.status, gone, err, tt.gone)
		}
	}
}
