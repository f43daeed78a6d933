package client

import (
	"errors"
	"net/http"
	"strings"
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
