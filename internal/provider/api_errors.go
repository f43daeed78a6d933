package provider

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/svc-org/terraform-provider-svc/internal/client"
)

// defaultReadTimeout bounds one refresh or data-source read, every attempt and wait included.
const defaultReadTimeout = 2 * time.Minute

// apiFamily is the interface an operation goes to: it decides which provider settings a failure
// points at.
type apiFamily int

const (
	familyService  apiFamily = iota // endpoint, api_key
	familyRouter                    // router_endpoint, api_key
	familyRegistry                  // registry_endpoint, registry_token
)

func (f apiFamily) endpointSetting() string {
	switch f {
	case familyRouter:
		return "router_endpoint (or SVC_ROUTER_ENDPOINT; it defaults to endpoint)"
	case familyRegistry:
		return "registry_endpoint (or SVC_REGISTRY_ENDPOINT; it defaults to endpoint)"
	}
	return "endpoint (or SVC_ENDPOINT)"
}

func (f apiFamily) credentialSetting() string {
	if f == familyRegistry {
		return "registry_token in the provider block (or SVC_REGISTRY_TOKEN; it defaults to api_key)"
	}
	return "api_key in the provider block (or SVC_API_KEY)"
}

// credentialName is the provider setting that holds the family's credential and its environment
// variable, as an error's heading names them.
func (f apiFamily) credentialName() string {
	if f == familyRegistry {
		return "registry_token (SVC_REGISTRY_TOKEN)"
	}
	return "api_key (SVC_API_KEY)"
}

// endpointName is the provider setting that holds the family's URL and its environment variable.
func (f apiFamily) endpointName() string {
	switch f {
	case familyRouter:
		return "router_endpoint (SVC_ROUTER_ENDPOINT)"
	case familyRegistry:
		return "registry_endpoint (SVC_REGISTRY_ENDPOINT)"
	}
	return "endpoint (SVC_ENDPOINT)"
}

// errorSummary heads an error diagnostic about err. Credentials the service did not accept (a 401)
// and an endpoint that does not reach the API are headed as what they are, naming the setting and its environment variable,
// whatever the operation was: nothing in the configuration of the resource is at fault. Any other
// error is headed with fallback, the operation that failed.
func errorSummary(err error, f apiFamily, fallback string) string {
	switch {
	case client.Unauthenticated(err):
		return "Credentials not accepted: check " + f.credentialName()
	case client.RouteNotFound(err):
		return "The endpoint does not reach the service: check " + f.endpointName()
	}
	return fallback
}

// settingHint names the provider setting a failure points at, or returns "": refused credentials
// point at the key or token, a 404 that did not come from the service's API at the endpoint.
func settingHint(err error, f apiFamily) string {
	switch {
	case client.Unauthenticated(err):
		return fmt.Sprintf("The service did not accept the credentials (HTTP 401: missing or invalid). Set %s to a valid key.",
			f.credentialSetting())
	case client.Forbidden(err):
		return fmt.Sprintf("The service refused this operation to these credentials (HTTP 403). Check that %s is the key "+
			"of an account allowed to do it.", f.credentialSetting())
	case client.RouteNotFound(err):
		return fmt.Sprintf("The endpoint looks wrong: the answer was a 404 that did not come from the service's API "+
			"(no error code, not the service's error body), so the URL does not reach it. Check %s: the host, and the "+
			"mount prefix (such as /deployment/{id}) if the service sits under one.", f.endpointSetting())
	}
	return ""
}

// describeAPIError is err, redacted, followed by the setting it points at, if any.
func (d *providerData) describeAPIError(err error, f apiFamily) string {
	return withSettingHint(d.redact(d.withSendHint(err)), err, f)
}

// readContext bounds a refresh or a data-source read as a whole by read_timeout (each attempt,
// each retry and each wait between them included): a service that accepts connections and
// never answers must not hold `terraform plan` for minutes per resource.
func (d *providerData) readContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(d.logContext(ctx), d.readLimit())
}

func (d *providerData) readLimit() time.Duration {
	if d == nil || d.readTimeout <= 0 {
		return defaultReadTimeout
	}
	return d.readTimeout
}

// describeReadError explains a failed read made under readContext: a read cut by read_timeout
// says so and names the setting; otherwise as describeAPIError.
func (d *providerData) describeReadError(ctx context.Context, err error, f apiFamily) string {
	msg := d.describeAPIError(err, f)
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		msg = fmt.Sprintf("The read did not finish within read_timeout (%s), every attempt and wait included: the "+
			"service did not answer in time. If it is only slow, raise read_timeout in the provider block; otherwise "+
			"check %s.\n\n%s", d.readLimit(), f.endpointSetting(), msg)
	}
	return msg
}

// withSettingHint puts the setting that err points at (see settingHint), if any, before msg.
func withSettingHint(msg string, err error, f apiFamily) string {
	if hint := settingHint(err, f); hint != "" {
		return hint + "\n\n" + msg
	}
	return msg
}

// quotedStatus is the HTTP status err carries, for a message that quotes it to the user (0 when
// there is none). Deciding what a status means is the client's job (client.Gone and the like).
func quotedStatus(err error) int {
	var apiErr *client.APIError
	if errors.As(err, &apiErr) {
		return apiErr.StatusCode
	}
	return 0
}
