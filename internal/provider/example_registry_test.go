package provider

import (
	"path/filepath"
	"testing"
)

// TestAccExample_publishAndTranslateApply applies and destroys examples/registry/main.tf with the
// Terraform CLI, exactly as a user would (endpoint and registry token from the environment), the
// provider served in-process. terraform-plugin-testing cannot read back state holding for_each
// instances, hence the CLI.
func TestAccExample_publishAndTranslateApply(t *testing.T) {
	skipUnlessAcc(t)
	requireCLIFeature(t, featureWriteOnly, featureEphemeralVariables)
	// Not parallel: the provider runs in this process and reads its settings from its environment.
	srv := newRegistryServer(t)
	srv.AddNode("acme-upscaler", "alice")
	srv.AddNode("acme-denoiser", "alice")

	t.Setenv("SVC_ENDPOINT", srv.URL())
	t.Setenv("SVC_REGISTRY_TOKEN", testRegistryToken)
	cli := newTerraformCLI(t, filepath.Join("..", "..", "examples", "registry"))
	tf := func(args ...string) { t.Helper(); cli.run(args...) }
	vars := []string{"-var", "publisher_id=acme", "-var", "repo_token=" + testRepoToken}

	tf("init", "-input=false", "-no-color")
	tf(append([]string{"apply", "-input=false", "-no-color", "-auto-approve"}, vars...)...)
	for node, want := range map[string]string{
		"acme-upscaler": `{"de":{"title":"Hochskalierer"},"fr":{"description":"Agrandit une image sans perte de détails.","title":"Agrandisseur"}}`,
		"acme-denoiser": `{"fr":{"title":"Débruiteur"},"ja":{"title":"ノイズ除去"}}`,
	} {
		if got := srv.NodePublisher(node); got != "acme" {
			t.Errorf("%s claimed by %q, want acme", node, got)
		}
		if got := string(srv.NodeTranslations(node)); got != want {
			t.Errorf("translations of %s = %s, want %s", node, got, want)
		}
	}
	// Destroyed as the README says: no repository token (it only claims), nothing invented.
	tf("destroy", "-input=false", "-no-color", "-auto-approve", "-var", "publisher_id=acme")
	if srv.NodePublisher("acme-upscaler") != "acme" || srv.Requests("registry.delete") != 0 {
		t.Error("destroy must keep the nodes claimed (delete_node_on_destroy is false in the example)")
	}
}
