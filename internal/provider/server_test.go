package provider

import (
	"os"
	"strings"
	"testing"
)

// frameworkModule is the module whose internals the plugin's own server layers depend on.
const frameworkModule = "github.com/hashicorp/terraform-plugin-framework"

// frameworkVersionChecked is the version of frameworkModule that the server layers of
// server.go were last checked against. Change it only after the checks that
// TestFrameworkVersionIsTheOneTheServerLayersWereCheckedAgainst lists.
const frameworkVersionChecked = "v1.19.0"

// TestFrameworkVersionIsTheOneTheServerLayersWereCheckedAgainst fails when go.mod requires
// another version of terraform-plugin-framework than the one the layers were checked against:
// the layers rest on how the framework behaves, which its types do not show, so a bump that
// compiles may still change what they must do or answer.
func TestFrameworkVersionIsTheOneTheServerLayersWereCheckedAgainst(t *testing.T) {
	t.Parallel()
	got := requiredVersion(t, "../../go.mod", frameworkModule)
	if got == frameworkVersionChecked {
		return
	}
	t.Fatalf("go.mod requires %s %s; the plugin's server layers (internal/provider/server.go) were checked against %s. "+
		"Before setting frameworkVersionChecked to %s, re-check:\n"+
		"  1. releasingServer (server_releasing.go): does the framework still keep a cancel function per call until "+
		"the provider stops (internal/proto6server/serve.go: registerContext, contextCancels)? If it no longer does, "+
		"delete the layer. If it does, run TestRequestContext* and compare the live heap of a plan of 500 jobs with "+
		"and without the layer (SVC_PROVIDER_MEMPROFILE).\n"+
		"  2. settledJobServer (server_job.go): run TestSettledJobServerAnswersAsTheFramework, and read the "+
		"framework's PlanResourceChange and ReadResource (internal/fwserver/server_planresourcechange.go, "+
		"server_readresource.go) for any new step on a plan whose proposed state equals the prior state (defaults, "+
		"plan modifiers, identity, private state, deferred actions) that the layer would skip.",
		frameworkModule, got, frameworkVersionChecked, got)
}

// requiredVersion is the version of module that the go.mod file at path requires.
func requiredVersion(t *testing.T, path, module string) string {
	t.Helper()
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.SplitSeq(string(doc), "\n") {
		fields := strings.Fields(strings.TrimPrefix(strings.TrimSpace(line), "require "))
		if len(fields) >= 2 && fields[0] == module {
			return fields[1]
		}
	}
	t.Fatalf("%s requires no %s", path, module)
	return ""
}
