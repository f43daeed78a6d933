package client

import (
	"errors"
	"net/url"
	"testing"
)

func TestResolveLink(t *testing.T) {
	base, _ := url.Parse("https://gw.example.com/deployment/abc/api/v2/jobs")
	tests := []struct {
		name    string
		ref     string
		want    string
		wantErr bool
		foreign bool
	}{
		{name: "host-relative keeps its own mount prefix", ref: "/deployment/abc/api/v2/jobs/1", want: "https://gw.example.com/deployment/abc/api/v2/jobs/1"},
		{name: "host-relative is not joined to the request path", ref: "/api/v2/jobs/1", want: "https://gw.example.com/api/v2/jobs/1"},
		{name: "absolute same origin", ref: "https://gw.example.com/x/jobs/1", want: "https://gw.example.com/x/jobs/1"},
		{name: "absolute same origin explicit default port", ref: "https://GW.example.com:443/j", want: "https://GW.example.com:443/j"},
		{name: "absolute other host refused", ref: "https://evil.example.net/jobs/1", wantErr: true, foreign: true},
		{name: "absolute other port refused", ref: "https://gw.example.com:8443/jobs/1", wantErr: true, foreign: true},
		{name: "scheme downgrade refused", ref: "http://gw.example.com/jobs/1", wantErr: true, foreign: true},
		{name: "protocol-relative other host refused", ref: "//evil.example.net/jobs", wantErr: true, foreign: true},
		{name: "path-relative refused", ref: "jobs/1", wantErr: true},
		{name: "javascript scheme refused", ref: "javascript:alert(1)", wantErr: true},
		{name: "userinfo refused", ref: "https://user:pw@gw.example.com/j", wantErr: true},
		{name: "empty refused", ref: "", wantErr: true},
		{name: "query kept", ref: "/a/b?x=1", want: "https://gw.example.com/a/b?x=1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := resolveLink(base, tt.ref)
			if tt.wantErr {
				if err == nil {
					t.Fatalf("resolveLink(%q) = %q, want error", tt.ref, got)
				}
				if tt.foreign != errors.Is(err, errForeignLink) {
					t.Fatalf("errors.Is(err, errForeignLink) = %v, want %v (err %v)", !tt.foreign, tt.foreign, err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("resolveLink(%q) = %q, %v; want %q", tt.ref, got, err, tt.want)
			}
		})
	}
}

func TestResolveLinkOnOrigin(t *testing.T) {
	base, _ := url.Parse("http://127.0.0.1:8080/deployment/abc/api/v2/jobs")
	tests := []struct {
		name    string
		ref     string
		want    string
		rebased bool
		wantErr bool
	}{
		{name: "same origin kept", ref: "http://127.0.0.1:8080/deployment/abc/api/v2/jobs/1", want: "http://127.0.0.1:8080/deployment/abc/api/v2/jobs/1"},
		{name: "host-relative resolved", ref: "/deployment/abc/api/v2/jobs/1/events", want: "http://127.0.0.1:8080/deployment/abc/api/v2/jobs/1/events"},
		{name: "another spelling of the host rebased", ref: "http://localhost:8080/deployment/abc/api/v2/jobs/1", want: "http://127.0.0.1:8080/deployment/abc/api/v2/jobs/1", rebased: true},
		{name: "public name rebased with its query", ref: "https://api.example.com/deployment/abc/api/v2/jobs/1/cancel?x=1", want: "http://127.0.0.1:8080/deployment/abc/api/v2/jobs/1/cancel?x=1", rebased: true},
		{name: "protocol-relative other host rebased", ref: "//api.example.com/jobs/1", want: "http://127.0.0.1:8080/jobs/1", rebased: true},
		{name: "userinfo still refused", ref: "https://user:pw@api.example.com/j", wantErr: true},
		{name: "other scheme still refused", ref: "ftp://api.example.com/j", wantErr: true},
		{name: "path-relative still refused", ref: "jobs/1", wantErr: true},
		{name: "opaque link refused, not rebased", ref: "https:x", wantErr: true},
		{name: "scheme without host refused", ref: "https:///x", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, rebased, err := resolveLinkOnOrigin(base, tt.ref)
			if tt.wantErr {
				if err == nil {
					t.Fatalf("ResolveLinkOnOrigin(%q) = %q, want error", tt.ref, got)
				}
				return
			}
			if err != nil || got != tt.want || rebased != tt.rebased {
				t.Fatalf("ResolveLinkOnOrigin(%q) = %q, %v, %v; want %q, %v", tt.ref, got, rebased, err, tt.want, tt.rebased)
			}
		})
	}
}

func TestPathSegment(t *testing.T) {
	tests := []struct {
		in      string
		want    string
		wantErr bool
	}{
		{in: "3f2a", want: "3f2a"},
		{in: "a/b", want: "a%2Fb"},
		{in: "a?b", want: "a%3Fb"},
		{in: "a%2F", want: "a%252F"},
		{in: "a b", want: "a%20b"},
		{in: "..", wantErr: true},
		{in: ".", wantErr: true},
		{in: "", wantErr: true},
		{in: "a\nb", wantErr: true},
	}
	for _, tt := range tests {
		got, err := pathSegment("id", tt.in)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("pathSegment(%q) = %q, %v; want %q, error %v", tt.in, got, err, tt.want, tt.wantErr)
		}
	}
}

func TestJoinPathKeepsMountPrefix(t *testing.T) {
	base, _ := url.Parse("http://127.0.0.1:9/deployment/x")
	if got, want := joinPath(base, "api", "v2", "jobs", "a%2Fb"), "http://127.0.0.1:9/deployment/x/api/v2/jobs/a%2Fb"; got != want {
		t.Fatalf("joinPath = %q, want %q", got, want)
	}
}

func TestRedactURL(t *testing.T) {
	u, _ := url.Parse("wss://h/ws?clientId=1&token=secret-key&sig=abc")
	got := redactURL(u)
	for _, leaked := range []string{"secret-key", "abc"} {
		if contains(got, leaked) {
			t.Fatalf("redactURL leaked %q: %s", leaked, got)
		}
	}
	if !contains(got, "clientId=1") {
		t.Fatalf("redactURL dropped a harmless parameter: %s", got)
	}
}
