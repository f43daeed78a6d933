package client

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	neturl "net/url"
	"strings"
	"testing"
	"time"
)

// A submission that provably never reached the service is "not sent", says what to check, and
// is never an unknown outcome; one that left and lost its answer may exist.
func TestSubmitNotSentOrMayExist(t *testing.T) {
	t.Parallel()
	closedPort := func(t *testing.T) (string, *scripted) {
		// A port below the ephemeral range: no other test's server can be handed it.
		return "http://127.0.0.1:1", &scripted{}
	}
	serve := func(tls bool, steps ...http.HandlerFunc) func(t *testing.T) (string, *scripted) {
		return func(t *testing.T) (string, *scripted) {
			s := &scripted{steps: steps}
			var srv *httptest.Server
			if tls {
				srv = httptest.NewTLSServer(s) // its certificate is not trusted by the client
			} else {
				srv = httptest.NewServer(s)
			}
			t.Cleanup(srv.Close)
			return srv.URL, s
		}
	}
	created := status(201, nil, jobJSON("11111111-1111-1111-1111-111111111111", "queued"))
	tests := []struct {
		name     string
		server   func(t *testing.T) (string, *scripted)
		https    bool // rewrite http:// to https:// (a TLS client against a plain-HTTP server)
		notSent  bool
		mayExist bool
		hint     string
	}{
		{name: "closed port", server: closedPort, notSent: true, hint: "Nothing listens at"},
		{name: "https against an http server", server: serve(false, created), https: true, notSent: true, hint: "serves http, not https"},
		{name: "untrusted certificate", server: serve(true, created), notSent: true, hint: "certificate of"},
		{name: "TLS handshake that never completes (timeout before writing)", server: silentListener, https: true, notSent: true, hint: "any proxy in between"},
		{name: "connection dropped after the request was written", server: serve(false, dropConnection), mayExist: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			url, s := tt.server(t)
			if tt.https {
				url = strings.Replace(url, "http://", "https://", 1)
			}
			c := testClient(t, url, func(cfg *Config) { cfg.MaxRetries = 1; cfg.Timeout = 300 * time.Millisecond })
			// A submission is resent under its key until answered or the context ends.
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			_, err := c.SubmitJob(ctx, SubmitJobInput{Workflow: json.RawMessage(`{}`), IdempotencyKey: "k"})
			if isNotSent(err) != tt.notSent || outcomeMayExist(err) != tt.mayExist {
				t.Fatalf("isNotSent %v outcomeMayExist %v, want %v %v: %v", isNotSent(err), outcomeMayExist(err), tt.notSent, tt.mayExist, err)
			}
			if tt.notSent && s.count() != 0 {
				t.Errorf("%d requests reached the server", s.count())
			}
			var notSent *NotSentError
			if tt.notSent && errors.As(err, &notSent) {
				if notSent.Setting != "endpoint" || !strings.Contains(notSent.Hint(), tt.hint) {
					t.Errorf("setting %q hint %q, want endpoint and %q", notSent.Setting, notSent.Hint(), tt.hint)
				}
			}
		})
	}
}

func TestEndpointWithoutScheme(t *testing.T) {
	t.Parallel()
	for raw, want := range map[string]string{
		"localhost:8188":      "write http://localhost:8188 or https://localhost:8188",
		"127.0.0.1:8188":      "write http://127.0.0.1:8188 or https://127.0.0.1:8188",
		"svc.example.com":     "write http://svc.example.com or https://svc.example.com",
		"ftp://example.com":   "must be an http:// or https:// URL",
		"HTTPS://example.com": "",
	} {
		_, err := New(Config{Endpoint: raw})
		var epErr *EndpointError
		switch {
		case want == "" && err != nil:
			t.Errorf("%s: %v", raw, err)
		case want != "" && (!errors.As(err, &epErr) || epErr.Setting != "endpoint" || !strings.Contains(err.Error(), want)):
			t.Errorf("%s: %v, want an endpoint error saying %q", raw, err, want)
		}
	}
}

// silentListener accepts connections and never says anything: a TLS client's handshake waits
// until the attempt's deadline, before any request was written.
func silentListener(t *testing.T) (string, *scripted) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			t.Cleanup(func() { conn.Close() })
		}
	}()
	return "http://" + ln.Addr().String(), &scripted{}
}

// A proxy that refuses the tunnel: the request never left for the service.
func TestSubmitThroughRefusingProxyIsNotSent(t *testing.T) {
	t.Parallel()
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusForbidden)
	}))
	t.Cleanup(proxy.Close)
	proxyURL, err := neturl.Parse(proxy.URL)
	if err != nil {
		t.Fatal(err)
	}
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.Proxy = http.ProxyURL(proxyURL)
	c := testClient(t, "https://svc.example.test", func(cfg *Config) {
		cfg.MaxRetries = 0
		cfg.MaxRetriesSet = true
		cfg.HTTPClient = &http.Client{Transport: transport}
	})
	_, err = c.SubmitJob(context.Background(), SubmitJobInput{Workflow: json.RawMessage(`{}`), IdempotencyKey: "k"})
	if !isNotSent(err) || outcomeMayExist(err) || !strings.Contains(err.Error(), "Forbidden") {
		t.Fatalf("isNotSent %v outcomeMayExist %v, want the proxy's refusal, not sent: %v", isNotSent(err), outcomeMayExist(err), err)
	}
}
