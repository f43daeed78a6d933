package client

import (
	"errors"
	"net/http"
	"strings"
)

// CredentialsRefused reports whether the service refused the request's credentials: 401 (missing
// or invalid) or 403 (not allowed for this caller).
func CredentialsRefused(err error) bool {
	st := StatusOf(err)
	return st == http.StatusUnauthorized || st == http.StatusForbidden
}

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
