package client

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sync"
)

// RedirectRefusedError is a redirect the client did not follow: the request carried a body or
// changes something (anything but GET and HEAD), and the redirect led to another origin than the
// one the request was sent to. Nothing was sent to that origin: not the body, not a header.
type RedirectRefusedError struct {
	Method     string
	StatusCode int    // the redirect's status: 301, 302, 303, 307 or 308
	From       string // origin the request was sent to (the configured endpoint)
	ToHost     string // host the Location header named
	RequestID  string // X-Svc-Request-Id of the redirect, capped
}

func (e *RedirectRefusedError) Error() string {
	msg := fmt.Sprintf("the service answered %s with HTTP %d redirecting it to %s, another host than %s; "+
		"the request was not sent there (no body and no credential leave for a host the configuration does not name)",
		e.Method, e.StatusCode, printable(e.ToHost, false), e.From)
	if e.RequestID != "" {
		msg += fmt.Sprintf(" (request id %s)", e.RequestID)
	}
	return msg + "; if the service has moved, set the endpoint to its new address"
}

// notProcessed reports whether the redirect itself says the request was not acted on: 307 and
// 308 ask for the same request to be repeated elsewhere. A 301, 302 or 303 to a POST may
// instead point at the result of a request that was processed.
func (e *RedirectRefusedError) notProcessed() bool {
	return e.StatusCode == http.StatusTemporaryRedirect || e.StatusCode == http.StatusPermanentRedirect
}

// policeRedirect is every client's CheckRedirect. A read (GET, HEAD) may follow a redirect to
// another origin (a signed storage URL), with its credential headers dropped. Any other request
// follows a redirect only on the origin it was sent to: net/http replays the body on a 307 or
// 308 (go-retryablehttp sets GetBody), so following it elsewhere would hand a workflow, a partner
// key in extra_data or a repository token to a host nobody configured, and adopt whatever that
// host answered.
func policeRedirect(req *http.Request, via []*http.Request) error {
	first := via[0]
	if first.Method != http.MethodGet && first.Method != http.MethodHead && origin(req.URL) != origin(first.URL) {
		refused := &RedirectRefusedError{Method: first.Method, From: origin(first.URL), ToHost: req.URL.Host}
		if req.Response != nil {
			refused.StatusCode = req.Response.StatusCode
			refused.RequestID = requestIDOf(req.Response.Header)
		}
		return refused
	}
	if err := stripCredentialsOnRedirect(req, via); err != nil {
		return err
	}
	if f, ok := req.Context().Value(followedKey{}).(*followedRedirects); ok {
		f.note(req.URL)
	}
	return nil
}

type followedKey struct{}

// followedRedirects records, for the requests of one context, the URL of the last redirect
// the client followed: the host an answer or a failure came from, when it is not the one asked.
type followedRedirects struct {
	mu   sync.Mutex
	last *url.URL
}

// followingRedirects returns a context whose requests record the redirects they follow.
func followingRedirects(ctx context.Context) (context.Context, *followedRedirects) {
	f := &followedRedirects{}
	return context.WithValue(ctx, followedKey{}, f), f
}

func (f *followedRedirects) note(u *url.URL) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.last = u
}

// lastURL is the URL of the last redirect followed, nil when none was.
func (f *followedRedirects) lastURL() *url.URL {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.last
}

// refusedRedirect reports whether err is a redirect policeRedirect refused.
func refusedRedirect(err error) (*RedirectRefusedError, bool) {
	var refused *RedirectRefusedError
	ok := errors.As(err, &refused)
	return refused, ok
}
