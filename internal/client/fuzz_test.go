package client

// Fuzz targets for the parsers that read what a server sends: error bodies, links in job records,
// and event streams. Their seeds run as ordinary tests under `go test`; `make fuzz` explores
// further. (The v1 binary preview-frame decoder gets its own target beside it when it lands.)

import (
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// FuzzNewAPIError: whatever the status, headers and body, decoding an error response never
// panics, keeps the status and request id, bounds the excerpt, and renders an Error() text that
// cannot smuggle terminal control sequences or invalid UTF-8 into a user's console.
func FuzzNewAPIError(f *testing.F) {
	seeds := []struct {
		status                          int
		requestID, errType, retry, body string
	}{
		{422, "req-1", "", "", `{"error":{"code":"invalid_workflow","message":"bad","details":{"node_errors":{"5":[{"field":"image","reason":"missing"}]}}}}`},
		{502, "req-2", "", "", "<html><body><h1>502 Bad Gateway</h1></body></html>"},
		{500, "", "", "", `{"error":{"code":"upstream_er`},
		{503, "r", "", "7", "try later"},
		{409, "r", "concurrency_limit_exceeded", "", `{"detail":"still running"}`},
		{422, "r", "invalid_input", "", `{"detail":[{"loc":["body","image",0],"msg":"bad","type":"t","ctx":{"a":1}}]}`},
		{400, "r", "", "", `{"error":"bad_request","message":"nope"}`},
		{400, "r", "", "", `{"details":["a","b"],"message":"m"}`},
		{429, "r", "", "Wed, 21 Oct 2099 07:28:00 GMT", `{"message":"slow"}`},
		{500, "r\x1b[31m", "t\x07", "", `{"error":{"code":"c\u001b[2J","message":"m\u0000\r\u009b\u202e"}}`},
		{500, "r", "", "", "\xff\xfe<\x00>" + strings.Repeat("é", 300)},
		{599, "", "", "-1", `{"detail":[{"loc":[1e300,{"x":[null]},true],"msg":"\u001b]0;owned\u0007"}]}`},
		{0, "", "", "", ""},
	}
	for _, s := range seeds {
		f.Add(s.status, s.requestID, s.errType, s.retry, []byte(s.body))
	}
	f.Fuzz(func(t *testing.T, status int, requestID, errType, retryAfter string, body []byte) {
		h := http.Header{}
		h["X-Svc-Request-Id"] = []string{requestID}
		h["X-Svc-Error-Type"] = []string{errType}
		h["Retry-After"] = []string{retryAfter}
		u, _ := url.Parse("http://svc.test/api/v2/jobs?token=secret")
		resp := &http.Response{StatusCode: status, Header: h, Body: io.NopCloser(strings.NewReader(string(body))),
			Request: &http.Request{Method: http.MethodGet, URL: u}}

		e := newAPIError("read job", resp)

		if e.StatusCode != status || e.RequestID != capEcho(requestID, maxEchoedHeader) {
			t.Fatalf("status/request id not kept: got %d %q, want %d %q", e.StatusCode, e.RequestID, status, requestID)
		}
		if n := utf8.RuneCountInString(e.BodyExcerpt); n > 201 {
			t.Fatalf("excerpt of %d runes, want at most 200 and an ellipsis", n)
		}
		msg := e.Error()
		if !strings.Contains(msg, "HTTP "+strconv.Itoa(status)) {
			t.Fatalf("Error() does not name the status: %q", msg)
		}
		if requestID != "" && !strings.Contains(msg, capEcho(printable(requestID, false), maxEchoedHeader)) && len(requestID) <= maxEchoedHeader {
			t.Fatalf("Error() does not name the request id %q: %q", requestID, msg)
		}
		if strings.Contains(msg, "secret") && !strings.Contains(string(body)+requestID+errType, "secret") {
			t.Fatalf("Error() leaks the URL's token: %q", msg)
		}
		assertDisplaySafe(t, msg)
	})
}

// assertDisplaySafe fails when s holds invalid UTF-8 or a control or bidi-override character other
// than a newline.
func assertDisplaySafe(t *testing.T, s string) {
	t.Helper()
	if !utf8.ValidString(s) {
		t.Fatalf("invalid UTF-8 in %q", s)
	}
	for _, r := range s {
		if r != '\n' && (unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r)) {
			t.Fatalf("raw control character %U in %q", r, s)
		}
	}
}

