package provider

import (
	"os"
	"path/filepath"
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
		"Before setting frameworkVersionChecked to %s, re-check:\n%s",
		frameworkModule, got, frameworkVersionChecked, got, frameworkBumpChecklist)
}

// frameworkBumpChecklist is what to re-check of each server layer before another version of the
// framework is trusted: every server_*.go file is named in it (TestFrameworkBumpChecklistNamesEveryLayer).
const frameworkBumpChecklist = "  1. releasingServer (server_releasing.go): does the framework still keep a cancel function per call until " +
	"the provider stops (internal/proto6server/serve.go: registerContext, contextCancels)? If it no longer does, " +
	"delete the layer. If it does, run TestRequestContext* and compare the live heap of a plan of 500 jobs with " +
	"and without the layer (SVC_PROVIDER_MEMPROFILE).\n" +
	"  2. settledJobServer (server_job.go): run TestSettledJobServerAnswersAsTheFramework, and read the " +
	"framework's PlanResourceChange and ReadResource (internal/fwserver/server_planresourcechange.go, " +
	"server_readresource.go) for any new step on a plan whose proposed state equals the prior state (defaults, " +
	"plan modifiers, identity, private state, deferred actions) that the layer would skip.\n" +
	"  3. jobBatchServer (server_job_batch.go, server_job_batch_apply.go): run TestJobBatchServerAnswersAsTheFramework, " +
	"TestJobBatchServerPlansOnlyWhenNothingButRowsChange, TestJobBatchServerAppliesAsTheFramework, " +
	"TestJobBatchServerValidatesAsTheFramework and TestBatchStateOfTheCurrentVersionGoesBackAsSent, and read the " +
	"framework's ValidateResourceConfig (internal/fwserver/server_validateresourceconfig.go, schema_validation.go, " +
	"attribute_validation.go: does anything read a dynamic attribute's value beyond null and unknown?), " +
	"UpgradeResourceState, ReadResource, PlanResourceChange and ApplyResourceChange (internal/fwserver/server_upgraderesourcestate.go, " +
	"server_readresource.go, server_planresourcechange.go, server_createresource.go, server_updateresource.go, " +
	"server_deleteresource.go; internal/privatestate/data.go; internal/toproto6/diagnostics.go) for any new step " +
	"(defaults, write-only attributes, semantic equality, private state's encoding, diagnostics' conversion) the " +
	"layer would skip.\n" +
	"  4. actionsServer (server_actions.go): run TestActionsServerValidatesAsTheFrameworkWithoutWriteOnlyValues; if " +
	"the framework no longer refuses write-only values in an action's configuration, delete ValidateActionConfig's " +
	"workaround. Check that terraform-plugin-go still serves actions only from a server with their methods " +
	"(tfprotov6.ProviderServerWithActions); if not, the layer may go."

// Every server layer's file is named in the checklist of a framework bump.
func TestFrameworkBumpChecklistNamesEveryLayer(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("server_*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("no server layer found (%v)", err)
	}
	for _, f := range files {
		if !strings.HasSuffix(f, "_test.go") && !strings.Contains(frameworkBumpChecklist, f) {
			t.Errorf("%s is not named in frameworkBumpChecklist", f)
		}
	}
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
