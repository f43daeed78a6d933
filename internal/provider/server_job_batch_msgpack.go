package provider

import (
	"bytes"
	"encoding/json"
	"maps"
	"math"
	"math/big"
	"slices"

	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/vmihailenco/msgpack/v5"
	"github.com/vmihailenco/msgpack/v5/msgpcode"
)

// msgpackNil is the MessagePack encoding of a null value.
const msgpackNil = 0xc0

func isMsgpackNull(raw []byte) bool {
	return len(raw) == 1 && raw[0] == msgpackNil
}

// msgpackObjectFields splits the MessagePack encoding of an object value, as Terraform sends
// it, into each attribute's encoding, without decoding them. null is true for a null object;
// ok is false when raw is not the encoding of an object.
//
// Terraform encodes every value of one type the same way (attributes and map keys in sorted
// order), so two attributes with equal encodings hold equal values; unequal encodings prove
// nothing, and whoever compares them must then decode them.
func msgpackObjectFields(raw []byte) (fields map[string][]byte, null, ok bool) {
	if isMsgpackNull(raw) {
		return nil, true, true
	}
	dec := msgpack.NewDecoder(bytes.NewReader(raw))
	n, err := dec.DecodeMapLen()
	if err != nil || n < 0 {
		return nil, false, false
	}
	fields = make(map[string][]byte, n)
	for range n {
		name, err := dec.DecodeString()
		if err != nil {
			return nil, false, false
		}
		value, err := dec.DecodeRaw()
		if err != nil {
			return nil, false, false
		}
		fields[name] = value
	}
	return fields, false, true
}

// rowsStandIn is the MessagePack encoding of a known dynamic value that is an empty object:
// its type as JSON (["object",{}]), then the value.
var rowsStandIn = append(append([]byte{0x92, 0xc4, byte(len(`["object",{}]`))}, `["object",{}]`...), 0x80)

// msgpackWithRowsStandIn is the MessagePack encoding of a batch's configuration raw with its
// rows, a known map or object, replaced by rowsStandIn, without decoding them; ok is false when
// raw is not an object's encoding or its rows are anything else: null, unknown, or a value of
// another kind or not known (a dynamic value of a known type is an array of its type and its
// value, which may itself be null or unknown).
func msgpackWithRowsStandIn(raw []byte) (config []byte, ok bool) {
	fields, null, ok := msgpackObjectFields(raw)
	if !ok || null || !msgpackDynamicMap(fields[jobBatchAttrRows]) {
		return nil, false
	}
	fields[jobBatchAttrRows] = rowsStandIn
	var b bytes.Buffer
	enc := msgpack.NewEncoder(&b)
	if enc.EncodeMapLen(len(fields)) != nil {
		return nil, false
	}
	for _, name := range slices.Sorted(maps.Keys(fields)) {
		if enc.EncodeString(name) != nil || enc.Encode(msgpack.RawMessage(fields[name])) != nil {
			return nil, false
		}
	}
	return b.Bytes(), true
}

// msgpackDynamicMap reports whether raw encodes a dynamic value that is a known map or object,
// reading no more than its type and the header of its value.
func msgpackDynamicMap(raw []byte) bool {
	dec := msgpack.NewDecoder(bytes.NewReader(raw))
	if n, err := dec.DecodeArrayLen(); err != nil || n != 2 {
		return false
	}
	if _, err := dec.DecodeBytes(); err != nil {
		return false
	}
	c, err := dec.PeekCode()
	return err == nil && (msgpcode.IsFixedMap(c) || c == msgpcode.Map16 || c == msgpcode.Map32)
}

// msgpackDynamicGoValue reads the MessagePack encoding of a known, non-null value of a dynamic
// attribute (its type as JSON, then the value) into the plain Go values goValueOf gives for it,
// reading the type as plain JSON rather than building it (for rows written as a for
// expression, an object type of as many attributes as rows). ok is false for a null or unknown
// value and for any value it cannot read as goValueOf would.
func msgpackDynamicGoValue(raw []byte) (v any, ok bool) {
	dec := msgpack.NewDecoder(bytes.NewReader(raw))
	if n, err := dec.DecodeArrayLen(); err != nil || n != 2 {
		return nil, false
	}
	typeJSON, err := dec.DecodeBytes()
	if err != nil {
		return nil, false
	}
	var typ any
	if json.Unmarshal(typeJSON, &typ) != nil {
		return nil, false
	}
	decoded, err := dec.DecodeInterface()
	if err != nil || decoded == nil {
		return nil, false // an unknown value is an extension no decoder knows
	}
	return typedGoValue(decoded, typ)
}

