package provider

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/svc-org/terraform-provider-svc/internal/emulator"
)

// progressStep is one tick of a batch's progress: the clock moved on by after, the rows then
// at counts, and the line that tick must write.
type progressStep struct {
	after  time.Duration
	counts batchProgressCounts
	want   string
}

// A batch apply's progress, on an injected clock and ticker: a first line with what the apply
// acts on, one line per tick with the counts and the time left at the rate rows finished so
// far, and a last line saying how the apply ended.
func TestBatchProgressLines(t *testing.T) {
	t.Parallel()
	const label = `svc_job_batch 6f1c (output_dir "frames")`
	start := time.Date(2026, 11, 29, 3, 40, 0, 0, time.UTC)
	begin := batchProgressCounts{notSent: 200}
	tests := []struct {
		name     string
		steps    []progressStep
		endAfter time.Duration
		end      batchProgressCounts
		endErr   error
		wantEnd  string
	}{
		{
			name: "finished",
			steps: []progressStep{
				{after: 10 * time.Second, counts: batchProgressCounts{running: 32, notSent: 168},
					want: "0/200 done (0 succeeded, 0 failed), 32 running, 168 not yet sent; no row finished yet, no estimate of the time left"},
				// 120 rows in 4m: 80 left at 2s a row.
				{after: 4*time.Minute - 10*time.Second, counts: batchProgressCounts{succeeded: 110, failed: 10, running: 32, notSent: 48},
					want: "120/200 done (110 succeeded, 10 failed), 32 running, 48 not yet sent; ~2m40s left"},
				// 199 rows in 1h30m: one left at 27.1 s a row; outputs still being transferred.
				{after: 86 * time.Minute, counts: batchProgressCounts{succeeded: 189, failed: 10, running: 1, transfersQueued: 3},
					want: "199/200 done (189 succeeded, 10 failed), 1 running, 0 not yet sent, outputs of 3 rows waiting for output_dir; ~27s left"},
				// Slower (counts as given): hours left, to the minute.
				{after: 0, counts: batchProgressCounts{succeeded: 60, running: 40, notSent: 100},
					want: "60/200 done (60 succeeded, 0 failed), 40 running, 100 not yet sent; ~3h30m left"},
			},
			endAfter: 20 * time.Minute,
			end:      batchProgressCounts{succeeded: 190, failed: 10},
			// A context ended after every row did is still a finished apply.
			endErr:  context.Canceled,
			wantEnd: "finished after 1h50m: 200/200 done (190 succeeded, 10 failed), 0 running, 0 not yet sent",
		},
		{
			name: "interrupted",
			steps: []progressStep{
				{after: 10 * time.Second, counts: batchProgressCounts{succeeded: 5, running: 32, notSent: 163},
					want: "5/200 done (5 succeeded, 0 failed), 32 running, 163 not yet sent; ~6m30s left"},
			},
			endAfter: 5 * time.Second,
			end:      batchProgressCounts{succeeded: 7, running: 32, notSent: 161},
			endErr:   context.Canceled,
			wantEnd: "interrupted after 15s: 7/200 done (7 succeeded, 0 failed), 32 running, 161 not yet sent; " +
				"the next apply waits for the running rows and sends the rest",
		},
		{
			name:     "timed out",
			endAfter: 2 * time.Hour,
			end:      batchProgressCounts{succeeded: 150, failed: 2, running: 16, notSent: 32},
			endErr:   context.DeadlineExceeded,
			wantEnd: "timed out after 2h: 152/200 done (150 succeeded, 2 failed), 16 running, 32 not yet sent; " +
				"the next apply waits for the running rows and sends the rest",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			// Each tick is received by the reporter before the test goes on, and each line is
			// read before the next tick: the clock and the counts change only between lines.
			now, counts := start, begin
			lines := make(chan string, 1)
			ticks := make(chan time.Time)
			tickerStopped := false
			p := &batchProgress{label: label, now: func() time.Time { return now }, maxInFlight: 32, limit: 2 * time.Hour,
				counts: func() batchProgressCounts { return counts },
				emit:   func(at time.Time, text string) { lines <- at.Format(time.RFC3339) + " " + text }}
			p.start(ticks, func() { tickerStopped = true })
			want := "2026-11-29T03:40:00Z " + label + ": apply started: 200 rows to run, up to 32 at once, timeout 2h; a line every 10s"
			if got := <-lines; got != want {
				t.Errorf("first line:\n got %s\nwant %s", got, want)
			}
			for i, s := range tt.steps {
				now, counts = now.Add(s.after), s.counts
				ticks <- now
				want := now.Format(time.RFC3339) + " " + label + ": " + s.want
				if got := <-lines; got != want {
					t.Errorf("tick %d:\n got %s\nwant %s", i+1, got, want)
				}
			}
			now, counts = now.Add(tt.endAfter), tt.end
			p.stop(tt.endErr)
			want = now.Format(time.RFC3339) + " " + label + ": " + tt.wantEnd
			if got := <-lines; got != want {
				t.Errorf("last line:\n got %s\nwant %s", got, want)
			}
			if !tickerStopped {
				t.Error("the ticker was not stopped")
			}
			select {
			case extra := <-lines:
				t.Errorf("a line after the last: %s", extra)
			default:
			}
		})
	}
}

