package client

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http/httptrace"
	"net/url"
	"strings"
	"sync/atomic"
	"syscall"
)

// NotSentError says a request provably never reached the service: no attempt wrote a byte of
// it (the name did not resolve, the connection was refused, the TLS handshake or the
// certificate failed, a proxy refused the tunnel, or a timeout came first). Nothing was
// created by it. Setting names the endpoint setting the request went to ("endpoint",
// "router_endpoint" or "registry_endpoint"), for the caller to say what to check.
type NotSentError struct {
	Operation string
	URL       string // redacted
	Setting   string
	Cause     error
}

func (e *NotSentError) Error() string {
	return fmt.Sprintf("%s: not sent (the request never reached the service): %v", e.Operation, e.Cause)
}

func (e *NotSentError) Unwrap() error { return e.Cause }

// Hint says what to check, in words: the scheme when a TLS client met a plain-HTTP server,
// else the endpoint's address.
func (e *NotSentError) Hint() string {
	var recordErr tls.RecordHeaderError
	var verifyErr *tls.CertificateVerificationError
	switch {
	case errors.As(e.Cause, &recordErr) || plainHTTPAnswer(e.Cause):
		return fmt.Sprintf("The server at %s answered the TLS handshake in plain text: it serves http, not https. Check the scheme of %s (http:// instead of https://).", hostOf(e.URL), e.Setting)
	case errors.As(e.Cause, &verifyErr):
		return fmt.Sprintf("The certificate of %s is not trusted (%v). Check %s, and that the system trusts the server's certificate authority.", hostOf(e.URL), verifyErr.Err, e.Setting)
	case errors.Is(e.Cause, syscall.ECONNREFUSED):
		return fmt.Sprintf("Nothing listens at %s. Check %s (host, port and scheme) and that the service is up.", hostOf(e.URL), e.Setting)
	}
	var dnsErr *net.DNSError
	if errors.As(e.Cause, &dnsErr) {
		return fmt.Sprintf("The host name %q did not resolve. Check %s.", dnsErr.Name, e.Setting)
	}
	return fmt.Sprintf("Check %s (%s): its host, port and scheme, and any proxy in between.", e.Setting, hostOf(e.URL))
}

// plainHTTPAnswer reports net/http's error for a TLS client answered in plain HTTP. net/http
// turns the tls.RecordHeaderError into an error of its own that only its text identifies.
func plainHTTPAnswer(err error) bool {
	return strings.Contains(err.Error(), "server gave HTTP response to HTTPS client")
}

func hostOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return raw
	}
	return u.Scheme + "://" + u.Host
}

// isNotSent reports whether err says the request never reached the service, so nothing exists
// because of it and sending it again cannot do the work twice. An outcome that may exist is
// not that, even when its last attempt never left (held by the outage gate until the deadline):
// an earlier one may have arrived.
func isNotSent(err error) bool {
	var notSent *NotSentError
	return errors.As(err, &notSent) && !outcomeMayExist(err)
}

// outcomeMayExist reports whether err leaves open that the request took effect: it may have arrived,
// and no answer settled it (see UnknownOutcomeError for the key it carried).
func outcomeMayExist(err error) bool {
	var unknown *UnknownOutcomeError
	return errors.As(err, &unknown)
}

// writeRecorder notes, through httptrace, whether any attempt of a call wrote its request (or
// its headers) to a connection: until then, a failure proves the service never saw it.
type writeRecorder struct{ wrote atomic.Bool }

type writeRecorderKey struct{}

// traceWrites returns ctx with a recorder of request writes attached, and the recorder.
func traceWrites(ctx context.Context) (context.Context, *writeRecorder) {
	rec := &writeRecorder{}
	mark := func() { rec.wrote.Store(true) }
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		WroteHeaders: mark,
		WroteRequest: func(httptrace.WroteRequestInfo) { mark() },
	})
	return context.WithValue(ctx, writeRecorderKey{}, rec), rec
}

// requestUnwritten reports whether ctx carries a recorder that saw no request written yet.
func requestUnwritten(ctx context.Context) bool {
	rec, ok := ctx.Value(writeRecorderKey{}).(*writeRecorder)
	return ok && !rec.wrote.Load()
}

// settingFor names the endpoint setting whose origin u is on.
func (c *Client) settingFor(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "endpoint"
	}
	switch origin(u) {
	case origin(c.endpoint):
		return "endpoint"
	case origin(c.routerEndpoint):
		return "router_endpoint"
	case origin(c.registryEndpoint):
		return "registry_endpoint"
	}
	return "endpoint"
}

// EndpointError says an endpoint setting cannot be used, and why. Setting is the provider
// setting's name ("endpoint", "router_endpoint", "registry_endpoint").
type EndpointError struct {
	Setting string
	Value   string
	Problem string
}

func (e *EndpointError) Error() string {
	return fmt.Sprintf("%s %q %s", e.Setting, e.Value, e.Problem)
}

// schemeProblem explains an endpoint that does not start with http:// or https://, suggesting
// both spellings when the value looks like a bare host (with or without a port).
func schemeProblem(name, raw string) error {
	u, err := url.Parse(raw)
	bare := err != nil || u.Scheme == "" || u.Opaque != "" || u.Host == ""
	if bare {
		return &EndpointError{Setting: name, Value: raw, Problem: fmt.Sprintf(
			"has no scheme: write http://%s or https://%s, whichever the service serves", raw, raw)}
	}
	return &EndpointError{Setting: name, Value: raw, Problem: "must be an http:// or https:// URL"}
}
