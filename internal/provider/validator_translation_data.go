package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
)

// translationDataValidator accepts a JSON object whose every value is an object.
type translationDataValidator struct{}

func (translationDataValidator) Description(context.Context) string {
	return "must be a JSON object of language code to object"
}

func (v translationDataValidator) MarkdownDescription(ctx context.Context) string {
	return v.Description(ctx)
}

func (translationDataValidator) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	if problem := translationDataProblem(req.ConfigValue.ValueString()); problem != "" {
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid translations", problem+
			"\n\ndata must be a JSON object of language code to an object of translated fields, e.g. "+
			"jsonencode({ fr = { title = \"Bonjour\" } }).")
	}
}

// translationDataProblem says what is wrong with data, or "" when it has the expected shape.
func translationDataProblem(data string) string {
	var top any
	if err := json.Unmarshal([]byte(data), &top); err != nil {
		return "" // the attribute's type reports invalid JSON, with its line and column
	}
	obj, ok := top.(map[string]any)
	if !ok {
		return fmt.Sprintf("data is a JSON %s, not an object.", jsonKind(top))
	}
	var bad []string
	for lang, v := range obj {
		if strings.TrimSpace(lang) == "" {
			bad = append(bad, "a language code is empty")
			continue
		}
		if _, ok := v.(map[string]any); !ok {
			bad = append(bad, fmt.Sprintf("language %q maps to a JSON %s, not an object", lang, jsonKind(v)))
		}
	}
	sort.Strings(bad)
	if len(bad) > 0 {
		return strings.Join(bad, "; ") + "."
	}
	return ""
}

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case float64:
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}
