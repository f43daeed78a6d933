package provider

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
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
		dir         string
		wantJobs    int // jobs and prompts on the server
		wantFiles   int
		inputPNG    bool     // the example takes -var image=<a PNG file>
		trueOutputs []string // outputs that must be true after apply
		needs       []*cliFeature
	}{
		{dir: "quickstart", wantJobs: 1, wantFiles: 3},
		{dir: "pipeline", wantJobs: 9, wantFiles: 3, needs: []*cliFeature{featureProviderFunctions}},
		{dir: "batch", wantJobs: 50, wantFiles: 50},
		{dir: "batch-for-each", wantJobs: 5, wantFiles: 5},
		{dir: "upload-and-run", wantJobs: 1, wantFiles: 1, inputPNG: true},
		// An editor export with a subgraph, a bypassed node and a primitive, converted and run.
		{dir: "from-editor", wantJobs: 1, wantFiles: 2, trueOutputs: []string{"offline_conversion_matches"}, needs: []*cliFeature{featureProviderFunctions}},
	}
	for _, tt := range tests {
		t.Run(tt.dir, func(t *testing.T) {
			requireCLIFeature(t, tt.needs...)
			t.Parallel()
			srv := newTestServer(t, emulator.Options{Workers: 4})
			tf := newTerraformCLI(t, filepath.Join("..", "..", "examples", tt.dir))
			vars := []string{"-var", "endpoint=" + srv.URL()}
			if tt.inputPNG {
				vars = append(vars, "-var", "image="+writeTestPNG(t))
			}
			tf.run("init", "-input=false", "-no-color")
			tf.run(append([]string{"apply", "-auto-approve", "-input=false", "-no-color"}, vars...)...)

			for _, name := range tt.trueOutputs {
				if got := tf.run("output", "-raw", name); !strings.HasSuffix(got, "true") { // after any CLI warnings
					t.Errorf("output %s = %q, want true", name, got)
				}
			}
			pngs := examplePNGs(tf.dir)
			if len(pngs) != tt.wantFiles || srv.JobCount() != tt.wantJobs {
				t.Fatalf("%d PNG files and %d jobs, want %d and %d", len(pngs), srv.JobCount(), tt.wantFiles, tt.wantJobs)
			}
			for _, p := range pngs {
				b, err := os.ReadFile(p)
				if err != nil || !strings.HasPrefix(string(b), "\x89PNG") {
					t.Fatalf("%s is not a PNG (%v)", p, err)
				}
			}
			if plan := tf.run(append([]string{"plan", "-detailed-exitcode", "-input=false", "-no-color"}, vars...)...); !strings.Contains(plan, "No changes") {
				t.Fatalf("a second plan is not empty:\n%s", plan)
			}
			tf.run(append([]string{"destroy", "-auto-approve", "-input=false", "-no-color"}, vars...)...)
			if left := examplePNGs(tf.dir); len(left) != 0 {
				t.Fatalf("destroy left %d files", len(left))
			}
		})
	}
}

// examplePNGs are the PNG files an example wrote under out/, or under out/<row>/ (svc_job_batch's output_dir).
func examplePNGs(dir string) []string {
	flat, _ := filepath.Glob(filepath.Join(dir, "out", "*.png"))
	byRow, _ := filepath.Glob(filepath.Join(dir, "out", "*", "*.png"))
	return append(flat, byRow...)
}

// writeTestPNG writes a small PNG to a temporary file and returns its path.
func writeTestPNG(t *testing.T) string {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 16, 8))
	for x := range 16 {
		img.Set(x, x%8, color.RGBA{R: 200, A: 255})
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "input.png")
	if err := os.WriteFile(p, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}
