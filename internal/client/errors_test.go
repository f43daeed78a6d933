package client

import (
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

func response(status int, header map[string]string, body string) *http.Response {
	h := http.Header{}
	for k, v := range header {
		h.Set(k, v)
	}
	u, _ := url.Parse("http://svc.test/api/v2/jobs")
	return &http.Response{StatusCode: status, Header: h, Body: io.NopCloser(strings.NewReader(body)),
		Request: &http.Request{Method: http.MethodPost, URL: u}}
}

func TestNewAPIError(t *testing.T) {
	tests := []struct {
		name       string
		status     int
		header     map[string]string
		body       string
		wantCode   string
		wantMsg    string
		wantInText []string
	}{
		{
			name: "v2 envelope with node errors", status: 422,
			header:   map[string]string{"X-Svc-Request-Id": "req-1"},
			body:     `{"error":{"code":"invalid_workflow","message":"bad graph","details":{"node_errors":{"5":[{"field":"image","reason":"required_input_missing"}]}}}}`,
			wantCode: "invalid_workflow", wantMsg: "bad graph",
			wantInText: []string{"HTTP 422", "req-1", `node "5": image: required_input_missing`},
		},
		{
			name: "HTML from a proxy", status: 502,
			header:     map[string]string{"X-Svc-Request-Id": "req-2", "Content-Type": "text/html"},
			body:       "<html><body><h1>502 Bad Gateway</h1><p>nginx</p></body></html>",
			wantMsg:    "Bad Gateway",
			wantInText: []string{"HTTP 502", "req-2", "502 Bad Gateway nginx"},
		},
		{
			name: "truncated JSON", status: 500, body: `{"error":{"code":"upstream_er`,
			wantMsg: "Internal Server Error", wantInText: []string{"HTTP 500", "no request id", `{"error":{"code":"upstream_er`},
		},
		{
			name: "plain text", status: 503, header: map[string]string{"Retry-After": "7"}, body: "try later",
			wantMsg: "Service Unavailable", wantInText: []string{"try later"},
		},
		{
			name: "router header type and string detail", status: 409,
			header: map[string]string{"X-Svc-Error-Type": "concurrency_limit_exceeded", "X-Svc-Request-Id": "r"},
			body:   `{"detail":"still running"}`, wantCode: "concurrency_limit_exceeded", wantMsg: "still running",
		},
		{
			name: "router validation body", status: 422, header: map[string]string{"X-Svc-Error-Type": "invalid_input"},
			body:     `{"detail":[{"loc":["body","size",0],"msg":"too small","type":"greater_than","ctx":{"gt":1}}]}`,
			wantCode: "invalid_input", wantInText: []string{"body.size[0]: too small (greater_than, {\"gt\":1})"},
		},
		{
			name: "registry error and message", status: 400, body: `{"error":"NODE_ALREADY_CLAIMED","message":"claimed"}`,
			wantCode: "NODE_ALREADY_CLAIMED", wantMsg: "claimed",
		},
		{
			name: "registry details and message", status: 400, body: `{"details":["data must be an object"],"message":"invalid"}`,
			wantMsg: "invalid", wantInText: []string{"data must be an object"},
		},
		{
			name: "registry message only", status: 401, header: map[string]string{"X-Svc-Request-Id": "req-r"},
			body: `{"message":"token expired"}`, wantMsg: "token expired", wantInText: []string{"HTTP 401: token expired (request id req-r)"},
		},
		{
			name: "registry error, details and message all kept", status: 400,
			body:     `{"error":"INVALID_TRANSLATIONS","details":["fr: must be an object","de: unknown field"],"message":"invalid"}`,
			wantCode: "INVALID_TRANSLATIONS", wantMsg: "invalid",
			wantInText: []string{"HTTP 400 INVALID_TRANSLATIONS: invalid", "\n  fr: must be an object\n  de: unknown field"},
		},
		{
			name: "unknown JSON shape keeps the body", status: 418, body: `{"weird":true}`,
			wantMsg: "I'm a teapot", wantInText: []string{`{"weird":true}`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newAPIError("submit job", response(tt.status, tt.header, tt.body))
			if e.StatusCode != tt.status || e.Code != tt.wantCode {
				t.Fatalf("status/code = %d/%q, want %d/%q", e.StatusCode, e.Code, tt.status, tt.wantCode)
			}
			if tt.wantMsg != "" && e.Message != tt.wantMsg {
				t.Fatalf("message = %q, want %q", e.Message, tt.wantMsg)
			}
			text := e.Error()
			for _, w := range tt.wantInText {
				if !strings.Contains(text, w) {
					t.Errorf("error text lacks %q:\n%s", w, text)
				}
			}
		})
	}
}

func TestNewAPIErrorBoundsBody(t *testing.T) {
	huge := strings.Repeat("x", 10<<20)
	e := newAPIError("read", response(500, nil, huge))
	if len(e.BodyExcerpt) > 300 {
		t.Fatalf("excerpt is %d bytes, want it bounded", len(e.BodyExcerpt))
	}
}

func TestParseRetryAfter(t *testing.T) {
	tests := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"3", 3 * time.Second, true},
		{"0", 0, true},
		{"-1", 0, false},
		{"", 0, false},
		{"soon", 0, false},
		{"999999999999", 24 * time.Hour, true},
	}
	for _, tt := range tests {
		got, ok := parseRetryAfter(tt.in)
		if got != tt.want || ok != tt.ok {
			t.Errorf("parseRetryAfter(%q) = %v, %v; want %v, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
	if d, ok := parseRetryAfter(time.Now().Add(time.Hour).UTC().Format(http.TimeFormat)); !ok || d < 59*time.Minute {
		t.Errorf("HTTP-date Retry-After = %v, %v; want about an hour", d, ok)
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }

// A rejection that names many nodes lists maxEchoedItems of them in id order, each with its
// class when the submitted workflow named one, and says how many more it left out: the v2
// envelope and the v1 prompt rejection alike.
func TestNodeErrorListIsCapped(t *testing.T) {
	t.Parallel()
	v2 := map[string][]NodeError{}
	v1 := map[string][]string{}
	for i := range maxEchoedItems + 5 {
		id := fmt.Sprintf("n%02d", i)
		v2[id] = []NodeError{{Field: "seed", Reason: "missing"}}
		v1[id] = []string{"seed: missing"}
	}
	tests := []struct {
		name string
		err  error
		want []string
	}{
		{
			name: "v2 invalid_workflow",
			err:  &APIError{StatusCode: 400, Code: "invalid_workflow", NodeErrors: v2, NodeClasses: map[string]string{"n00": "KSampler"}},
			want: []string{"\n  node \"n00\" (KSampler): seed: missing", "\n  node \"n19\": seed: missing", "\n  ... and 5 more node errors"},
		},
		{
			name: "v1 prompt rejection",
			err:  &PromptRejectedError{StatusCode: 400, NodeErrors: v1},
			want: []string{"\n  node \"n00\": seed: missing", "\n  node \"n19\": seed: missing", "\n  ... and 5 more node errors"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			msg := tt.err.Error()
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("missing %q in:\n%s", w, msg)
				}
			}
			if strings.Contains(msg, `"n20"`) || strings.Count(msg, "\n  node ") != maxEchoedItems {
				t.Errorf("want exactly the first %d nodes listed, got:\n%s", maxEchoedItems, msg)
			}
		})
	}
}
