package provider

import (
	"context"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
)

// NewProtocol6Server returns the provider's plugin server, which main serves to Terraform: the
// framework's server of the provider (newSvcProvider) under four thin layers of the plugin's own,
// each in a file of its own, innermost first:
//   - releasingServer (server_releasing.go) lets go of each call's context when the call
//     returns, which the framework does not;
//   - settledJobServer (server_job.go) answers the refresh of a finished svc_job and
//     the plan of one whose configuration changes nothing, as the framework would, without
//     decoding them;
//   - jobBatchServer (server_job_batch.go) answers the refresh, the plan and the destruction of
//     a settled svc_job_batch (no row running), and the plan of one whose rows alone change, as
//     the framework would: the framework visits every value of every row on each call, tens of
//     seconds of CPU for 10,000 rows; it also runs the batch's create and update, and has the
//     framework validate its configuration without the rows, which that validation does not read;
//   - actionsServer (server_actions.go), outermost, passes the action calls to the framework's
//     server: terraform-plugin-go serves actions only from a server that has them.
//
// Every other call, and every rule a resource applies, is the framework's and the resource's.
// The layers rest on how the framework behaves, which its types do not show:
// TestFrameworkVersionIsTheOneTheServerLayersWereCheckedAgainst fails when go.mod's version of
// the framework changes, and says what to re-check.
func NewProtocol6Server(version string) func() tfprotov6.ProviderServer {
	return protocol6Server(version, time.Now)
}

// protocol6Server is NewProtocol6Server with the clock the provider compares expiry times with.
func protocol6Server(version string, now func() time.Time) func() tfprotov6.ProviderServer {
	return func() tfprotov6.ProviderServer { return serverStack(newSvcProvider(version, now)) }
}

// serverStack is the framework's server of provider p under the plugin's own layers: each layer
// answers some calls itself and passes the others on, down to the framework. A layer that judges
// a call by the provider's settings or clock reads them from p.
func serverStack(p *svcProvider) tfprotov6.ProviderServer {
	framework := providerserver.NewProtocol6(p)()
	var s tfprotov6.ProviderServer = releasingServer{framework}
	s = newSettledJobServer(s, p.now, p.configuredData)
	s = newJobBatchServer(s, p.configuredData)
	return actionsServer{ProviderServer: s, actions: framework.(tfprotov6.ProviderServerWithActions), //nolint:staticcheck // see actionsServer
		writeOnly: actionWriteOnlyAttributes(context.Background(), p)}
}
