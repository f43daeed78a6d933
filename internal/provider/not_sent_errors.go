package provider

import (
	"errors"
	"fmt"

	"github.com/svc-org/terraform-provider-svc/internal/client"
)

// settingEnv is the environment variable each endpoint setting falls back to.
var settingEnv = map[string]string{
	"endpoint":          "SVC_ENDPOINT",
	"router_endpoint":   "SVC_ROUTER_ENDPOINT",
	"registry_endpoint": "SVC_REGISTRY_ENDPOINT",
}

// settingOrigin says where a setting's value came from, for an error that asks the user to
// check it: the environment, the default, or (empty) the provider block.
func (d *providerData) settingOrigin(setting string) string {
	if d == nil {
		return ""
	}
	switch d.settingSources[setting] {
	case sourceEnv:
		return fmt.Sprintf(" (its value came from the environment variable %s)", settingEnv[setting])
	case sourceDefault:
		return fmt.Sprintf(" (not set: the default %s was used; set it in the provider block or %s)", client.DefaultEndpoint, settingEnv[setting])
	}
	return ""
}

// orNotSent returns the explanation of a request that never reached the service when err is
// one, and otherwise the caller's own explanation.
func (d *providerData) orNotSent(err error, otherwise string) string {
	var notSent *client.NotSentError
	if !errors.As(err, &notSent) {
		return otherwise
	}
	return fmt.Sprintf("Not sent: nothing was created. The request (%s) never reached the service, so applying again "+
		"cannot run anything twice.\n\n%s%s\n\nCause: %v",
		notSent.Operation, notSent.Hint(), d.settingOrigin(notSent.Setting), notSent.Cause)
}

// describeEndpointError explains an unusable endpoint setting, naming where its value came from.
func describeEndpointError(err error, sources map[string]settingSource) string {
	var epErr *client.EndpointError
	if !errors.As(err, &epErr) {
		return err.Error()
	}
	return err.Error() + (&providerData{settingSources: sources}).settingOrigin(epErr.Setting) + "."
}

// settingSource is where a provider setting's value came from.
type settingSource int

const (
	sourceConfig settingSource = iota
	sourceEnv
	sourceDefault
)

// endpointSources turns the sources recorded per environment variable into sources per endpoint
// setting. The router and registry endpoints default to endpoint, not to the built-in default.
func endpointSources(byEnv map[string]settingSource) map[string]settingSource {
	out := map[string]settingSource{}
	for setting, env := range settingEnv {
		if src, ok := byEnv[env]; ok {
			out[setting] = src
		}
	}
	for _, derived := range []string{"router_endpoint", "registry_endpoint"} {
		if out[derived] == sourceDefault {
			out[derived] = out["endpoint"] // unset: it is endpoint's value, wherever that came from
		}
	}
	return out
}

// withSendHint is err's text, followed, for a request that never reached the service, by what
// to check and where that setting's value came from.
func (d *providerData) withSendHint(err error) string {
	var notSent *client.NotSentError
	if !errors.As(err, &notSent) {
		return err.Error()
	}
	return fmt.Sprintf("%v\n\n%s%s", err, notSent.Hint(), d.settingOrigin(notSent.Setting))
}
