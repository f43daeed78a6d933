package client

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// origin is scheme://host[:port], lower-cased, with default ports made explicit, so that
// "https://a" and "https://A:443" compare equal.
func origin(u *url.URL) string {
	host := strings.ToLower(u.Hostname())
	port := u.Port()
	if port == "" {
		switch strings.ToLower(u.Scheme) {
		case "https":
			port = "443"
		case "http":
			port = "80"
		}
	}
	if strings.Contains(host, ":") { // IPv6 literal
		host = "[" + host + "]"
	}
	return strings.ToLower(u.Scheme) + "://" + host + ":" + port
}

// errForeignLink is returned for a link in a response that points at another origin than the
// response came from. The client refuses to follow it: following it would send our credentials
// to a host the user never configured.
var errForeignLink = errors.New("link points to another host")

// resolveLink resolves a URI reference from a response body against the URL of the request that
// returned it. The service may return an absolute URL or a host-relative reference starting with "/"
// (which already carries any mount prefix); a host-relative reference is resolved against the
// request's origin, never against the configured endpoint's path. An absolute link must stay on
// that origin.
func resolveLink(requestURL *url.URL, ref string) (string, error) {
	ref = strings.TrimSpace(ref)
	if ref == "" {
		return "", errors.New("empty link")
	}
	u, err := url.Parse(ref)
	if err != nil {
		return "", fmt.Errorf("link %q does not parse: %w", ref, err)
	}
	if u.User != nil {
		return "", fmt.Errorf("link %q carries credentials", redactLink(ref))
	}
	switch {
	case u.Scheme != "":
		if u.Scheme != "http" && u.Scheme != "https" {
			return "", fmt.Errorf("link %q has unsupported scheme %q", redactLink(ref), u.Scheme)
		}
	case u.Host != "": // protocol-relative "//host/path"
		u.Scheme = requestURL.Scheme
	case strings.HasPrefix(u.Path, "/"):
		u.Scheme, u.Host = requestURL.Scheme, requestURL.Host
	default:
		return "", fmt.Errorf("link %q is neither absolute nor host-relative", redactLink(ref))
	}
	if origin(u) != origin(requestURL) {
		return "", fmt.Errorf("%w: %q is not on %s", errForeignLink, redactLink(u.String()), origin(requestURL))
	}
	return u.String(), nil
}

// resolveLinkOnOrigin is ResolveLink for links the client follows with credentials. A link to
// another origin is not refused but rebased: its path and query are kept and put on the origin
// that answered. Services that build absolute links from a public base URL (a proxy's name,
// "localhost" where the user configured 127.0.0.1) name their own paths on another spelling of
// the host; the credentials then stay on the origin the user configured. rebased reports that
// the link was moved, for the caller to say so.
func resolveLinkOnOrigin(requestURL *url.URL, ref string) (link string, rebased bool, err error) {
	link, err = resolveLink(requestURL, ref)
	if !errors.Is(err, errForeignLink) {
		return link, false, err
	}
	u, perr := url.Parse(strings.TrimSpace(ref))
	if perr != nil || u.Host == "" || u.Opaque != "" {
		return "", false, err // not a link to another host but a malformed one ("https:x"): refused
	}
	u.Scheme, u.Host = requestURL.Scheme, requestURL.Host
	return u.String(), true, nil
}

// pathSegment escapes one path segment taken from user input or a response (a job id, a node id,
// a model slug). Anything that could change which path is requested (an empty segment, "." or
// "..") is refused; "/", "?", "%", "#" and spaces are escaped, so the value stays one segment.
func pathSegment(what, v string) (string, error) {
	switch v {
	case "":
		return "", fmt.Errorf("%s must not be empty", what)
	case ".", "..":
		return "", fmt.Errorf("%s %q is not a valid path segment", what, v)
	}
	if strings.ContainsAny(v, "\x00\r\n") {
		return "", fmt.Errorf("%s %q contains control characters", what, v)
	}
	return url.PathEscape(v), nil
}

// joinPath appends already-escaped segments to base's path, keeping base's mount prefix.
func joinPath(base *url.URL, escapedSegments ...string) string {
	u := *base
	p := strings.TrimRight(base.EscapedPath(), "/")
	for _, s := range escapedSegments {
		p += "/" + s
	}
	u.RawPath = ""
	u.Path = ""
	u.RawQuery = ""
	return u.Scheme + "://" + u.Host + p
}

// sensitiveQuery are query parameters whose values are secrets (the socket's token, a signature).
var sensitiveQuery = []string{"token", "sig", "signature", "X-Amz-Signature", "X-Goog-Signature", "api_key"}

// redactLink returns a URL fit for logs and errors: credential-bearing query values replaced.
func redactLink(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparseable URL)"
	}
	return redactURL(u)
}

func redactURL(u *url.URL) string {
	if u == nil {
		return ""
	}
	c := *u
	c.User = nil
	if c.RawQuery != "" {
		q := c.Query()
		for _, k := range sensitiveQuery {
			for key := range q {
				if strings.EqualFold(key, k) {
					q.Set(key, "REDACTED")
				}
			}
		}
		c.RawQuery = q.Encode()
	}
	return c.String()
}
