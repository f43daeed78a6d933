package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
)

var _ resource.ResourceWithIdentity = (*jobResource)(nil)

// jobIdentityAttrID is the name of svc_job's one identity attribute, the job's id.
const jobIdentityAttrID = "id"

// svc_job's identity is the job's id. Like the rest of svc_job's hot paths (a plan refreshes
// every job of a batch), it is written as a value, not through the framework's path lookups.

func (r *jobResource) IdentitySchema(_ context.Context, _ resource.IdentitySchemaRequest, resp *resource.IdentitySchemaResponse) {
	resp.IdentitySchema = stringIdentitySchema(identityAttribute{name: jobIdentityAttrID, description: "Job id (a UUID)."})
}

// setJobIdentity sets identity to the job id; an unknown id ("" before the service named the
// job) leaves it as it is.
func setJobIdentity(identity *tfsdk.ResourceIdentity, id string) {
	if identity == nil || id == "" {
		return
	}
	identity.Raw = jobIdentityValue(id)
}

// setHeldJobIdentity sets the identity of the job m holds: its id, or an empty one for a
// submission held by its key alone (unanswered).
func setHeldJobIdentity(identity *tfsdk.ResourceIdentity, m *jobModel) {
	if identity != nil && m.unanswered() {
		identity.Raw = jobIdentityValue("")
		return
	}
	setJobIdentity(identity, m.ID.ValueString())
}
