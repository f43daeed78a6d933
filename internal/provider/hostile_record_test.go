package provider

// Hostile job records, read through the real Terraform CLI: a value that does not fit its
// attribute never loses or taints the job.

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/svc-org/terraform-provider-svc/internal/client"
	"github.com/svc-org/terraform-provider-svc/internal/emulator"
)

// recordSpoiler serves the reference server, rewriting every v2 job record it answers: each
// output's size_bytes is written 1e18, and progress.value NaN and a metric 1e400 are appended.
type recordSpoiler struct{ next http.Handler }

var (
	jobRecordPath = regexp.MustCompile(`^/api/v2/jobs(/[^/]+)?$`)
	sizeBytes     = regexp.MustCompile(`"size_bytes":\s*\d+`)
)

func (s recordSpoiler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !jobRecordPath.MatchString(r.URL.Path) {
		s.next.ServeHTTP(w, r)
		return
	}
	rec := httptest.NewRecorder()
	s.next.ServeHTTP(rec, r)
	body := rec.Body.Bytes()
	if rec.Code/100 == 2 && bytes.HasSuffix(bytes.TrimSpace(body), []byte("}")) {
		body = sizeBytes.ReplaceAll(body, []byte(`"size_bytes":1e18`))
		body = bytes.TrimSpace(body)
		body = append(body[:len(body)-1], []byte(`,"progress":{"value":NaN,"nodes_done":1,"nodes_total":1},"metrics":{"queue_ms":1e400}}`)...)
	}
	for k, v := range rec.Header() {
		w.Header()[k] = v
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(rec.Code)
	_, _ = w.Write(body)
}

func TestAccHostile_recordValuesThatDoNotFitKeepTheJob(t *testing.T) {
	t.Parallel()
	srv := emulator.New(emulator.Options{})
	ts := httptest.NewServer(recordSpoiler{next: srv.Handler()})
	t.Cleanup(func() { ts.Close(); srv.Close() })
	config := providerBlock(ts.URL) + `resource "svc_job" "x" { workflow = ` + imageWorkflowHCL(1) + ` }`
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				// Applies (not tainted: the post-apply plan is empty) with the job succeeded.
				Config: config,
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttrSet("svc_job.x", "id"),
					resource.TestCheckResourceAttr("svc_job.x", "status", "succeeded"),
					resource.TestCheckResourceAttr("svc_job.x", "outputs.#", "1"),
					resource.TestCheckResourceAttr("svc_job.x", "outputs.0.size_bytes", fmt.Sprint(int64(1e18))),
					resource.TestCheckNoResourceAttr("svc_job.x", "metrics.queue_ms"),
				),
			},
			{Config: config, PlanOnly: true}, // a refresh reads the same record: still no change
		},
	})
}

func TestJobRecordWarningsAreDiagnostics(t *testing.T) {
	t.Parallel()
	job := &client.Job{ID: "j1", Status: client.JobSucceeded, DecodeWarnings: []string{"progress.value = 1e400 does not fit a finite number; it was left empty"}}
	_, diags := newJobRecordModel(context.Background(), job)
	if diags.HasError() || diags.WarningsCount() != 1 || !strings.Contains(diags.Warnings()[0].Detail(), "progress.value = 1e400") {
		t.Fatalf("diagnostics %v, want one warning naming the value", diags)
	}
}
