package provider

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/hashicorp/terraform-plugin-testing/config"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
)

// identityImport describes the identity round trip of one resource (identityImportSteps): made
// by config, imported again by identity, and planned empty afterwards.
type identityImport struct {
	address string // e.g. svc_prompt.test
	config  string // the provider and the resource
	bare    string // the provider alone: applying it destroys the resource, which only forgets it
	names   []string
	// createVars are the variables of the step that creates the resource.
	createVars config.Variables
	// importAction is what a plan that imports the resource does: a no-op, or an in-place update
	// where the service's record lacks an argument that configuration gives (the workflow).
	importAction plancheck.ResourceActionType
	// badIdentity is an identity import refuses, naming its attributes.
	badIdentity map[string]string
}

// lazyVariable is a configuration variable read when its step runs, so that a step can import
// what an earlier one created.
type lazyVariable struct{ value *string }

func (v lazyVariable) MarshalJSON() ([]byte, error) { return json.Marshal(*v.value) }

// steps: (1) create, the identity in state matching the identifying attributes, then a refresh;
// (2) the import plan of an import block with the identity state holds
// (ImportBlockWithResourceIdentity) is importAction;
// (3) forget the resource; (4) an import block with badIdentity fails; (5) an import block with
// the identity of (1) imports it, planning importAction, identity kept; (6) the configuration
// alone plans nothing. The caller checks at the emulator that nothing billable was sent.
func (c identityImport) steps() []resource.TestStep {
	captured := make(map[string]*string, len(c.names))
	vars := config.Variables{}
	var matches []statecheck.StateCheck
	for _, name := range c.names {
		captured[name] = new(string)
		vars["identity_"+name] = lazyVariable{captured[name]}
		matches = append(matches, statecheck.ExpectIdentityValueMatchesState(c.address, tfjsonpath.New(name)))
	}
	capture := func(s *terraform.State) error {
		rs, ok := s.RootModule().Resources[c.address]
		if !ok {
			return fmt.Errorf("%s not in state", c.address)
		}
		for _, name := range c.names {
			*captured[name] = rs.Primary.Attributes[name]
		}
		return nil
	}
	importPlan := []plancheck.PlanCheck{plancheck.ExpectResourceAction(c.address, c.importAction)}
	return []resource.TestStep{
		{Config: c.config, ConfigVariables: c.createVars, ConfigStateChecks: matches, Check: capture},
		// A refresh keeps the identity in state: the next step imports by the identity state holds.
		{RefreshState: true},
		{
			Config: c.config, ResourceName: c.address, ImportState: true,
			ImportStateKind:    resource.ImportBlockWithResourceIdentity,
			ExpectNonEmptyPlan: c.importAction != plancheck.ResourceActionNoop,
			ImportPlanChecks:   resource.ImportPlanChecks{PreApply: importPlan},
		},
		{Config: c.bare},
		{
			Config:      c.config + importBlockWithIdentity(c.address, c.badIdentity),
			ExpectError: regexp.MustCompile(`Invalid import id`),
		},
		{
			Config:            c.config + c.importBlockWithVariables(),
			ConfigVariables:   vars,
			ConfigPlanChecks:  resource.ConfigPlanChecks{PreApply: importPlan},
			ConfigStateChecks: matches,
		},
		{Config: c.config, PlanOnly: true},
	}
}

// importBlockWithVariables is an import block whose identity comes from variables identity_<name>.
func (c identityImport) importBlockWithVariables() string {
	var b strings.Builder
	identity := make(map[string]string, len(c.names))
	for _, name := range c.names {
		fmt.Fprintf(&b, "variable %q {\n  type = string\n}\n", "identity_"+name)
		identity[name] = "var.identity_" + name
	}
	return b.String() + importBlockWithIdentity(c.address, identity)
}

// importBlockWithIdentity is an import block of address with identity values given as HCL
// expressions (a string literal is quoted by the caller, or written as a variable reference).
func importBlockWithIdentity(address string, identity map[string]string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\nimport {\n  to = %s\n  identity = {\n", address)
	for name, expr := range identity {
		fmt.Fprintf(&b, "    %s = %s\n", name, expr)
	}
	b.WriteString("  }\n}\n")
	return b.String()
}
