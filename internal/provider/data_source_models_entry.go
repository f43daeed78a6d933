package provider

import (
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/svc-org/terraform-provider-svc/internal/client"
)

// modelEntryAttrTypes are the types of a catalog entry's attributes: an element of svc_models'
// models.
var modelEntryAttrTypes = map[string]attr.Type{
	"id":       types.StringType,
	"provider": types.StringType,
	"model":    types.StringType,
	"billing":  types.ObjectType{AttrTypes: billingAttrTypes},
}

// billingAttrTypes are the types of a catalog entry's billing attributes.
var billingAttrTypes = map[string]attr.Type{
	"charges_on_policy_rejection": types.StringType,
}

// modelEntryAttributes is a catalog entry in svc_models' schema.
func modelEntryAttributes() map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"id":       schema.StringAttribute{Computed: true, MarkdownDescription: "Model id, `provider/model`: the value for `svc_router_request.model`."},
		"provider": schema.StringAttribute{Computed: true, MarkdownDescription: "Provider slug."},
		"model":    schema.StringAttribute{Computed: true, MarkdownDescription: "Model slug."},
		"billing":  billingAttribute(),
	}
}

// billingAttribute is a catalog entry's billing behaviour, the same in svc_models' entries and in
// svc_model.
func billingAttribute() schema.SingleNestedAttribute {
	return schema.SingleNestedAttribute{
		Computed:            true,
		MarkdownDescription: "Billing behaviour (never a price).",
		Attributes: map[string]schema.Attribute{
			"charges_on_policy_rejection": schema.StringAttribute{
				Computed: true,
				MarkdownDescription: "Whether a request the provider refuses on policy grounds is charged: " +
					"`yes`, `no` or `unknown` (treat as possibly charged). A value the provider does not recognise is reported as `unknown`.",
			},
		},
	}
}

// modelEntryObject is a catalog entry as an object of modelEntryAttrTypes.
func modelEntryObject(m client.Model) (types.Object, diag.Diagnostics) {
	billing, diags := billingObject(m.Billing)
	if diags.HasError() {
		return types.ObjectNull(modelEntryAttrTypes), diags
	}
	return types.ObjectValue(modelEntryAttrTypes, map[string]attr.Value{
		"id": types.StringValue(m.ID), "provider": types.StringValue(m.Provider), "model": types.StringValue(m.Model),
		"billing": billing,
	})
}

// billingObject is a catalog entry's billing behaviour as an object of billingAttrTypes; a value
// the client does not recognise reads as unknown (possibly charged).
func billingObject(b client.ModelBilling) (types.Object, diag.Diagnostics) {
	return types.ObjectValue(billingAttrTypes, map[string]attr.Value{
		"charges_on_policy_rejection": types.StringValue(client.NormalizeCharges(b.ChargesOnPolicyRejection)),
	})
}
