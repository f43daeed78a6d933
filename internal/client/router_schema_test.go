package client

import (
	"fmt"
	"strings"
	"testing"
)

// schemaDoc is an authored OpenAPI document of version openapi whose model operation takes
// input (a schema) and may refer to components.
func schemaDoc(openapi, input, components string) []byte {
	if components == "" {
		components = "{}"
	}
	return fmt.Appendf(nil, `{"openapi":%q,"info":{"title":"t","version":"1","x-svc-input-schema-authored":true},
"paths":{"/v2/models/demo/m":{"post":{"requestBody":{"content":{"application/json":{"schema":%s}}},
"responses":{"200":{"content":{"application/json":{}}}}}}},"components":{"schemas":%s}}`, openapi, input, components)
}

func violations(t *testing.T, doc []byte, input string) []string {
	t.Helper()
	ms, err := parseModelSchema("demo/m", doc)
	if err != nil {
		t.Fatal(err)
	}
	got, err := ms.ValidateInput([]byte(input))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, v := range got {
		out = append(out, v.Path+": "+v.Message)
	}
	return out
}

// Every violation is reported as "<path>: <message>", however deep under $ref and composition
// it sits, and one violation is reported once.
func TestValidateInputReportsEachLeafWithItsPath(t *testing.T) {
	components := `{"Input":{"type":"object","properties":{"steps":{"$ref":"#/components/schemas/Steps"},
"images":{"type":"array","items":{"$ref":"#/components/schemas/Image"}}},"required":["prompt"]},
"Steps":{"type":"integer","maximum":50},"Image":{"type":"object","properties":{"url":{"type":"string"}},"required":["url"]}}`
	doc := schemaDoc("3.1.0", `{"$ref":"#/components/schemas/Input"}`, components)
	tests := []struct {
		name, input string
		want        []string
	}{
		{"one violation under a $ref", `{"prompt":"p","steps":99}`, []string{"steps: maximum: got 99, want 50"}},
		{"one violation in an array item", `{"prompt":"p","images":[{"url":"u"},{"url":7}]}`, []string{"images[1].url: got number, want string"}},
		{"several violations", `{"steps":99,"images":[{}]}`, []string{
			"(input): missing property 'prompt'", "images[0]: missing property 'url'", "steps: maximum: got 99, want 50"}},
		{"valid", `{"prompt":"p","steps":50,"images":[{"url":"u"}]}`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := violations(t, doc, tt.input)
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Fatalf("violations:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

// An OpenAPI 3.0 document's schemas mean what they mean in 3.0: input the router accepts is
// never rejected at plan time, and what 3.0 forbids is still caught.
func TestValidateInputReadsOpenAPI30(t *testing.T) {
	components := `{"Mode":{"type":"string","enum":["fast","slow"]},
"Meta":{"type":"object","properties":{"nullable":{"type":"boolean"}},"required":["nullable"]}}`
	tests := []struct {
		name, openapi, schema, input string
		want                         []string
	}{
		{"nullable integer accepts null", "3.0.3", `{"type":"object","properties":{"seed":{"type":"integer","nullable":true}}}`, `{"seed":null}`, nil},
		{"nullable integer still checks the type", "3.0.3", `{"type":"object","properties":{"seed":{"type":"integer","nullable":true}}}`, `{"seed":"x"}`,
			[]string{"seed: got string, want null or integer"}},
		{"nullable enum accepts null", "3.0.0", `{"type":"object","properties":{"mode":{"type":"string","enum":["a","b"],"nullable":true}}}`, `{"mode":null}`, nil},
		{"nullable enum still checks the values", "3.0.0", `{"type":"object","properties":{"mode":{"type":"string","enum":["a","b"],"nullable":true}}}`, `{"mode":"c"}`,
			[]string{`mode: value must be one of 'a', 'b', <nil>`}},
		{"nullable $ref accepts null", "3.0.1", `{"type":"object","properties":{"mode":{"$ref":"#/components/schemas/Mode","nullable":true}}}`, `{"mode":null}`, nil},
		{"nullable allOf accepts null", "3.0.1", `{"type":"object","properties":{"mode":{"allOf":[{"$ref":"#/components/schemas/Mode"}],"nullable":true}}}`, `{"mode":null}`, nil},
		{"nullable false rejects null", "3.0.3", `{"type":"object","properties":{"seed":{"type":"integer","nullable":false}}}`, `{"seed":null}`,
			[]string{"seed: got null, want integer"}},
		{"boolean exclusiveMinimum excludes the bound", "3.0.3", `{"type":"object","properties":{"cfg":{"type":"number","minimum":0,"exclusiveMinimum":true}}}`, `{"cfg":0}`,
			[]string{"cfg: exclusiveMinimum: got 0, want 0"}},
		{"boolean exclusiveMinimum admits above the bound", "3.0.3", `{"type":"object","properties":{"cfg":{"type":"number","minimum":0,"exclusiveMinimum":true}}}`, `{"cfg":0.5}`, nil},
		{"exclusiveMinimum false keeps an inclusive bound", "3.0.3", `{"type":"object","properties":{"cfg":{"type":"number","minimum":0,"exclusiveMinimum":false}}}`, `{"cfg":0}`, nil},
		{"boolean exclusiveMaximum excludes the bound", "3.0.3", `{"type":"object","properties":{"cfg":{"type":"number","maximum":1,"exclusiveMaximum":true}}}`, `{"cfg":1}`,
			[]string{"cfg: exclusiveMaximum: got 1, want 1"}},
		{"siblings of $ref are ignored", "3.0.3", `{"type":"object","properties":{"mode":{"$ref":"#/components/schemas/Mode","maxLength":2}}}`, `{"mode":"fast"}`, nil},
		{"a readOnly property is not required in a request", "3.0.3", `{"type":"object","properties":{"id":{"type":"string","readOnly":true},"prompt":{"type":"string"}},"required":["id","prompt"]}`, `{"prompt":"p"}`, nil},
		{"other required properties still are", "3.0.3", `{"type":"object","properties":{"id":{"type":"string","readOnly":true},"prompt":{"type":"string"}},"required":["id","prompt"]}`, `{}`,
			[]string{"(input): missing property 'prompt'"}},
		{"a property named nullable is a property", "3.0.3", `{"$ref":"#/components/schemas/Meta"}`, `{"nullable":"yes"}`,
			[]string{"nullable: got string, want boolean"}},
		{"enum values are data, not schemas", "3.0.3", `{"type":"object","properties":{"o":{"enum":[{"nullable":true}]}}}`, `{"o":{"nullable":true}}`, nil},
		// 3.1 is JSON Schema 2020-12 already: nullable is not a keyword there, so nothing is rewritten.
		{"3.1 is not rewritten", "3.1.0", `{"type":"object","properties":{"seed":{"type":"integer","nullable":true}}}`, `{"seed":null}`,
			[]string{"seed: got null, want integer"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := violations(t, schemaDoc(tt.openapi, tt.schema, components), tt.input)
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Fatalf("violations:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}
