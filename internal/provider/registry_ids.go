package provider

import (
	"regexp"

	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
)

// registryIDValidators check a publisher or node id at plan time: it becomes one path segment of
// a registry URL and, for claims, half of the import id "publisher_id/node_id", so it must be
// non-empty, hold no "/" and not be "." or "..".
func registryIDValidators() []validator.String {
	return []validator.String{
		stringvalidator.LengthAtLeast(1),
		stringvalidator.RegexMatches(registryIDPattern, "must not contain \"/\" or control characters"),
		stringvalidator.NoneOf(".", ".."),
	}
}

var registryIDPattern = regexp.MustCompile(`^[^/\x00-\x1f]+$`)

// validRegistryID is what registryIDValidators accept, for ids that do not come from
// configuration (an import id or identity).
func validRegistryID(id string) bool {
	return registryIDPattern.MatchString(id) && id != "." && id != ".."
}