// FuzzResolveLink: whatever a response puts in a link, ResolveLink never panics, and anything it
// accepts is an http(s) URL on the origin of the response, with no user info.
func FuzzResolveLink(f *testing.F) {
	bases := []string{"https://gw.example.com/deployment/abc/api/v2/jobs", "http://127.0.0.1:8188/api/v2/jobs/x", "https://[::1]:8443/api/v2/jobs"}
	refs := []string{
		"/api/v2/jobs/1", "https://gw.example.com/x", "https://GW.example.com:443/j", "//evil.example/x",
		"https://evil.example/x", "http://gw.example.com/x", "jobs/1", "javascript:alert(1)", "https://u:p@gw.example.com/",
		"", " /a ", "/a?b=1#c", "https:///x", "https:x", "/\\evil.example/x", "/%2F%2Fevil.example", "https://gw.example.com:/x",
		"https://gw.example.com@evil.example/", "https://evil.example#@gw.example.com", "http://127.0.0.1:8188/ok",
		"https://[::1]:8443/ok", "https://[::1%25lo]:8443/x", "HTTPS://gw.example.com/x", "\x00", "/\t/evil",
	}
	for i, r := range refs {
		f.Add(bases[i%len(bases)], r)
	}
	f.Fuzz(func(t *testing.T, rawBase, ref string) {
		base, err := url.Parse(rawBase)
		if err != nil || (base.Scheme != "http" && base.Scheme != "https") || base.Host == "" || base.User != nil {
			return // request URLs are always the client's own http(s) URLs
		}
		// Both resolvers promise the same: whatever they return is on the request's origin.
		// resolveLink refuses a link elsewhere; resolveLinkOnOrigin moves it here.
		for name, resolve := range map[string]func(*url.URL, string) (string, error){
			"ResolveLink": resolveLink,
			"ResolveLinkOnOrigin": func(b *url.URL, r string) (string, error) {
				got, _, err := resolveLinkOnOrigin(b, r)
				return got, err
			},
		} {
			got, err := resolve(base, ref)
			if err != nil {
				continue
			}
			checkOnOrigin(t, name, base, ref, got)
		}
	})
}

// checkOnOrigin fails t unless got, resolved by name from ref against base, is an http(s) URL
// without user info on base's origin, and is what net/http would dial.
func checkOnOrigin(t *testing.T, name string, base *url.URL, ref, got string) {
	t.Helper()
	u, err := url.Parse(got)
	if err != nil {
		t.Fatalf("%s(%q, %q) = %q, which does not parse: %v", name, base, ref, got, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		t.Fatalf("%s(%q, %q) = %q: scheme %q", name, base, ref, got, u.Scheme)
	}
	if u.User != nil {
		t.Fatalf("%s(%q, %q) = %q carries user info", name, base, ref, got)
	}
	if u.Scheme != base.Scheme || !strings.EqualFold(u.Hostname(), base.Hostname()) || portOf(u) != portOf(base) {
		t.Fatalf("%s(%q, %q) = %q leaves the origin %s://%s", name, base, ref, got, base.Scheme, base.Host)
	}
	// What a client would actually dial must be the same host, too.
	req, err := http.NewRequest(http.MethodGet, got, nil)
	if err != nil {
		t.Fatalf("%s(%q, %q) = %q, which net/http refuses: %v", name, base, ref, got, err)
	}
	if !strings.EqualFold(req.URL.Hostname(), base.Hostname()) {
		t.Fatalf("%s(%q, %q) = %q: net/http would dial %q", name, base, ref, got, req.URL.Host)
	}
}

// portOf is the port a URL dials, with the scheme's default made explicit and leading zeros
// dropped.
func portOf(u *url.URL) string {
	p := u.Port()
	if p == "" {
		if u.Scheme == "https" {
			return "443"
		}
		return "80"
	}
	if n, err := strconv.Atoi(p); err == nil {
		return strconv.Itoa(n)
	}
	return p
}

// FuzzReadSSE: whatever the stream, ReadSSE never panics or hangs; a dispatched event's data
// holds a line break only where it joined two data lines (so never a CR, and never more line
// breaks than the stream had data lines), its name holds none, and no line beyond the bound is
// accepted.
func FuzzReadSSE(f *testing.F) {
	for _, s := range []string{
		"event: status\ndata: {\"status\":\"running\"}\n\n",
		": keep-alive\r\nevent: log\r\ndata: a\r\n\r\n",
		"data: a\ndata: b\n\n",
		"data: a\rdata: b\r\r",
		"data: a\r\ndata: b\n\r\n",
		"event: x\rdata: y\n\n",
		"data: a\rb\n\n",
		"event: status\r\ndata: {\"status\":\"queued\"}\rdata: {\"status\":\"succeeded\"}\n\n",
		"data\ndata:\ndata: \n\n",
		"\xef\xbb\xbfdata: bom\n\n",
		"event: status\ndata: x\n\nevent: status\ndata: y",
		"id: 1\nretry: 10\nfoo: bar\ndata:x\n\n",
		"data: " + strings.Repeat("x", 5000) + "\n\n",
		"\r\r\r\n\n\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, stream []byte) {
		dataLines := 0
		for _, line := range strings.FieldsFunc(string(stream), func(r rune) bool { return r == '\n' || r == '\r' }) {
			if line == "data" || strings.HasPrefix(line, "data:") {
				dataLines++
			}
		}
		breaks := 0
		err := readSSE(strings.NewReader(string(stream)), func(ev sseEvent) error {
			if strings.ContainsAny(ev.Event, "\r\n") {
				t.Fatalf("event name %q holds a line break", ev.Event)
			}
			if strings.Contains(ev.Data, "\r") {
				t.Fatalf("event data %q holds a CR: a line end was taken for data", ev.Data)
			}
			if len(ev.Data) > maxSSELine*(1+strings.Count(ev.Data, "\n")) {
				t.Fatalf("event data of %d bytes is over the line bound", len(ev.Data))
			}
			breaks += strings.Count(ev.Data, "\n") + 1
			return nil
		})
		if breaks > dataLines {
			t.Fatalf("dispatched %d data lines, the stream has %d (err %v)", breaks, dataLines, err)
		}
	})
}
