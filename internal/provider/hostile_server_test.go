package provider

// Hostile servers through the real Terraform CLI: a redirect of a submission to another host, a
// rate limit that says "now", a 1 MiB request id, and job records with values that do not fit.

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

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
	config := providerBlock(ts.URL) + `resource "svc_job" "x" { workflow = ` + imageWorkflowHCL(1) + ` }
data "svc_job" "x" { id = svc_job.x.id }`
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
					resource.TestCheckNoResourceAttr("data.svc_job.x", "metrics.queue_ms"),
					resource.TestCheckResourceAttr("data.svc_job.x", "outputs.0.size_bytes", fmt.Sprint(int64(1e18))),
				),
			},
			{Config: config, PlanOnly: true}, // a refresh reads the same record: still no change
		},
	})
	t.Logf("peak RSS %d MiB", peakRSS())
}

// peakRSS is this process's peak resident set (VmHWM) in MiB, or 0 where /proc is not there. The
// provider runs inside the test process, so this bounds the provider's own.
func peakRSS() int {
	status, _ := os.ReadFile("/proc/self/status")
	return int(vmHWM(status) >> 20)
}

// A 307 in answer to the submission, to a host the configuration does not name: the apply
// fails naming that host, the host receives nothing (not the workflow, not the partner key in
// extra_data, not the API key), and no job id it could answer reaches state.
func TestAccHostile_submitRedirectedToAnotherHost(t *testing.T) {
	t.Parallel()
	foreign, foreignURL := startForeignHost(t)
	srv := newTestServer(t, emulator.Options{})
	srv.Inject(emulator.Fault{Op: emulator.OpSubmitJob, Status: http.StatusTemporaryRedirect,
		Headers: map[string]string{"Location": foreignURL + "/api/v2/jobs", "X-Svc-Request-Id": "req-307"}})
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: providerConfig(srv, `api_key = "k-secret"
  partner_api_key = "partner-secret"`) + `resource "svc_job" "x" { workflow = ` + imageWorkflowHCL(1) + ` }`,
			ExpectError: regexp.MustCompile(`(?s)HTTP\s+307\s+redirecting\s+it\s+to\s+` + regexp.QuoteMeta(strings.TrimPrefix(foreignURL, "http://")) + `.*request\s+id\s+req-307`),
		}},
	})
	foreign.assertUntouched(t)
	if n := srv.Requests(emulator.OpSubmitJob); n != 1 {
		t.Fatalf("%d submissions, want 1 (a refused redirect is not retried)", n)
	}
	t.Logf("peak RSS %d MiB", peakRSS())
}

// A 429 queue_full whose Retry-After is 0, through a 3 s create timeout: a handful of POSTs, not
// a tight loop, and the error says what every answer said, not that the outcome is unknown.
func TestAccHostile_rateLimitWithoutADelay(t *testing.T) {
	t.Parallel()
	srv := newTestServer(t, emulator.Options{})
	srv.Inject(emulator.Fault{Op: emulator.OpSubmitJob, Status: http.StatusTooManyRequests,
		Headers: map[string]string{"Retry-After": "0", "X-Svc-Request-Id": "req-429"},
		Body:    `{"error":{"code":"queue_full","message":"the queue is full"}}`})
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: providerConfig(srv, "") + `resource "svc_job" "x" {
  workflow = ` + imageWorkflowHCL(1) + `
  timeouts = { create = "3s" }
}`,
			ExpectError: regexp.MustCompile(`(?s)no\s+job\s+was\s+created.*HTTP\s+429\s+queue_full.*the\s+answer\s+to\s+\d+\s+attempts\s+in\s+a\s+row`),
		}},
	})
	n := srv.Requests(emulator.OpSubmitJob)
	t.Logf("%d POSTs in the 3 s create timeout; peak RSS %d MiB", n, peakRSS())
	if n > 20 {
		t.Fatalf("%d POSTs in 3 s: a Retry-After of 0 was taken as \"now\"", n)
	}
}

// A 1 MiB X-Svc-Request-Id is capped in the diagnostic, and says so.
func TestAccHostile_hugeRequestIDCapped(t *testing.T) {
	t.Parallel()
	srv := newTestServer(t, emulator.Options{})
	srv.Inject(emulator.Fault{Op: emulator.OpSubmitJob, Status: http.StatusBadRequest,
		Headers: map[string]string{"X-Svc-Request-Id": strings.Repeat("r", 1<<20)},
		Body:    `{"error":{"code":"invalid_request","message":"no"}}`})
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config:      providerConfig(srv, "") + `resource "svc_job" "x" { workflow = ` + imageWorkflowHCL(1) + ` }`,
			ExpectError: regexp.MustCompile(`request\s+id\s+r{20,200}…\(truncated,\s+1048576\s+bytes\s+in\s+all\)`),
		}},
	})
	t.Logf("peak RSS %d MiB", peakRSS())
}