// typedGoValue is a decoded MessagePack value of type typ (Terraform's JSON spelling of a type:
// "string", "number", "bool", ["list", T], ["set", T], ["map", T], ["object", {name: T}],
// ["tuple", [T...]]) as goValueOf gives it. Numbers come in whatever Go type the encoding sized
// them to, or as a string when neither an int64 nor a float64 holds them exactly; they become
// what jsonNumber makes of them.
func typedGoValue(v any, typ any) (any, bool) {
	if v == nil {
		return nil, true
	}
	switch typ := typ.(type) {
	case string:
		return primitiveGoValue(v, typ)
	case []any:
		if len(typ) < 2 {
			return nil, false
		}
		kind, _ := typ[0].(string)
		return collectionGoValue(v, kind, typ[1])
	}
	return nil, false
}

func primitiveGoValue(v any, typ string) (any, bool) {
	switch typ {
	case "string":
		s, ok := v.(string)
		return s, ok
	case "bool":
		b, ok := v.(bool)
		return b, ok
	case "number":
		f, ok := bigFloatOf(v)
		if !ok {
			return nil, false
		}
		return jsonNumber(f), true
	}
	return nil, false
}

func collectionGoValue(v any, kind string, elem any) (any, bool) {
	switch kind {
	case "list", "set", "tuple":
		elems, ok := v.([]any)
		if !ok {
			return nil, false
		}
		tupleTypes, _ := elem.([]any)
		if kind == "tuple" && len(tupleTypes) != len(elems) {
			return nil, false
		}
		for i, e := range elems {
			et := elem
			if kind == "tuple" {
				et = tupleTypes[i]
			}
			if elems[i], ok = typedGoValue(e, et); !ok {
				return nil, false
			}
		}
		return elems, true
	case "map", "object":
		attrs, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		attrTypes, _ := elem.(map[string]any)
		for name, e := range attrs {
			et := elem
			if kind == "object" {
				if et, ok = attrTypes[name]; !ok {
					return nil, false
				}
			}
			if attrs[name], ok = typedGoValue(e, et); !ok {
				return nil, false
			}
		}
		return attrs, true
	}
	return nil, false
}

// bigFloatOf is a decoded MessagePack number as tftypes reads it: the decoder gives each in the
// Go type the encoding sized it to, or as a string when neither an int64 nor a float64 holds it.
func bigFloatOf(v any) (*big.Float, bool) {
	if s, ok := v.(string); ok {
		f, _, err := big.ParseFloat(s, 10, 512, big.ToNearestEven)
		return f, err == nil
	}
	switch n := v.(type) {
	case int8:
		return new(big.Float).SetInt64(int64(n)), true
	case int16:
		return new(big.Float).SetInt64(int64(n)), true
	case int32:
		return new(big.Float).SetInt64(int64(n)), true
	case int64:
		return new(big.Float).SetInt64(n), true
	case int:
		return new(big.Float).SetInt64(int64(n)), true
	case uint8:
		return new(big.Float).SetUint64(uint64(n)), true
	case uint16:
		return new(big.Float).SetUint64(uint64(n)), true
	case uint32:
		return new(big.Float).SetUint64(uint64(n)), true
	case uint64:
		return new(big.Float).SetUint64(n), true
	case uint:
		return new(big.Float).SetUint64(uint64(n)), true
	case float32:
		return finiteBigFloat(float64(n))
	case float64:
		return finiteBigFloat(n)
	}
	return nil, false
}

// finiteBigFloat is f as a big.Float; NaN is no Terraform number (and big.NewFloat would panic).
func finiteBigFloat(f float64) (*big.Float, bool) {
	if math.IsNaN(f) {
		return nil, false
	}
	return big.NewFloat(f), true
}

// msgpackStringValue reads the MessagePack encoding of a string attribute: null when absent or
// nil; ok is false for an unknown value or anything but a string.
func msgpackStringValue(raw []byte) (v types.String, ok bool) {
	if len(raw) == 0 || isMsgpackNull(raw) {
		return types.StringNull(), true
	}
	s, err := msgpack.NewDecoder(bytes.NewReader(raw)).DecodeString()
	if err != nil {
		return types.String{}, false
	}
	return types.StringValue(s), true
}

// decode is a batch value as its model, nil for a null value; ok is false when it cannot be
// read or is unknown.
func (s *jobBatchServer) decode(v *tfprotov6.DynamicValue) (m *jobBatchModel, ok bool) {
	if v == nil {
		return nil, false
	}
	value, err := v.Unmarshal(s.typ)
	if err != nil || !value.IsKnown() {
		return nil, false
	}
	if value.IsNull() {
		return nil, true
	}
	decoded, ok := decodeJobBatch(value)
	return &decoded, ok
}

// msgpackOf is a value's MessagePack encoding; nil when Terraform sent it otherwise.
func msgpackOf(v *tfprotov6.DynamicValue) []byte {
	if v == nil {
		return nil
	}
	return v.MsgPack
}

// privateBatchBook is the bookkeeping in private state as Terraform sends it: the framework's
// JSON object of keys to (base64) values.
func privateBatchBook(private []byte) batchBook {
	var keys map[string][]byte
	if len(private) == 0 || json.Unmarshal(private, &keys) != nil {
		return batchBook{}
	}
	return decodeBatchBook(keys[batchBookKey])
}