// Each row of an apply counts once: succeeded; failed as the batch's failed attribute counts
// (failed, canceled, expired, rejected, unknown); running while its job has not ended (also an
// earlier apply's job not read yet by this one); not yet sent otherwise.
func TestBatchProgressCounts(t *testing.T) {
	t.Parallel()
	running := &batchRow{ID: "j0", Status: "running", InputHash: "h"}
	tests := []struct {
		name string
		held *batchRow           // the row state holds
		rec  *batchRow           // the row this apply recorded; nil for none yet
		want batchProgressCounts // for that one row
	}{
		{name: "not reached", want: batchProgressCounts{notSent: 1}},
		{name: "not submitted", rec: &batchRow{Status: batchRowNotSubmitted}, want: batchProgressCounts{notSent: 1}},
		{name: "queued", rec: &batchRow{ID: "j1", Status: "queued"}, want: batchProgressCounts{running: 1}},
		{name: "running", rec: &batchRow{ID: "j1", Status: "running"}, want: batchProgressCounts{running: 1}},
		{name: "canceling", rec: &batchRow{ID: "j1", Status: "canceling"}, want: batchProgressCounts{running: 1}},
		{name: "succeeded", rec: &batchRow{ID: "j1", Status: "succeeded"}, want: batchProgressCounts{succeeded: 1}},
		{name: "failed", rec: &batchRow{ID: "j1", Status: "failed"}, want: batchProgressCounts{failed: 1}},
		{name: "canceled", rec: &batchRow{ID: "j1", Status: "canceled"}, want: batchProgressCounts{failed: 1}},
		{name: "expired", rec: &batchRow{ID: "j1", Status: "expired"}, want: batchProgressCounts{failed: 1}},
		{name: "rejected", rec: &batchRow{Status: batchRowRejected}, want: batchProgressCounts{failed: 1}},
		{name: "unknown", rec: &batchRow{Status: batchRowUnknown, Key: "k"}, want: batchProgressCounts{failed: 1}},
		{name: "earlier apply's job, same input", held: running, want: batchProgressCounts{running: 1}},
		{name: "earlier apply's job, input changed", held: &batchRow{ID: "j0", Status: "running", InputHash: "old"},
			want: batchProgressCounts{notSent: 1}},
		{name: "earlier apply's job, read", held: running, rec: &batchRow{ID: "j0", Status: "succeeded"},
			want: batchProgressCounts{succeeded: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := &batchEngine{rows: map[string]*batchRow{}}
			tasks := []batchTask{{in: batchRowInput{key: "r", hash: "h"}, held: tt.held}}
			if tt.rec != nil {
				e.set("r", tt.rec)
			}
			if got := e.progressCounts(tasks); got != tt.want {
				t.Errorf("counts %+v; want %+v", got, tt.want)
			}
		})
	}
}

// The queue of transfers to output_dir is counted as it stands.
func TestBatchProgressCountsTransfersQueued(t *testing.T) {
	t.Parallel()
	e := &batchEngine{rows: map[string]*batchRow{}, transfers: make(chan batchTransfer, 4)}
	e.transfers <- batchTransfer{key: "a"}
	e.transfers <- batchTransfer{key: "b"}
	if got := e.progressCounts(nil).transfersQueued; got != 2 {
		t.Errorf("%d transfers queued; want 2", got)
	}
}

