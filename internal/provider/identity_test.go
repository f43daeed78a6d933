package provider

import (
	"fmt"
	"regexp"
	"strconv"
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

// steps: (1) create, the identity in state matching the identifying attributes, then a refresh;
// (2) the import plan of an import block with the identity state holds
// (ImportBlockWithResourceIdentity) is importAction;
// (3) forget the resource; (4) an import block with badIdentity fails; (5) an import block with
// the identity of (1) imports it, planning importAction, identity kept; (6) the configuration
// alone plans nothing. The caller checks at the emulator that nothing billable was sent.
func (c identityImport) steps() []resource.TestStep {
	var matches []statecheck.StateCheck
	for _, name := range c.names {
		matches = append(matches, statecheck.ExpectIdentityValueMatchesState(c.address, tfjsonpath.New(name)))
	}
	importPlan := []plancheck.PlanCheck{plancheck.ExpectResourceAction(c.address, c.importAction)}
	steps := []resource.TestStep{
		{Config: c.config, ConfigVariables: c.createVars, ConfigStateChecks: matches},
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
		{Config: c.config, ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: importPlan}, ConfigStateChecks: matches}, // with an import block: below
		{Config: c.config, PlanOnly: true},
	}
	// The import block of step 5 holds the values step 1 created, written in as literals once
	// they are known: the steps run in order, each read from this slice when its turn comes.
	// (Through variables, OpenTofu 1.12.6 at times loses the value in the refresh after the
	// apply: "The final value for var.… is missing in OpenTofu's evaluation context".)
	imported := &steps[5]
	steps[0].Check = func(s *terraform.State) error {
		rs, ok := s.RootModule().Resources[c.address]
		if !ok {
			return fmt.Errorf("%s not in state", c.address)
		}
		identity := make(map[string]string, len(c.names))
		for _, name := range c.names {
			identity[name] = strconv.Quote(rs.Primary.Attributes[name])
		}
		imported.Config = c.config + importBlockWithIdentity(c.address, identity)
		return nil
	}
	return steps
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
