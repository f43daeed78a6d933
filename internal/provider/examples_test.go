package provider

import (
	"bytes"
	"context"
	"encoding/json"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/svc-org/terraform-provider-svc/internal/client"
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
		// Every output of a batch, keyed on values known at plan time.
		{dir: "every-output", wantJobs: 3, wantFiles: 9},
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

// The action examples apply as they are, on a CLI with actions: each action runs from its
// action_trigger (after_create, then after_update) and from `terraform apply -invoke`.
func TestAccActionExamples(t *testing.T) {
	skipUnlessAcc(t)
	requireCLIFeature(t, featureActions)
	t.Parallel()
	t.Run("svc_workflow_run", func(t *testing.T) {
		t.Parallel()
		srv := newTestServer(t, emulator.Options{})
		tf := newTerraformCLI(t, filepath.Join("..", "..", "examples", "actions", "svc_workflow_run"))
		endpoint := "endpoint=" + srv.URL()
		tf.run("init", "-input=false", "-no-color")
		for i, args := range [][]string{
			{"apply", "-auto-approve", "-input=false", "-no-color", "-var", endpoint},                                                              // after_create
			{"apply", "-auto-approve", "-input=false", "-no-color", "-var", endpoint, "-var", "seed=8"},                                            // after_update
			{"apply", "-auto-approve", "-input=false", "-no-color", "-var", endpoint, "-var", "seed=8", "-invoke=action.svc_workflow_run.preview"}, // on request
		} {
			out := tf.run(args...)
			if n := srv.Requests(emulator.OpSubmitJob); n != i+1 {
				t.Fatalf("after apply %d: %d submissions, want %d:\n%s", i+1, n, i+1, out)
			}
		}
		if pngs, _ := filepath.Glob(filepath.Join(tf.dir, "out", "preview_*.png")); len(pngs) != 2 {
			t.Fatalf("%d PNG files in out/, want the 2 of the workflow", len(pngs))
		}
	})
	t.Run("svc_job_cancel", func(t *testing.T) {
		t.Parallel()
		srv := newTestServer(t, emulator.Options{StepDuration: time.Second})
		tf := newTerraformCLI(t, filepath.Join("..", "..", "examples", "actions", "svc_job_cancel"))
		endpoint := "endpoint=" + srv.URL()
		tf.run("init", "-input=false", "-no-color")
		for i, invoke := range []string{"", "-invoke=action.svc_job_cancel.stop"} { // action_trigger after_create, then on request
			id := submitSlowJob(t, srv)
			args := []string{"apply", "-auto-approve", "-input=false", "-no-color", "-var", endpoint, "-var", "job_id=" + id}
			if invoke != "" {
				args = append(args, invoke)
			}
			out := tf.run(args...)
			if status, _ := srv.JobStatus(id); status != "canceled" || srv.Requests(emulator.OpCancelJob) != i+1 {
				t.Fatalf("apply %d: job %s is %s after %d cancels:\n%s", i+1, id, status, srv.Requests(emulator.OpCancelJob), out)
			}
		}
	})
}

// submitSlowJob starts a job on srv that runs until it is cancelled, outside Terraform.
func submitSlowJob(t *testing.T, srv *emulator.Server) string {
	t.Helper()
	c, err := client.New(client.Config{Endpoint: srv.URL()})
	if err != nil {
		t.Fatal(err)
	}
	wf := `{"1":{"class_type":"EmptyImage","inputs":{"width":8,"height":8,"batch_size":1,"color":0}},` +
		`"2":{"class_type":"ImageNoiseSampler","inputs":{"image":["1",0],"seed":1,"steps":10000,"denoise":1.0}},` +
		`"3":{"class_type":"SaveImage","inputs":{"images":["2",0],"filename_prefix":"slow"}}}`
	job, err := c.SubmitJob(context.Background(), client.SubmitJobInput{Workflow: json.RawMessage(wf), IdempotencyKey: uuid.NewString()})
	if err != nil {
		t.Fatal(err)
	}
	return job.ID
}
