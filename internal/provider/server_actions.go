package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
)

// actionsServer is the plugin's server with the action calls, which the plugin's own layers do
// not know, passed straight to the framework's server. terraform-plugin-go serves actions only
// for a server that has these methods itself (tfprotov6.ProviderServerWithActions); without
// them, every action is refused as not implemented.
//
// The calls go through without a requestContext: InvokeAction returns a stream of progress
// events that the framework keeps filling after the call returns, under the call's context.
type actionsServer struct {
	tfprotov6.ProviderServer
	actions tfprotov6.ActionServer
}

var _ tfprotov6.ProviderServerWithActions = actionsServer{} //nolint:staticcheck // the interface is how terraform-plugin-go finds action support

func (s actionsServer) ValidateActionConfig(ctx context.Context, req *tfprotov6.ValidateActionConfigRequest) (*tfprotov6.ValidateActionConfigResponse, error) {
	return s.actions.ValidateActionConfig(ctx, req)
}

func (s actionsServer) PlanAction(ctx context.Context, req *tfprotov6.PlanActionRequest) (*tfprotov6.PlanActionResponse, error) {
	return s.actions.PlanAction(ctx, req)
}

func (s actionsServer) InvokeAction(ctx context.Context, req *tfprotov6.InvokeActionRequest) (*tfprotov6.InvokeActionServerStream, error) {
	return s.actions.InvokeAction(ctx, req)
}
