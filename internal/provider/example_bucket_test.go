package provider

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/svc-org/terraform-provider-svc/internal/emulator"
)

// examples/batch-to-bucket applies as it is against the reference server and a real S3 server
// (versitygw), with only the documented environment variables for credentials: one PNG object
// per row, a second plan with no changes, and a destroy that leaves the bucket empty.
func TestAccExampleBatchToBucket(t *testing.T) {
	skipUnlessAcc(t)
	t.Parallel()
	srv := newTestServer(t, emulator.Options{Workers: 4})
	b := newTestBucket(t, "my-bucket")
	tf := newTerraformCLI(t, filepath.Join("..", "..", "examples", "batch-to-bucket"))
	vars := []string{"-var", "endpoint=" + srv.URL(), "-var", "bucket_url=" + b.url("catalogue")}
	tf.run("init", "-input=false", "-no-color")
	tf.run(append([]string{"apply", "-auto-approve", "-input=false", "-no-color"}, vars...)...)
	objects := b.objects()
	pngs := 0
	for key := range objects {
		if strings.HasPrefix(key, "catalogue/tile-") && strings.HasSuffix(key, ".png") {
			if content, _, err := b.object(key); err != nil || !strings.HasPrefix(content, "\x89PNG") {
				t.Fatalf("%s is not a PNG (%v)", key, err)
			}
			pngs++
		}
	}
	if pngs != 20 || len(objects) != 20 || srv.JobCount() != 20 {
		t.Fatalf("%d PNG objects of %d and %d jobs, want 20 of 20 and 20", pngs, len(objects), srv.JobCount())
	}
	if plan := tf.run(append([]string{"plan", "-detailed-exitcode", "-input=false", "-no-color"}, vars...)...); !strings.Contains(plan, "No changes") {
		t.Fatalf("a second plan is not empty:\n%s", plan)
	}
	tf.run(append([]string{"destroy", "-auto-approve", "-input=false", "-no-color"}, vars...)...)
	if left := b.objects(); len(left) != 0 {
		t.Fatalf("destroy left %v", left)
	}
}
