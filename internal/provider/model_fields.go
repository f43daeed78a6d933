package provider

import (
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/svc-org/terraform-provider-svc/internal/client"
)

// modelEntryFields are a catalog entry's attributes, shared by svc_models and svc_model.
var modelEntryFields = []computedField{
	{name: "id", kind: kindString, desc: "Model id, `provider/model`: the value for `svc_router_request.model`."},
	{name: "provider", kind: kindString, desc: "Provider slug."},
	{name: "model", kind: kindString, desc: "Model slug."},
	{name: "billing", kind: kindObject, desc: "Billing behaviour (never a price).", nested: []computedField{
		{name: "charges_on_policy_rejection", kind: kindString, desc: "Whether a request the provider refuses on policy grounds is charged: " +
			"`yes`, `no` or `unknown` (treat as possibly charged). A value the provider does not recognise is reported as `unknown`."},
	}},
}

var (
	modelEntryAttrTypes = attrTypesOf(modelEntryFields)
	billingAttrTypes    = nestedAttrTypes(modelEntryFields, "billing")
)

// modelEntryObject is a catalog entry as an object of modelEntryAttrTypes.
func modelEntryObject(m client.Model) (types.Object, diag.Diagnostics) {
	billing, diags := types.ObjectValue(billingAttrTypes, map[string]attr.Value{
		"charges_on_policy_rejection": types.StringValue(client.NormalizeCharges(m.Billing.ChargesOnPolicyRejection)),
	})
	if diags.HasError() {
		return types.ObjectNull(modelEntryAttrTypes), diags
	}
	return types.ObjectValue(modelEntryAttrTypes, map[string]attr.Value{
		"id": types.StringValue(m.ID), "provider": types.StringValue(m.Provider), "model": types.StringValue(m.Model),
		"billing": billing,
	})
}
