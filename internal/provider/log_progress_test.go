package provider

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-log/tflogtest"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/svc-org/terraform-provider-svc/internal/client"
	"github.com/svc-org/terraform-provider-svc/internal/emulator"
)

// A wait logs one line per change of phase, from the record it starts from: queued with its
// place (a later place is no new line), running per node with class and step (a later step of
// the same node is no new line), and the end with the time taken.
func TestProgressLogOneLinePerChange(t *testing.T) {
	t.Parallel()
	pos := func(n int64) *int64 { return &n }
	str := func(s string) *string { return &s }
	step := func(node, class string, i int64) *client.Progress {
		return &client.Progress{Value: float64(i) / 10, NodesDone: 1, NodesTotal: 3, CurrentNode: str(node), CurrentNodeClass: str(class), Step: &i, Steps: pos(10)}
	}
	const created, completed = "2026-01-01T00:00:00Z", "2026-01-01T00:00:02.5Z"
	records := []*client.Job{
		{ID: "j", Status: client.JobQueued, QueuePosition: pos(3)},
		{ID: "j", Status: client.JobQueued, QueuePosition: pos(2)},
		{ID: "j", Status: client.JobQueued, QueuePosition: pos(0)},
		{ID: "j", Status: client.JobRunning, Progress: step("2", "ImageNoiseSampler", 1)},
		{ID: "j", Status: client.JobRunning, Progress: step("2", "ImageNoiseSampler", 7)},
		{ID: "j", Status: client.JobRunning, Progress: step("3", "SaveImage", 0)},
		{ID: "j", Status: client.JobSucceeded, CreatedAt: created, CompletedAt: str(completed)},
		{ID: "j", Status: client.JobSucceeded, CreatedAt: created, CompletedAt: str(completed)},
	}
	var out bytes.Buffer
	p := newJobProgressLog(tflogtest.RootLogger(context.Background(), &out), records[0])
	for _, r := range records[1:] {
		p.job(r)
	}
	want := []map[string]any{
		{"@message": "job queued", "job_id": "j", "queue_position": float64(3)},
		{"@message": "job running", "node": "2", "class": "ImageNoiseSampler", "step": "1/10", "nodes": "1/3"},
		{"@message": "job running", "node": "3", "class": "SaveImage", "step": "0/10"},
		{"@message": "job finished", "status": "succeeded", "took": "2.5s"},
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != len(want) {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), len(want), out.String())
	}
	for i, line := range lines {
		var got map[string]any
		if err := json.Unmarshal([]byte(line), &got); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		if got["@level"] != "info" {
			t.Errorf("line %d at %v, want info", i, got["@level"])
		}
		for k, v := range want[i] {
			if got[k] != v {
				t.Errorf("line %d: %s = %v, want %v (%s)", i, k, got[k], v, line)
			}
		}
	}
}

// The same for a model request: queued once with its place, then its end.
func TestRouterProgressLogOneLinePerChange(t *testing.T) {
	t.Parallel()
	pos := func(n int64) *int64 { return &n }
	var out bytes.Buffer
	p := newRouterProgressLog(tflogtest.RootLogger(context.Background(), &out), &client.QueueRequest{RequestID: "r", Status: "IN_QUEUE", QueuePosition: pos(2)})
	for _, q := range []*client.QueueRequest{
		{RequestID: "r", Status: "IN_QUEUE", QueuePosition: pos(1)},
		{RequestID: "r", Status: "IN_PROGRESS"},
		{RequestID: "r", Status: client.RouterCompleted},
	} {
		p.router(q)
	}
	got := out.String()
	for _, want := range []string{`"@message":"model request queued"`, `"queue_position":2`, `"@message":"model request status IN_PROGRESS"`, `"@message":"model request finished"`} {
		if !strings.Contains(got, want) {
			t.Errorf("no %s in\n%s", want, got)
		}
	}
	if n := strings.Count(got, "\n"); n != 3 {
		t.Errorf("%d lines, want 3:\n%s", n, got)
	}
}

// A batch of 20 jobs on a server that runs 2 at a time, applied by Terraform with the provider
// logging at INFO: every job logs its place in the queue once and its end once, and only a few
// lines in all, however often it was read.
func TestAccJob_progressLinesOfAQueuedBatch(t *testing.T) {
	// Not parallel: it sets the process-wide log environment.
	logPath := filepath.Join(t.TempDir(), "info.log")
	t.Setenv("TF_LOG", "INFO")
	t.Setenv("TF_LOG_PROVIDER", "INFO")
	t.Setenv("TF_ACC_LOG_PATH", logPath)
	const jobs = 20
	srv := newTestServer(t, emulator.Options{Workers: 2, StepDuration: 20 * time.Millisecond})
	var ids []string
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: providerConfig(srv, "") + fmt.Sprintf(`
resource "svc_job" "batch" {
  count    = %d
  workflow = %s
}
`, jobs, samplerWorkflowHCL(5)),
			Check: func(s *terraform.State) error {
				for i := range jobs {
					ids = append(ids, s.RootModule().Resources[fmt.Sprintf("svc_job.batch.%d", i)].Primary.ID)
				}
				return nil
			},
		}},
	})
	logs, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	queued := regexp.MustCompile(`job queued: .*queue_position=\d+`)
	queuedSomewhere := 0
	for _, id := range ids {
		var lines []string
		for line := range strings.SplitSeq(string(logs), "\n") {
			if strings.Contains(line, "job_id="+id) && strings.Contains(line, "[INFO]") {
				lines = append(lines, line)
			}
		}
		count := func(re *regexp.Regexp) int {
			n := 0
			for _, l := range lines {
				if re.MatchString(l) {
					n++
				}
			}
			return n
		}
		if n := count(regexp.MustCompile(`job finished: .*status=succeeded`)); n != 1 {
			t.Errorf("job %s: %d end lines, want 1:\n%s", id, n, strings.Join(lines, "\n"))
		}
		if n := count(queued); n > 1 {
			t.Errorf("job %s: %d queued lines, want at most 1:\n%s", id, n, strings.Join(lines, "\n"))
		} else if n == 1 {
			queuedSomewhere++
		}
		// submitted, queued, one line per node run (3), finished
		if len(lines) > 6 {
			t.Errorf("job %s: %d progress lines, want at most 6:\n%s", id, len(lines), strings.Join(lines, "\n"))
		}
	}
	// Two run at once: all but the first two wait their turn, and say so with their place.
	if queuedSomewhere < jobs-2 {
		t.Errorf("%d of %d jobs logged their place in the queue, want at least %d", queuedSomewhere, jobs, jobs-2)
	}
}
