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
