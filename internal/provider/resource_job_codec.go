package provider

import (
	"context"
	"errors"
	"maps"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// svc_job's codec: its values as Terraform sends them (tftypes.Value) to and from jobModel,
// attribute by attribute through jobAttributeTable and the typed resources' codec
// (typed_codec.go), and its nested values (outputs, error), its identity and its state upgrade.
// These files and the server_*.go layers are the only ones of svc_job that handle Terraform's raw
// values.

// jobObjectType is svc_job's type, from its schema.
var jobObjectType = schema.Schema{Attributes: jobAttributes()}.Type().TerraformType(context.Background()).(tftypes.Object)

// decodeJob reads svc_job's value v into a model; ok is false when v is null, unknown, not an
// object, or holds a value that does not fit its attribute.
func decodeJob(v tftypes.Value) (m jobModel, ok bool) {
	return decodeModel(v, jobAttributeTable)
}

// encodeJob is m as a value of svc_job's type.
func encodeJob(m *jobModel) (v tftypes.Value, err error) {
	return encodeModel(m, jobAttributeTable, jobObjectType)
}

// jobOutputsOf reads svc_job's outputs list.
func jobOutputsOf(v tftypes.Value) (jobOutputList, error) {
	switch {
	case !v.IsKnown():
		return jobOutputList{State: attr.ValueStateUnknown}, nil
	case v.IsNull():
		return jobOutputList{State: attr.ValueStateNull}, nil
	}
	var elems []tftypes.Value
	if err := v.As(&elems); err != nil {
		return jobOutputList{}, err
	}
	out := jobOutputList{State: attr.ValueStateKnown, Elems: make([]jobOutput, 0, len(elems))}
	for _, e := range elems {
		attrs, ok := objectAttrs(e)
		if !ok {
			return jobOutputList{}, errors.New("an output is not a known object")
		}
		var o jobOutput
		if err := decodeFields(attrs, o.fields()); err != nil {
			return jobOutputList{}, err
		}
		out.Elems = append(out.Elems, o)
	}
	return out, nil
}

func (l *jobOutputList) fromTerraform(v tftypes.Value) (err error) {
	*l, err = jobOutputsOf(v)
	return err
}

func (l *jobOutputList) toTerraform(typ tftypes.Type) tftypes.Value { return l.terraformValue(typ) }

func (e *jobErrorObject) fromTerraform(v tftypes.Value) (err error) {
	*e, err = jobErrorObjectOf(v)
	return err
}

func (e *jobErrorObject) toTerraform(typ tftypes.Type) tftypes.Value { return e.terraformValue(typ) }

// fields are an output's attributes by name (outputAttrTypes), each a pointer to its field.
func (o *jobOutput) fields() map[string]any {
	return map[string]any{
		jobOutputAttrNodeID: &o.NodeID, jobOutputAttrName: &o.Name, jobOutputAttrType: &o.Type, jobOutputAttrContentType: &o.ContentType,
		jobOutputAttrSizeBytes: &o.SizeBytes, jobOutputAttrID: &o.ID, jobOutputAttrHash: &o.Hash, jobOutputAttrJobID: &o.JobID,
	}
}

// fields are the failure detail's attributes by name (jobErrorAttrTypes).
func (e *jobErrorObject) fields() map[string]any {
	return map[string]any{jobErrorAttrCode: &e.Code, jobErrorAttrMessage: &e.Message, jobErrorAttrNodeID: &e.NodeID, jobErrorAttrClassType: &e.ClassType, jobErrorAttrTraceback: &e.Traceback}
}

func (l *jobOutputList) terraformValue(typ tftypes.Type) tftypes.Value {
	switch l.State {
	case attr.ValueStateUnknown:
		return tftypes.NewValue(typ, tftypes.UnknownValue)
	case attr.ValueStateNull:
		return tftypes.NewValue(typ, nil)
	}
	elemType := typ.(tftypes.List).ElementType.(tftypes.Object)
	elems := make([]tftypes.Value, 0, len(l.Elems))
	for i := range l.Elems {
		elems = append(elems, encodeFields(l.Elems[i].fields(), elemType))
	}
	return tftypes.NewValue(typ, elems)
}

func jobErrorObjectOf(v tftypes.Value) (jobErrorObject, error) {
	switch {
	case !v.IsKnown():
		return jobErrorObject{State: attr.ValueStateUnknown}, nil
	case v.IsNull():
		return jobErrorObject{State: attr.ValueStateNull}, nil
	}
	attrs, ok := objectAttrs(v)
	if !ok {
		return jobErrorObject{}, errors.New("error is not an object")
	}
	e := jobErrorObject{State: attr.ValueStateKnown}
	return e, decodeFields(attrs, e.fields())
}

func (e *jobErrorObject) terraformValue(typ tftypes.Type) tftypes.Value {
	switch e.State {
	case attr.ValueStateUnknown:
		return tftypes.NewValue(typ, tftypes.UnknownValue)
	case attr.ValueStateNull:
		return tftypes.NewValue(typ, nil)
	}
	return encodeFields(e.fields(), typ.(tftypes.Object))
}

// jobIdentityType is the type of svc_job's identity.
var jobIdentityType = tftypes.Object{AttributeTypes: map[string]tftypes.Type{jobIdentityAttrID: tftypes.String}}

func jobIdentityValue(id string) tftypes.Value {
	return tftypes.NewValue(jobIdentityType, map[string]tftypes.Value{jobIdentityAttrID: tftypes.NewValue(tftypes.String, id)})
}

// jobStateV0ToV1 is version 0's state, as Terraform stored it (JSON), as a value of version 1's
// type typ.
func jobStateV0ToV1(raw *tfprotov6.RawState, typ tftypes.Type) (tftypes.Value, error) {
	if raw == nil || len(raw.JSON) == 0 {
		return tftypes.Value{}, errors.New("no JSON state (a state written by Terraform 0.11 or older)")
	}
	value, err := raw.UnmarshalWithOpts(typ, tfprotov6.UnmarshalOpts{
		ValueFromJSONOpts: tftypes.ValueFromJSONOpts{IgnoreUndefinedAttributes: true},
	})
	if err != nil {
		return tftypes.Value{}, err
	}
	attrs, ok := objectAttrs(value)
	if !ok {
		return tftypes.Value{}, errors.New("the state is not a known object")
	}
	attrs = maps.Clone(attrs)
	for _, name := range []string{jobAttrCompletedAt, jobAttrExpiresAt} {
		if t := stringAttr(attrs, name); t != "" {
			attrs[name] = tftypes.NewValue(tftypes.String, recordTime(t))
		}
	}
	return tftypes.NewValue(typ, attrs), nil
}
