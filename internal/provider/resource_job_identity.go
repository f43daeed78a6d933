package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

var _ resource.ResourceWithIdentity = (*jobResource)(nil)

// svc_job's identity is the job's id. Like the rest of svc_job's hot paths (a plan refreshes
// every job of a batch), it is written as a value, not through the framework's path lookups.

// jobIdentityType is the type of svc_job's identity.
var jobIdentityType = tftypes.Object{AttributeTypes: map[string]tftypes.Type{"id": tftypes.String}}

func (r *jobResource) IdentitySchema(_ context.Context, _ resource.IdentitySchemaRequest, resp *resource.IdentitySchemaResponse) {
	resp.IdentitySchema = stringIdentitySchema(identityAttribute{name: "id", description: "Job id (a UUID)."})
}

// setJobIdentity sets identity to the job id; an unknown id ("" before the service named the
// job) leaves it as it is.
func setJobIdentity(identity *tfsdk.ResourceIdentity, id string) {
	if identity == nil || id == "" {
		return
	}
	identity.Raw = jobIdentityValue(id)
}

func jobIdentityValue(id string) tftypes.Value {
	return tftypes.NewValue(jobIdentityType, map[string]tftypes.Value{"id": tftypes.NewValue(tftypes.String, id)})
}

// heldJobIdentity is the identity of the job state (a known object) holds: the one Terraform
// sent when it sent one, else one made from the id (a state written before svc_job had an
// identity, or by a CLI without identities). Nil when neither is there.
func heldJobIdentity(sent *tfprotov6.ResourceIdentityData, state map[string]tftypes.Value) *tfprotov6.ResourceIdentityData {
	if sent != nil && sent.IdentityData != nil {
		return sent
	}
	id := stringAttr(state, "id")
	if id == "" {
		return nil
	}
	v, err := tfprotov6.NewDynamicValue(jobIdentityType, jobIdentityValue(id))
	if err != nil {
		return nil
	}
	return &tfprotov6.ResourceIdentityData{IdentityData: &v}
}