func TestRoughDuration(t *testing.T) {
	t.Parallel()
	tests := []struct {
		d    time.Duration
		want string
	}{
		{0, "0s"},
		{400 * time.Millisecond, "0s"},
		{45*time.Second + 600*time.Millisecond, "46s"},
		{2 * time.Minute, "2m"},
		{2*time.Minute + 10*time.Second, "2m10s"},
		{59*time.Minute + 59*time.Second, "59m59s"},
		{time.Hour + 10*time.Minute + 29*time.Second, "1h10m"},
		{time.Hour + 30*time.Second, "1h1m"},
		{10 * time.Minute, "10m"},
		{2*time.Hour + 20*time.Second, "2h"},
		{26*time.Hour + 3*time.Minute, "26h3m"},
	}
	for _, tt := range tests {
		if got := roughDuration(tt.d); got != tt.want {
			t.Errorf("roughDuration(%s) = %q; want %q", tt.d, got, tt.want)
		}
	}
}

// The progress log is in the journal's directory; with the journal in a bucket, in the default
// directory on this machine (tail cannot follow a bucket); with the journal off, nowhere (the
// lines go to Terraform's log alone).
func TestJournalProgressDir(t *testing.T) {
	t.Parallel()
	tests := []struct {
		dir, want string
	}{
		{dir: "", want: ""},
		{dir: ".terraform/svc-journal", want: ".terraform/svc-journal"},
		{dir: "/mnt/runner-cache/journal", want: "/mnt/runner-cache/journal"},
		{dir: "s3://bucket/prefix?region=eu-west-1", want: journalDefaultDir()},
	}
	for _, tt := range tests {
		if got := newSubmissionJournal(tt.dir, time.Now).progressDir(); got != tt.want {
			t.Errorf("journal %q: progress log in %q; want %q", tt.dir, got, tt.want)
		}
	}
}

// The sink writes each line with its time in UTC to progress.log in the journal's directory
// (making the directory when it is missing), with the provider's secrets masked.
func TestBatchProgressSinkWritesTheJournalsProgressLog(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "svc-journal")
	data := &providerData{secrets: []string{"s3cr3t-key"}, journal: newSubmissionJournal(dir, time.Now)}
	emit := batchProgressSink(context.Background(), data)
	at := time.Date(2026, 11, 29, 4, 40, 10, 0, time.FixedZone("CET", 3600))
	emit(at, "svc_job_batch b1: 1/2 done")
	emit(at.Add(10*time.Second), `svc_job_batch b1 (output_dir "/out/s3cr3t-key"): 2/2 done`)
	got, err := os.ReadFile(filepath.Join(dir, batchProgressFile))
	if err != nil {
		t.Fatal(err)
	}
	want := "2026-11-29T03:40:10Z svc_job_batch b1: 1/2 done\n" +
		"2026-11-29T03:40:20Z svc_job_batch b1 (output_dir \"/out/(redacted)\"): 2/2 done\n"
	if string(got) != want {
		t.Errorf("progress.log:\n%s\nwant:\n%s", got, want)
	}
}

// A line that would take the log past its bound first moves it to progress.log.1 (replacing
// the one before): the two files never hold more than twice the bound, and no line is cut.
func TestProgressLogFileRotates(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), batchProgressFile)
	f := &progressLogFile{path: path, max: 100}
	var lines []string
	for i := range 12 {
		line := fmt.Sprintf("line %02d %s\n", i, strings.Repeat("x", 20)) // 30 bytes
		lines = append(lines, line)
		if err := f.append(line); err != nil {
			t.Fatal(err)
		}
	}
	cur, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	old, err := os.ReadFile(path + ".1")
	if err != nil {
		t.Fatal(err)
	}
	// Three lines fit in 100 bytes: lines 0-2, 3-5, 6-8 rotated in turn, 9-11 current.
	if want := strings.Join(lines[9:], ""); string(cur) != want {
		t.Errorf("progress.log:\n%s\nwant:\n%s", cur, want)
	}
	if want := strings.Join(lines[6:9], ""); string(old) != want {
		t.Errorf("progress.log.1:\n%s\nwant:\n%s", old, want)
	}
}

// progressCountsRe reads the counts of a progress line.
var progressCountsRe = regexp.MustCompile(`(\d+)/(\d+) done \((\d+) succeeded, (\d+) failed\), (\d+) running, (\d+) not yet sent`)

// progressLineCounts reads a progress line's counts and fails the test unless they add up: done
// is succeeded + failed, and done + running + not yet sent is every row of the apply.
func progressLineCounts(t *testing.T, line string) (c batchProgressCounts, total int) {
	t.Helper()
	m := progressCountsRe.FindStringSubmatch(line)
	if m == nil {
		t.Fatalf("no counts in the progress line %q", line)
	}
	n := make([]int, len(m))
	for i := 1; i < len(m); i++ {
		n[i], _ = strconv.Atoi(m[i])
	}
	c = batchProgressCounts{succeeded: n[3], failed: n[4], running: n[5], notSent: n[6]}
	if n[1] != c.done() || n[2] != c.total() {
		t.Errorf("the counts of %q do not add up: %d done of %d, from %+v", line, n[1], n[2], c)
	}
	return c, n[2]
}

