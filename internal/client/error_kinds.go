package client

import (
	"errors"
	"net/http"
)

// CredentialsRefused reports whether the service refused the request's credentials: 401 (missing
// or invalid) or 403 (not allowed for this caller).
func CredentialsRefused(err error) bool {
	st := StatusOf(err)
	return st == http.StatusUnauthorized || st == http.StatusForbidden
}

// RouteNotFound reports a 404 that did not come from the service's API: no error code, and a body
// none of the service's error shapes match (a proxy's page, a web framework's "404 page not
// found", nothing at all). The URL does not reach the API (a wrong endpoint, a missing or wrong
// mount prefix), which says nothing about the record that was asked for.
func RouteNotFound(err error) bool {
	var apiErr *APIError
	return errors.As(err, &apiErr) && apiErr.StatusCode == http.StatusNotFound && apiErr.Code == "" && !apiErr.enveloped
}
