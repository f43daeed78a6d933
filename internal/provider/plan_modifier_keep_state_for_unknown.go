package provider

import (
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/boolplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/float64planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/listplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/mapplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/objectplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
)

// keepStateForUnknown adds UseStateForUnknown to every top-level computed attribute, so that an
// in-place update of a setting (say cancel_on_destroy) does not show the service record as
// "known after apply": such an update changes nothing on the service. A replacement is planned
// from a null prior state, so it still shows them unknown.
func keepStateForUnknown(attrs map[string]schema.Attribute) map[string]schema.Attribute {
	for name, a := range attrs {
		switch a := a.(type) {
		case schema.StringAttribute:
			a.PlanModifiers = append(a.PlanModifiers, stringplanmodifier.UseStateForUnknown())
			attrs[name] = a
		case schema.BoolAttribute:
			a.PlanModifiers = append(a.PlanModifiers, boolplanmodifier.UseStateForUnknown())
			attrs[name] = a
		case schema.Int64Attribute:
			a.PlanModifiers = append(a.PlanModifiers, int64planmodifier.UseStateForUnknown())
			attrs[name] = a
		case schema.Float64Attribute:
			a.PlanModifiers = append(a.PlanModifiers, float64planmodifier.UseStateForUnknown())
			attrs[name] = a
		case schema.MapAttribute:
			a.PlanModifiers = append(a.PlanModifiers, mapplanmodifier.UseStateForUnknown())
			attrs[name] = a
		case schema.ListNestedAttribute:
			a.PlanModifiers = append(a.PlanModifiers, listplanmodifier.UseStateForUnknown())
			attrs[name] = a
		case schema.SingleNestedAttribute:
			a.PlanModifiers = append(a.PlanModifiers, objectplanmodifier.UseStateForUnknown())
			attrs[name] = a
		}
	}
	return attrs
}
