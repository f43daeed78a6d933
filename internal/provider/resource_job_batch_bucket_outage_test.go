package provider

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/svc-org/terraform-provider-svc/internal/emulator"
)

// bucketOutageLength is how long the bucket refuses connections in
// TestCLI_batchBucketOutageDelaysOnlyTransfers: SVC_BUCKET_OUTAGE_SECONDS (30 for the figure the
// pages quote), 6 s by default.
func bucketOutageLength(t *testing.T) time.Duration {
	s := os.Getenv("SVC_BUCKET_OUTAGE_SECONDS")
	if s == "" {
		return 6 * time.Second
	}
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 {
		t.Fatalf("SVC_BUCKET_OUTAGE_SECONDS=%q: want a number of seconds", s)
	}
	return time.Duration(n) * time.Second
}

// bucketOutageRun is what one apply of TestCLI_batchBucketOutageDelaysOnlyTransfers saw.
type bucketOutageRun struct {
	apply  time.Duration
	window int // submissions and reads that reached the service in the window after the 10th row's end
	down   time.Duration
}

// A 100-row batch (max_in_flight = 8) into a bucket, applied twice through the CLI: once as it
// is, once with the bucket refusing connections (its server stopped, then started again on the
// same port) from the 10th row's end for the outage's length. The outage delays only the
// transfers: in the window it lasts, as many submissions and reads reach the service as in the
// same window of the run without it (within 20 %); the apply ends with every object there and
// every row run once, within 1.2 times the run without it plus the outage. The rows' jobs last
// long enough (2/15 of the outage) for the batch to be still running when the outage ends.
func TestCLI_batchBucketOutageDelaysOnlyTransfers(t *testing.T) {
	skipUnlessAcc(t)
	t.Parallel()
	const rows = 100
	outage := bucketOutageLength(t)
	b := newTestBucket(t, "outage")
	base := runBatchIntoBucket(t, b, "base", rows, outage, false)
	cut := runBatchIntoBucket(t, b, "cut", rows, outage, true)
	t.Logf("without the outage: apply %.1f s, %d submissions and reads in the window; with %.1f s of outage: apply %.1f s, %d in the window",
		base.apply.Seconds(), base.window, cut.down.Seconds(), cut.apply.Seconds(), cut.window)
	if lo, hi := float64(base.window)*0.8, float64(base.window)*1.2; float64(cut.window) < lo || float64(cut.window) > hi {
		t.Errorf("%d submissions and reads in the outage's window; want within 20 %% of the %d without it", cut.window, base.window)
	}
	if bound := time.Duration(1.2*float64(base.apply)) + cut.down; cut.apply > bound {
		t.Errorf("the apply through the outage took %s; want at most %s (1.2 × %s + %s)", cut.apply, bound, base.apply, cut.down)
	}
}

// runBatchIntoBucket applies rows rows into b under prefix on a server of its own, counting the
// submissions and reads that reach it for outage from the 10th row's end, with the bucket
// stopped meanwhile when down; it checks that every row ran once and has its object.
func runBatchIntoBucket(t *testing.T, b *testBucket, prefix string, rows int, outage time.Duration, down bool) bucketOutageRun {
	t.Helper()
	srv := newTestServer(t, emulator.Options{Workers: 8, NodeDuration: outage * 2 / 15})
	served := func() int {
		return srv.Requests(emulator.OpSubmitJob) + srv.Requests(emulator.OpGetJob) + srv.Requests(emulator.OpJobEvents)
	}
	window := make(chan bucketOutageRun, 1)
	// A transfer starts with the read of the output's asset, as its row ends.
	whenRequested(t, srv, emulator.OpGetAsset, 10, func() {
		before, start := served(), time.Now()
		if down {
			b.Stop()
		}
		<-time.After(outage) // the outage itself, not a wait for the service
		run := bucketOutageRun{window: served() - before}
		if down {
			b.Restart()
			run.down = time.Since(start)
		}
		window <- run
	})
	cli := newTerraformCLI(t, "")
	cli.writeConfig(batchConfig(srv, batchTextTemplate, batchRowsHCL(rows, ""), fmt.Sprintf("max_in_flight = 8\n  output_dir = %q", b.url(prefix))))
	start := time.Now()
	out := cli.run("apply", "-auto-approve", "-no-color")
	applied := time.Since(start)
	var run bucketOutageRun
	select {
	case run = <-window:
	default:
		t.Fatalf("%s: the apply ended (%s) before the window after the 10th row's end did", prefix, applied)
	}
	run.apply = applied
	if strings.Contains(out, "Warning") {
		t.Errorf("%s: the apply warned:\n%s", prefix, out)
	}
	ids, statuses := batchRowIDs(t, cli)
	if len(ids) != rows || statuses["succeeded"] != rows || srv.JobCount() != rows || srv.Requests(emulator.OpSubmitJob) != rows {
		t.Fatalf("%s: %d ids in state, rows %v, %d jobs, %d submissions; want %d each, every row succeeded", prefix, len(ids), statuses,
			srv.JobCount(), srv.Requests(emulator.OpSubmitJob), rows)
	}
	assertRowObjects(t, b, prefix, rows)
	return run
}

// assertRowObjects fails unless b holds, under prefix, one object per row r<i> holding "row <i>".
func assertRowObjects(t *testing.T, b *testBucket, prefix string, rows int) {
	t.Helper()
	byRow := map[string]string{}
	for key := range b.objects() {
		if rest, ok := strings.CutPrefix(key, prefix+"/"); ok {
			byRow[strings.Split(rest, "/")[0]] = key
		}
	}
	if len(byRow) != rows {
		t.Fatalf("%s: objects for %d rows; want %d", prefix, len(byRow), rows)
	}
	for i := range rows {
		key := byRow[fmt.Sprint("r", i)]
		if content, _, err := b.object(key); err != nil || content != fmt.Sprint("row ", i) {
			t.Fatalf("%s: row r%d's object %q holds %q (%v)", prefix, i, key, content, err)
		}
	}
}
