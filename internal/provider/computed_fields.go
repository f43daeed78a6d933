package provider

import (
	"github.com/hashicorp/terraform-plugin-framework/attr"
	rschema "github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// A computedField describes one read-only attribute of svc_prompt's schema and the attribute type
// of its values. Only svc_prompt still builds its record's schema from these; the other resources
// and data sources write theirs as literals beside their models.
type computedField struct {
	name   string
	desc   string
	kind   fieldKind
	nested []computedField // for kindObject and kindObjectList
}

type fieldKind int

const (
	kindString fieldKind = iota
	kindInt64
	kindFloat64
	kindBool
	kindInt64Map
	kindObject
	kindObjectList
)

func attrTypesOf(fields []computedField) map[string]attr.Type {
	out := make(map[string]attr.Type, len(fields))
	for _, f := range fields {
		out[f.name] = f.attrType()
	}
	return out
}

func (f computedField) attrType() attr.Type {
	switch f.kind {
	case kindInt64:
		return types.Int64Type
	case kindFloat64:
		return types.Float64Type
	case kindBool:
		return types.BoolType
	case kindInt64Map:
		return types.MapType{ElemType: types.Int64Type}
	case kindObject:
		return types.ObjectType{AttrTypes: attrTypesOf(f.nested)}
	case kindObjectList:
		return types.ListType{ElemType: types.ObjectType{AttrTypes: attrTypesOf(f.nested)}}
	default:
		return types.StringType
	}
}

func resourceAttributes(fields []computedField) map[string]rschema.Attribute {
	out := make(map[string]rschema.Attribute, len(fields))
	for _, f := range fields {
		switch f.kind {
		case kindInt64:
			out[f.name] = rschema.Int64Attribute{Computed: true, MarkdownDescription: f.desc}
		case kindFloat64:
			out[f.name] = rschema.Float64Attribute{Computed: true, MarkdownDescription: f.desc}
		case kindBool:
			out[f.name] = rschema.BoolAttribute{Computed: true, MarkdownDescription: f.desc}
		case kindInt64Map:
			out[f.name] = rschema.MapAttribute{Computed: true, ElementType: types.Int64Type, MarkdownDescription: f.desc}
		case kindObject:
			out[f.name] = rschema.SingleNestedAttribute{Computed: true, MarkdownDescription: f.desc, Attributes: resourceAttributes(f.nested)}
		case kindObjectList:
			out[f.name] = rschema.ListNestedAttribute{Computed: true, MarkdownDescription: f.desc,
				NestedObject: rschema.NestedAttributeObject{Attributes: resourceAttributes(f.nested)}}
		default:
			out[f.name] = rschema.StringAttribute{Computed: true, MarkdownDescription: f.desc}
		}
	}
	return out
}

// nestedAttrTypes returns the attribute types of the nested object field name of fields.
func nestedAttrTypes(fields []computedField, name string) map[string]attr.Type {
	for _, f := range fields {
		if f.name == name {
			return attrTypesOf(f.nested)
		}
	}
	panic("no computed field " + name)
}
