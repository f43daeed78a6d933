package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/identityschema"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// A resource's identity (Terraform 1.12 and later: `import` blocks with `identity = {...}`, and
// the identity kept beside each instance in state) is, for every resource of this provider, a few
// string attributes of its state under the same names: what the service knows the remote object
// by. It never changes while the object exists, so it is derived from state wherever state is
// written.

// identityAttribute is one string attribute of an identity schema, needed to import by identity.
type identityAttribute struct {
	name, description string
}

// stringIdentitySchema is the identity schema of the attributes given, all required to import.
func stringIdentitySchema(attrs ...identityAttribute) identityschema.Schema {
	s := identityschema.Schema{Attributes: map[string]identityschema.Attribute{}}
	for _, a := range attrs {
		s.Attributes[a.name] = identityschema.StringAttribute{RequiredForImport: true, Description: a.description}
	}
	return s
}

// setIdentityFromState sets identity to the state's attributes of the same names. It leaves
// identity as it is when the state holds no object, or one whose identifying attributes are not
// all known yet (a create that failed before the service named the object): the framework then
// reports no identity only where the call succeeded, which cannot happen with a known id.
func setIdentityFromState(ctx context.Context, state tfsdk.State, identity *tfsdk.ResourceIdentity, names ...string) diag.Diagnostics {
	var diags diag.Diagnostics
	if identity == nil || state.Raw.IsNull() || !state.Raw.IsKnown() {
		return diags
	}
	values := make([]types.String, len(names))
	for i, name := range names {
		diags.Append(state.GetAttribute(ctx, path.Root(name), &values[i])...)
		if diags.HasError() || values[i].IsNull() || values[i].IsUnknown() {
			return diags
		}
	}
	for i, name := range names {
		diags.Append(identity.SetAttribute(ctx, path.Root(name), values[i])...)
	}
	return diags
}

// importedIdentity reads the named string attributes of an import block's identity; ok is false
// when the import is by id (no identity given).
func importedIdentity(ctx context.Context, req resource.ImportStateRequest, diags *diag.Diagnostics, names ...string) (values []string, ok bool) {
	if req.ID != "" || req.Identity == nil || req.Identity.Raw.IsNull() {
		return nil, false
	}
	values = make([]string, len(names))
	for i, name := range names {
		var v types.String
		diags.Append(req.Identity.GetAttribute(ctx, path.Root(name), &v)...)
		values[i] = v.ValueString()
	}
	return values, true
}
