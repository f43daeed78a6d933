package provider

import (
	"fmt"
	"path"
	"strings"
	"testing"

	"github.com/svc-org/terraform-provider-svc/internal/bucket"
	"github.com/svc-org/terraform-provider-svc/internal/emulator"
)

// The action's output_dir takes a bucket URL too: every output is an object under the prefix,
// named as the service named it, carrying its asset id and the blake3 of its content, on a
// server that gives no hash (the hash is computed while streaming and set once known).
func TestAccWorkflowRunAction_outputDirBucket(t *testing.T) {
	skipUnlessAcc(t)
	requireCLIFeature(t, featureActions)
	t.Parallel()
	srv := newTestServer(t, emulator.Options{Mode: emulator.ModeStrict})
	b := newTestBucket(t, "runs")
	tf := newTerraformCLI(t, "")
	tf.writeConfig(providerConfig(srv, "") + fmt.Sprintf(`
action "svc_workflow_run" "x" {
  config {
    workflow   = %s
    output_dir = %q
  }
}
`, imageWorkflowHCL(2), b.url("today")))
	got := tf.run("apply", "-auto-approve", "-no-color", "-invoke=action.svc_workflow_run.x")
	lines := actionLines(got, "action.svc_workflow_run.x")
	if !anyMatch(lines, `^saved s3://runs/today/acc_00001_\.png \(\d+ bytes, not verified: the service gave no hash\)$`) {
		t.Fatalf("no line says the object was saved:\n%s", got)
	}
	objects := b.objects()
	if len(objects) != 2 {
		t.Fatalf("the bucket holds %v, want two outputs", objects)
	}
	assets := map[string]bool{}
	for key := range objects {
		content, meta, err := b.object(key)
		if err != nil {
			t.Fatal(err)
		}
		if path.Dir(key) != "today" || !strings.HasSuffix(key, ".png") || meta[bucket.MetaBlake3] != blake3Hex(content) || meta[bucket.MetaAssetID] == "" {
			t.Errorf("%s: metadata %v, content blake3 %s", key, meta, blake3Hex(content))
		}
		assets[meta[bucket.MetaAssetID]] = true
	}
	if len(assets) != 2 {
		t.Errorf("asset ids %v, want two", assets)
	}
}

// A bucket that does not exist fails the invocation before anything is sent.
func TestAccWorkflowRunAction_outputDirMissingBucket(t *testing.T) {
	skipUnlessAcc(t)
	requireCLIFeature(t, featureActions)
	t.Parallel()
	srv := newTestServer(t, emulator.Options{})
	b := newTestBucket(t, "there")
	tf := newTerraformCLI(t, "")
	tf.writeConfig(providerConfig(srv, "") + fmt.Sprintf(`
action "svc_workflow_run" "x" {
  config {
    workflow   = %s
    output_dir = %q
  }
}
`, imageWorkflowHCL(1), b.URL("missing", "p")))
	out, err := tf.try("apply", "-auto-approve", "-no-color", "-invoke=action.svc_workflow_run.x")
	if err == nil || !strings.Contains(out, `bucket "missing" does not exist`) || !strings.Contains(out, "Nothing was sent") {
		t.Fatalf("invoking with a missing bucket: %v\n%s", err, out)
	}
	if n := srv.TotalRequests(); n != 0 {
		t.Fatalf("%d requests reached the service", n)
	}
}
