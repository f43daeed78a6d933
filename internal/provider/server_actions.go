package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/action"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
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
	actions   tfprotov6.ActionServer
	writeOnly map[string]writeOnlyAttributes // by action type
}

var _ tfprotov6.ProviderServerWithActions = actionsServer{} //nolint:staticcheck // the interface is how terraform-plugin-go finds action support

// ValidateActionConfig works around terraform-plugin-framework v1.19.0, whose validation of an
// action's configuration refuses any value of a write-only attribute ("Write-only attributes
// are only supported in Terraform 1.11 and later"), on every CLI: it validates action schemas
// as if the client could not take write-only values. Terraform 1.14 and later take them, and
// let ephemeral values go to them only. The framework validates a copy of the configuration
// with those values null; nothing else about them is validated, and the action receives them.
func (s actionsServer) ValidateActionConfig(ctx context.Context, req *tfprotov6.ValidateActionConfigRequest) (*tfprotov6.ValidateActionConfigResponse, error) {
	if a, ok := s.writeOnly[req.ActionType]; ok && req.Config != nil {
		if config, ok := a.withoutWriteOnly(req.Config); ok {
			copied := *req
			copied.Config = config
			req = &copied
		}
	}
	return s.actions.ValidateActionConfig(ctx, req)
}

// writeOnlyAttributes are the write-only attributes of an action's schema, and its type.
type writeOnlyAttributes struct {
	typ   tftypes.Object
	names []string
}

// actionWriteOnlyAttributes indexes, by action type, the actions of p that have write-only
// attributes.
func actionWriteOnlyAttributes(ctx context.Context, p *svcProvider) map[string]writeOnlyAttributes {
	out := map[string]writeOnlyAttributes{}
	for _, newAction := range p.Actions(ctx) {
		a := newAction()
		var meta action.MetadataResponse
		a.Metadata(ctx, action.MetadataRequest{ProviderTypeName: "svc"}, &meta)
		var sch action.SchemaResponse
		a.Schema(ctx, action.SchemaRequest{}, &sch)
		typ, ok := sch.Schema.Type().TerraformType(ctx).(tftypes.Object)
		if !ok {
			continue
		}
		var names []string
		for name, attr := range sch.Schema.Attributes {
			if attr.IsWriteOnly() {
				names = append(names, name)
			}
		}
		if len(names) > 0 {
			out[meta.TypeName] = writeOnlyAttributes{typ: typ, names: names}
		}
	}
	return out
}

// withoutWriteOnly is config with the write-only attributes null; ok is false when config is not
// a known object of the action's type (the framework then reports what is wrong with it).
func (a writeOnlyAttributes) withoutWriteOnly(config *tfprotov6.DynamicValue) (*tfprotov6.DynamicValue, bool) {
	v, err := config.Unmarshal(a.typ)
	var attrs map[string]tftypes.Value
	if err != nil || !v.IsKnown() || v.IsNull() || v.As(&attrs) != nil {
		return nil, false
	}
	for _, name := range a.names {
		attrs[name] = tftypes.NewValue(a.typ.AttributeTypes[name], nil)
	}
	out, err := tfprotov6.NewDynamicValue(a.typ, tftypes.NewValue(a.typ, attrs))
	if err != nil {
		return nil, false
	}
	return &out, true
}

func (s actionsServer) PlanAction(ctx context.Context, req *tfprotov6.PlanActionRequest) (*tfprotov6.PlanActionResponse, error) {
	return s.actions.PlanAction(ctx, req)
}

func (s actionsServer) InvokeAction(ctx context.Context, req *tfprotov6.InvokeActionRequest) (*tfprotov6.InvokeActionServerStream, error) {
	return s.actions.InvokeAction(ctx, req)
}