// Through the CLI, a batch apply writes progress.log in the journal's directory: a first line
// naming the batch and its rows, a last line saying how it ended, counts that add up on every
// line, and the next apply's lines after the last ones.
func TestCLI_batchProgressLog(t *testing.T) {
	skipUnlessAcc(t)
	t.Parallel()
	lineRe := regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ svc_job_batch ([0-9a-f-]{36}): `)
	tests := []struct {
		name      string
		rows      int
		interrupt bool
	}{
		{name: "finished", rows: 6},
		// Two jobs at a time of 0.5 s each: interrupted with most rows still to run.
		{name: "interrupted, then applied again", rows: 20, interrupt: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := newTestServer(t, emulator.Options{Workers: 2, StepDuration: 50 * time.Millisecond})
			dir := filepath.Join(t.TempDir(), "journal")
			cli := newTerraformCLI(t, "")
			config := batchConfig(srv, batchSamplerTemplate(10), fmt.Sprintf(`{ for i in range(%d) : "r${i}" => { "2" = { seed = i } } }`, tt.rows), "max_in_flight = 4")
			cli.writeConfig(strings.Replace(config, "max_retries", fmt.Sprintf("journal = %q\n  max_retries", dir), 1))
			applies := 1
			if tt.interrupt {
				applies = 2
				if _, err := cli.interruptOnce(func() bool { return srv.JobCount() >= 4 }, "apply", "-auto-approve", "-no-color"); err != nil {
					t.Logf("interrupted apply: %v", err)
				}
			}
			cli.run("apply", "-auto-approve", "-no-color")
			id, _ := cli.stateResource(batchRes).Values["id"].(string)

			b, err := os.ReadFile(filepath.Join(dir, batchProgressFile))
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
			var starts, ends []int
			for i, line := range lines {
				m := lineRe.FindStringSubmatch(line)
				if m == nil || m[1] != id {
					t.Fatalf("line %d is not a progress line of batch %s: %q", i+1, id, line)
				}
				switch rest := line[len(m[0]):]; {
				case strings.HasPrefix(rest, "apply started: "):
					starts = append(starts, i)
				case strings.HasPrefix(rest, "finished after "), strings.HasPrefix(rest, "interrupted after "), strings.HasPrefix(rest, "timed out after "):
					ends = append(ends, i)
					progressLineCounts(t, line)
				default:
					progressLineCounts(t, line)
				}
			}
			if len(starts) != applies || len(ends) != applies || starts[0] != 0 || ends[applies-1] != len(lines)-1 {
				t.Fatalf("starts at lines %v, ends at %v of %d; want %d applies, each a start then an end:\n%s", starts, ends, len(lines), applies, b)
			}
			last, total := progressLineCounts(t, lines[len(lines)-1])
			if !strings.Contains(lines[len(lines)-1], ": finished after ") || last.succeeded != total {
				t.Errorf("the last line does not say the apply finished with every row succeeded:\n%s", b)
			}
			wantFirst := fmt.Sprintf("apply started: %d rows to run, up to 4 at once, timeout 1h; a line every 10s", tt.rows)
			if !strings.HasSuffix(lines[0], wantFirst) {
				t.Errorf("first line %q; want it to end %q", lines[0], wantFirst)
			}
			if !tt.interrupt {
				return
			}
			// The interrupted apply's last line says how far it got; the next apply acts on the
			// rest: the rows that did not succeed.
			stopped := lines[ends[0]]
			c, _ := progressLineCounts(t, stopped)
			if !strings.Contains(stopped, ": interrupted after ") || c.running+c.notSent == 0 ||
				!strings.HasSuffix(stopped, "; the next apply waits for the running rows and sends the rest") {
				t.Errorf("the interrupted apply's last line %q; want it interrupted, with rows left for the next apply", stopped)
			}
			if want := fmt.Sprintf("apply started: %d rows to run,", tt.rows-c.succeeded); !strings.Contains(lines[starts[1]], want) {
				t.Errorf("the second apply's first line %q; want %q", lines[starts[1]], want)
			}
			t.Logf("progress.log:\n%s", b)
		})
	}
}
