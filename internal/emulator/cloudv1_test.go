package emulator

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

func TestV1RoutesNeedAPIKey(t *testing.T) {
	t.Parallel()
	h := newHarness(t, Options{Token: "k1"})
	for _, tc := range []struct {
		name, method, path string
		hdr                map[string]string
		want               int
	}{
		{"object info without key", "GET", "/api/object_info", nil, http.StatusUnauthorized},
		{"object info with bearer only", "GET", "/api/object_info", map[string]string{"Authorization": "Bearer k1"}, http.StatusUnauthorized},
		{"object info with X-API-Key", "GET", "/api/object_info", map[string]string{"X-API-Key": "k1"}, http.StatusOK},
		{"socket without token", "GET", "/ws?clientId=x", nil, http.StatusUnauthorized},
		{"socket with a wrong token", "GET", "/ws?clientId=x&token=k2", nil, http.StatusUnauthorized},
		{"status of an unknown prompt", "GET", "/api/job/nope/status", map[string]string{"X-API-Key": "k1"}, http.StatusNotFound},
	} {
		resp, _ := h.do(tc.method, tc.path, nil, tc.hdr)
		if resp.StatusCode != tc.want {
			t.Errorf("%s: HTTP %d, want %d", tc.name, resp.StatusCode, tc.want)
		}
	}
}

func TestV1ViewRedirectsToAnotherOrigin(t *testing.T) {
	t.Parallel()
	h := newHarness(t, Options{})
	h.s.PutAsset("in.png", "image/png", []byte("PNG"))
	noFollow := &http.Client{Timeout: 5 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noFollow.Get(h.base + "/api/view?filename=in.png&subfolder=&type=input")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	loc, _ := url.Parse(resp.Header.Get("Location"))
	api, _ := url.Parse(h.base)
	if resp.StatusCode != http.StatusFound || loc == nil || loc.Host == api.Host || !strings.HasPrefix(loc.String(), h.s.StorageURL()) ||
		loc.Query().Get("sig") == "" {
		t.Fatalf("view: HTTP %d Location %q (api host %s)", resp.StatusCode, resp.Header.Get("Location"), api.Host)
	}
	// The signature is the storage host's only credential: a tampered one is refused.
	q := loc.Query()
	q.Set("sig", q.Get("sig")+"00")
	loc.RawQuery = q.Encode()
	bad, err := http.Get(loc.String())
	if err != nil {
		t.Fatal(err)
	}
	bad.Body.Close()
	if bad.StatusCode != http.StatusForbidden {
		t.Errorf("tampered signature: HTTP %d", bad.StatusCode)
	}
	if n := len(h.s.StorageRequestHeaders()); n != 1 {
		t.Errorf("storage requests recorded: %d", n)
	}
}
