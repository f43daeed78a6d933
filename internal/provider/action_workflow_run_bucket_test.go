package provider

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/svc-org/terraform-provider-svc/internal/bucket"
	"github.com/svc-org/terraform-provider-svc/internal/emulator"
	"github.com/svc-org/terraform-provider-svc/internal/s3gw"
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

// The action's output_dir is checked at plan, as the batch's is: `terraform plan -invoke` with a
// bucket that does not exist, or that refuses the credentials (an access key it does not know, a
// secret that is not the key's), fails naming the bucket, and so does the plan of a resource whose
// action_trigger would run it, before that resource is created. Nothing reaches the service.
func TestAccWorkflowRunAction_outputDirCheckedAtPlan(t *testing.T) {
	skipUnlessAcc(t)
	requireCLIFeature(t, featureActions)
	t.Parallel()
	there := newTestBucket(t, "there")
	unknownKey := newTestBucketAs(t, "there", "other-root-access", s3gw.SecretKey)
	wrongSecret := newTestBucketAs(t, "there", s3gw.AccessKey, "another-secret-key-9876543210")
	const fromEnv = `credentials from the environment variables AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY`
	const trigger = `
resource "terraform_data" "t" {
  input = 1
  lifecycle {
    action_trigger {
      events  = [after_create]
      actions = [action.svc_workflow_run.x]
    }
  }
}
`
	for _, tc := range []struct {
		name, dest, extra, err string
		args                   []string
	}{
		{"missing bucket", there.URL("missing", "p"), "", `bucket "missing" does not exist (s3://missing/p, with ` + fromEnv,
			[]string{"plan", "-no-color", "-invoke=action.svc_workflow_run.x"}},
		{"unknown access key", unknownKey.url("p"), "", `bucket "there" refused the credentials (s3://there/p; ` + fromEnv + `): the server does not know the access key ID ending in "cess"`,
			[]string{"plan", "-no-color", "-invoke=action.svc_workflow_run.x"}},
		{"wrong secret", wrongSecret.url("p"), "", `bucket "there" refused the credentials (s3://there/p; ` + fromEnv + `): the secret key is not the one of the access key ID ending in "cess"`,
			[]string{"plan", "-no-color", "-invoke=action.svc_workflow_run.x"}},
		{"misspelled parameter", there.url("p") + "&regoin=x", "", `unknown query parameter "regoin"`,
			[]string{"plan", "-no-color", "-invoke=action.svc_workflow_run.x"}},
		{"action_trigger", there.URL("missing", "p"), trigger, `bucket "missing" does not exist`,
			[]string{"apply", "-auto-approve", "-no-color"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := newTestServer(t, emulator.Options{})
			tf := newTerraformCLI(t, "")
			tf.writeConfig(providerConfig(srv, "") + fmt.Sprintf(`
action "svc_workflow_run" "x" {
  config {
    workflow   = %s
    output_dir = %q
  }
}
`, imageWorkflowHCL(1), tc.dest) + tc.extra)
			out, err := tf.try(tc.args...)
			want := regexp.MustCompile(`(?s)Invalid output_dir.*` + wrapped(regexp.QuoteMeta(tc.err)) + `.*Nothing\s+was\s+sent`)
			if err == nil || !want.MatchString(out) {
				t.Fatalf("terraform %v: %v, want the error %q\n%s", tc.args, err, tc.err, out)
			}
			if strings.Contains(out, s3gw.SecretKey) {
				t.Fatalf("the error prints the secret:\n%s", out)
			}
			if n := srv.TotalRequests(); n != 0 {
				t.Fatalf("%d requests reached the service", n)
			}
			if st, err := os.Stat(filepath.Join(tf.dir, "terraform.tfstate")); err == nil && st.Size() > 0 {
				state, _ := os.ReadFile(filepath.Join(tf.dir, "terraform.tfstate"))
				if strings.Contains(string(state), "terraform_data") {
					t.Fatalf("the triggering resource was created:\n%s", state)
				}
			}
		})
	}
}
