package provider

import "github.com/hashicorp/terraform-plugin-framework/types"

// Small helpers between Go values and the values state holds, shared by every resource.

// nullIfEmpty is s as a string value, null when empty.
func nullIfEmpty(s string) types.String {
	if s == "" {
		return types.StringNull()
	}
	return types.StringValue(s)
}

// deref is *s, or "" when s is nil.
func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// derefOrUnknown is *s, or "unknown" when s is nil: a value a message names that the service
// may not have sent.
func derefOrUnknown(s *string) string {
	if s == nil {
		return "unknown"
	}
	return *s
}
