package provider

import (
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// decodeJobValue returns v, a value of svc_job's type typ as Terraform sends it in a call, as
// its attributes: nil for a null object. ok is false when v is missing, is not msgpack (the
// encoding Terraform sends; a layer leaves anything else to the framework), is unknown as a
// whole or does not decode as typ.
func decodeJobValue(typ tftypes.Type, v *tfprotov6.DynamicValue) (jobValues, bool) {
	if v == nil || v.MsgPack == nil {
		return nil, false
	}
	val, err := v.Unmarshal(typ)
	if err != nil || !val.IsKnown() {
		return nil, false
	}
	if val.IsNull() {
		return nil, true
	}
	var attrs map[string]tftypes.Value
	if err := val.As(&attrs); err != nil {
		return nil, false
	}
	return attrs, true
}
