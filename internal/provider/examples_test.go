package provider

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/svc-org/terraform-provider-svc/internal/emulator"
)

// The examples users copy must apply as they are: each runs against its own reference server,
// with the real Terraform CLI, and is destroyed again.
func TestAccExamples(t *testing.T) {
	skipUnlessAcc(t)
	t.Parallel()
	tests := []struct {
		dir       string
		wantJobs  int
		wantFiles int
	}{
		{dir: "quickstart", wantJobs: 1, wantFiles: 3},
		{dir: "pipeline", wantJobs: 9, wantFiles: 3},
		{dir: "batch", wantJobs: 50, wantFiles: 50},
	}
	for _, tt := range tests {
		t.Run(tt.dir, func(t *testing.T) {
			t.Parallel()
			srv := newTestServer(t, emulator.Options{Workers: 4})
			tf := newTerraformCLI(t, filepath.Join("..", "..", "examples", tt.dir))
			tf.run("init", "-input=false", "-no-color")
			tf.run("apply", "-auto-approve", "-input=false", "-no-color", "-var", "endpoint="+srv.URL())

			pngs, _ := filepath.Glob(filepath.Join(tf.dir, "out", "*.png"))
			if len(pngs) != tt.wantFiles || srv.JobCount() != tt.wantJobs {
				t.Fatalf("%d PNG files and %d jobs, want %d and %d", len(pngs), srv.JobCount(), tt.wantFiles, tt.wantJobs)
			}
			for _, p := range pngs {
				b, err := os.ReadFile(p)
				if err != nil || !strings.HasPrefix(string(b), "\x89PNG") {
					t.Fatalf("%s is not a PNG (%v)", p, err)
				}
			}
			if plan := tf.run("plan", "-detailed-exitcode", "-input=false", "-no-color", "-var", "endpoint="+srv.URL()); !strings.Contains(plan, "No changes") {
				t.Fatalf("a second plan is not empty:\n%s", plan)
			}
			tf.run("destroy", "-auto-approve", "-input=false", "-no-color", "-var", "endpoint="+srv.URL())
			if left, _ := filepath.Glob(filepath.Join(tf.dir, "out", "*.png")); len(left) != 0 {
				t.Fatalf("destroy left %d files", len(left))
			}
		})
	}
}
