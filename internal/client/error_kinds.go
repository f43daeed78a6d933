package client

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"time"
)

// CredentialsRefused reports whether the service refused the request's credentials: 401 (missing
// or invalid) or 403 (not allowed for this caller).
func CredentialsRefused(err error) bool { return Unauthenticated(err) || Forbidden(err) }

// RouteNotFound reports a 404 that did not come from the API the request was meant for: from the
// router, one without the X-Svc-Error-Type header every router error carries; from the other
// interfaces, one with no error code and a body none of their error shapes match (a proxy's page,
// a web framework's "404 page not found", nothing at all). The URL does not reach the API (a wrong
// endpoint, a missing or wrong mount prefix), which says nothing about the record asked for.
func RouteNotFound(err error) bool {
	var apiErr *APIError
	if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusNotFound {
		return false
	}
	if apiErr.fromRouter {
		return apiErr.Header.Get("X-Svc-Error-Type") == ""
	}
	return apiErr.Code == "" && !apiErr.enveloped
}

// DeclinedUntilDeadline reports whether the operation ended because its deadline came while it
// waited to resend after answers that refused it for now (a 429, say), with no attempt on its way
// at that moment: the service's last word was that refusal, so nothing was done.
func DeclinedUntilDeadline(err error) bool {
	var ended *waitEndedError
	return errors.As(err, &ended) && ended.settled() && !routerStillRunningAnswer(ended.last.status, ended.last.header)
}

// isRouterURL reports whether u is a route of the model router (under router_endpoint/v2/).
func (c *Client) isRouterURL(u string) bool {
	return strings.HasPrefix(u, strings.TrimRight(c.routerEndpoint.String(), "/")+"/v2/")
}

// Unauthenticated reports a 401: the credentials were missing or invalid.
func Unauthenticated(err error) bool { return statusOf(err) == http.StatusUnauthorized }

// Forbidden reports a 403: the credentials are valid but not allowed this operation.
func Forbidden(err error) bool { return statusOf(err) == http.StatusForbidden }

// NotFound reports a 404 and nothing else: the service (or whatever answers at the URL) does not
// know the record or the route. Gone also counts 410; RouteNotFound tells a wrong URL apart.
func NotFound(err error) bool { return statusOf(err) == http.StatusNotFound }

// RefusedForNow reports a 429 Too Many Requests or 503 Service Unavailable as the final answer:
// the service declined the request for now (a limit, an overload), so it did not act on it.
func RefusedForNow(err error) bool {
	st := statusOf(err)
	return st == http.StatusTooManyRequests || st == http.StatusServiceUnavailable
}

// RateLimited reports a 429 Too Many Requests as the final answer: a limit (a rate, a spend
// allowance, a concurrency cap) refused the request before anything ran.
func RateLimited(err error) bool { return statusOf(err) == http.StatusTooManyRequests }

// InputRejected reports the router's 422: the input failed the model's schema, so nothing ran
// and nothing was billed. The APIError's FieldErrors say which fields.
func InputRejected(err error) bool { return statusOf(err) == http.StatusUnprocessableEntity }

// IdempotencyKeyConflict reports the router's 409 invalid_input: the Idempotency-Key was used
// before with a different request (or its record cannot be replayed), so the router ran nothing.
// A 409 concurrency_limit_exceeded is not this: it says the original run still goes on
// (RouterStillRunning).
func IdempotencyKeyConflict(err error) bool {
	var apiErr *APIError
	return errors.As(err, &apiErr) && apiErr.StatusCode == http.StatusConflict &&
		RouterErrorClass(apiErr.Code) == RouterErrInvalidInput
}

// UnknownServerErrorType returns the router's error type of a 5xx answer when this client does
// not know that type (RouterErrorClass handles it as internal_error), and whether it is one.
func UnknownServerErrorType(err error) (string, bool) {
	var apiErr *APIError
	if !errors.As(err, &apiErr) || apiErr.StatusCode < 500 || apiErr.Code == "" {
		return "", false
	}
	return apiErr.Code, RouterErrorClass(apiErr.Code) != apiErr.Code
}

// AlreadyClaimed reports the registry's 409 Conflict to a claim: the node already belongs to a
// publisher (possibly this one, by an earlier claim whose answer was lost).
func AlreadyClaimed(err error) bool { return statusOf(err) == http.StatusConflict }

// What a request's outcome tells: whether it may succeed if sent again (transientFailure), and
// what it tells the outage gate of the service (readOutcome, responseOutcome).

// readOutcome is what a failed or successful read tells the gate, and the Retry-After its
// answer asked for.
func readOutcome(err error) (gateOutcome, time.Duration) {
	switch {
	case err == nil:
		return gateAnswered, 0
	case transientFailure(err) && !rateLimited(err):
		return gateFailed, retryAfterOf(err)
	case errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
		return gateNothing, 0
	}
	var apiErr *APIError
	if errors.As(err, &apiErr) {
		return gateAnswered, 0 // a definite answer: the service is up
	}
	return gateNothing, 0
}

// responseOutcome is readOutcome for one attempt seen by the transport.
func responseOutcome(resp *http.Response, err error) (gateOutcome, time.Duration) {
	if err != nil {
		if transientTransportError(err) && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
			return gateFailed, 0
		}
		return gateNothing, 0
	}
	wait, _ := parseRetryAfter(resp.Header.Get("Retry-After"))
	if transientStatus(resp.StatusCode) && resp.StatusCode != http.StatusTooManyRequests {
		return gateFailed, wait
	}
	return gateAnswered, 0
}

// rateLimited reports whether err is a 429. A rate limit is the service answering: it is up,
// and asks this client to slow down, which the request's own Retry-After (or backoff) does. It
// is transient for the request, never a sign of an outage for the gate.
func rateLimited(err error) bool {
	var apiErr *APIError
	return errors.As(err, &apiErr) && apiErr.StatusCode == http.StatusTooManyRequests
}

// transientStatus reports the answers that say "not now" rather than "no": 408, 429, 500, 502,
// 503 and 504, whatever their body (a gateway's HTML page included).
func transientStatus(code int) bool {
	switch code {
	case http.StatusRequestTimeout, http.StatusTooManyRequests, http.StatusInternalServerError,
		http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	return false
}

// transientFailure reports whether a failed request may well succeed if sent again later: a
// transient answer (transientStatus), a connection refused, reset or cut short, an attempt that
// timed out, a download that stalled. What is not transient (401, 403, 404, 410, 422, any other
// 4xx, a certificate the client does not trust, an answer that is not what was asked for) will
// fail the same way again. A context that ended is not transient: it ends the operation.
func transientFailure(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var apiErr *APIError
	if errors.As(err, &apiErr) {
		return transientStatus(apiErr.StatusCode)
	}
	if errors.Is(err, ErrDownloadStalled) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.EPIPE) {
		return true
	}
	var netErr net.Error
	if errors.As(err, &netErr) && netErr.Timeout() {
		return true
	}
	var urlErr *url.Error
	if errors.As(err, &urlErr) || isNotSent(err) {
		return transientTransportError(err)
	}
	return false
}

// retryAfterOf is the Retry-After of the answer err carries (0: none).
func retryAfterOf(err error) time.Duration {
	var apiErr *APIError
	if errors.As(err, &apiErr) {
		return apiErr.RetryAfter
	}
	return 0
}
