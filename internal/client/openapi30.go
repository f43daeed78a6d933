package client

import (
	"slices"
	"strings"
)

// OpenAPI 3.0 schemas are not JSON Schema 2020-12: a few keywords mean something else there, and
// compiling them as 2020-12 would refuse input the router accepts. fromOpenAPI30 rewrites a 3.0
// document in place into the 2020-12 form of the same rules, erring towards accepting: plan-time
// validation must never reject input the router would accept.
//
//   - nullable: true allows null: "null" joins type (and null joins enum); with $ref or a
//     composition (allOf, anyOf, oneOf, not), the schema becomes anyOf [null, schema].
//   - exclusiveMinimum / exclusiveMaximum are booleans that qualify minimum / maximum; in 2020-12
//     they are the bounds themselves.
//   - a $ref replaces its whole object: siblings are ignored in 3.0, so they are dropped.
//   - a readOnly property is not sent in a request, so it is not required there.
//
// Values that are data, not schemas (enum, const, default, example, examples), are left as
// they are.

// isOpenAPI30 reports whether doc is an OpenAPI 3.0.x document.
func isOpenAPI30(doc any) bool {
	m, ok := doc.(map[string]any)
	if !ok {
		return false
	}
	v, _ := m["openapi"].(string)
	return strings.HasPrefix(strings.TrimSpace(v), "3.0")
}

// dataKeywords hold instance values, which are never rewritten.
var dataKeywords = map[string]bool{"enum": true, "const": true, "default": true, "example": true, "examples": true}

func fromOpenAPI30(v any) any {
	switch t := v.(type) {
	case []any:
		for i := range t {
			t[i] = fromOpenAPI30(t[i])
		}
		return t
	case map[string]any:
		for k, child := range t {
			if !dataKeywords[k] {
				t[k] = fromOpenAPI30(child)
			}
		}
		return schemaFromOpenAPI30(t)
	}
	return v
}

// schemaFromOpenAPI30 rewrites one object's 3.0 keywords (its children are already rewritten).
// Keywords are only touched when they have their 3.0 form (a boolean nullable, a boolean
// exclusiveMinimum), so objects that are not schemas (a properties map with a property named
// "nullable") are left alone.
func schemaFromOpenAPI30(m map[string]any) any {
	nullable, _ := m["nullable"].(bool)
	if _, ok := m["nullable"].(bool); ok {
		delete(m, "nullable")
	}
	for kw, bound := range map[string]string{"exclusiveMinimum": "minimum", "exclusiveMaximum": "maximum"} {
		exclusive, ok := m[kw].(bool)
		if !ok {
			continue
		}
		delete(m, kw)
		if n, has := m[bound]; exclusive && has {
			m[kw] = n
			delete(m, bound)
		}
	}
	if ref, ok := m["$ref"].(string); ok {
		m = map[string]any{"$ref": ref}
	}
	dropReadOnlyRequired(m)
	if !nullable {
		return m
	}
	for _, kw := range []string{"$ref", "allOf", "anyOf", "oneOf", "not"} {
		if _, ok := m[kw]; ok {
			return map[string]any{"anyOf": []any{map[string]any{"type": "null"}, m}}
		}
	}
	switch typ := m["type"].(type) {
	case string:
		m["type"] = []any{typ, "null"}
	case []any:
		if !slices.Contains(typ, any("null")) {
			m["type"] = append(typ, "null")
		}
	}
	if enum, ok := m["enum"].([]any); ok {
		m["enum"] = append(enum, nil)
	}
	return m
}

// dropReadOnlyRequired removes from required the properties marked readOnly: in 3.0 they are
// required in responses only.
func dropReadOnlyRequired(m map[string]any) {
	required, ok := m["required"].([]any)
	props, _ := m["properties"].(map[string]any)
	if !ok || props == nil {
		return
	}
	kept := required[:0:0]
	for _, r := range required {
		name, _ := r.(string)
		if p, _ := props[name].(map[string]any); p != nil && p["readOnly"] == true {
			continue
		}
		kept = append(kept, r)
	}
	m["required"] = kept
}
