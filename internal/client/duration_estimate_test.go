package client

import (
	"testing"
	"time"
)

func finishedJob(status string, executionMS int64, started, completed string) *Job {
	j := &Job{Status: status, Metrics: map[string]*int64{}}
	if executionMS > 0 {
		j.Metrics["execution_ms"] = &executionMS
	}
	if started != "" {
		j.StartedAt = &started
	}
	if completed != "" {
		j.CompletedAt = &completed
	}
	return j
}

func TestDurationEstimator(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		jobs   []*Job
		want   time.Duration
		wantOK bool
	}{
		{name: "nothing seen"},
		{name: "one job is not enough", jobs: []*Job{finishedJob(JobSucceeded, 3000, "", "")}},
		{name: "agreeing jobs give their median", wantOK: true, want: 3100 * time.Millisecond, jobs: []*Job{
			finishedJob(JobSucceeded, 3000, "", ""), finishedJob(JobSucceeded, 3100, "", ""), finishedJob(JobSucceeded, 3200, "", ""),
		}},
		{name: "timestamps when metrics are missing", wantOK: true, want: 2 * time.Second, jobs: []*Job{
			finishedJob(JobSucceeded, 0, "2026-01-01T00:00:00Z", "2026-01-01T00:00:02Z"),
			finishedJob(JobSucceeded, 0, "2026-01-01T00:00:10Z", "2026-01-01T00:00:12Z"),
		}},
		{name: "jobs that disagree say nothing", jobs: []*Job{
			finishedJob(JobSucceeded, 1000, "", ""), finishedJob(JobSucceeded, 3000, "", ""), finishedJob(JobSucceeded, 9000, "", ""),
		}},
		{name: "failed and canceled jobs teach nothing", jobs: []*Job{
			finishedJob(JobFailed, 3000, "", ""), finishedJob(JobCanceled, 3000, "", ""), finishedJob(JobSucceeded, 3000, "", ""),
		}},
		{name: "a job with no run time teaches nothing", jobs: []*Job{
			finishedJob(JobSucceeded, 0, "", ""), finishedJob(JobSucceeded, 3000, "", ""),
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := NewDurationEstimator()
			for _, j := range tt.jobs {
				e.learn("shape", j)
			}
			got, ok := expectedRunTime(e, "shape")
			if ok != tt.wantOK || got != tt.want {
				t.Errorf("expected run time = %v, %v; want %v, %v", got, ok, tt.want, tt.wantOK)
			}
			if _, ok := expectedRunTime(e, "other"); ok {
				t.Error("another shape has an estimate")
			}
		})
	}
}

func TestDurationEstimatorKeepsRecentRuns(t *testing.T) {
	t.Parallel()
	e := NewDurationEstimator()
	for range estimateSamples {
		e.learn("s", finishedJob(JobSucceeded, 1000, "", ""))
	}
	for range estimateSamples {
		e.learn("s", finishedJob(JobSucceeded, 5000, "", ""))
	}
	if got, ok := expectedRunTime(e, "s"); !ok || got != 5*time.Second {
		t.Errorf("expected run time = %v, %v; want the recent 5s", got, ok)
	}
	var none *DurationEstimator
	none.learn("s", finishedJob(JobSucceeded, 1000, "", ""))
	if _, ok := expectedRunTime(none, "s"); ok {
		t.Error("a nil estimator has an estimate")
	}
}

func TestWorkflowShape(t *testing.T) {
	t.Parallel()
	base := `{"1":{"class_type":"EmptyImage","inputs":{"width":8,"seed":1}},"2":{"class_type":"Save","inputs":{"images":["1",0],"prefix":"a"}}}`
	tests := []struct {
		name string
		wf   string
		same bool
	}{
		{name: "other literal values", same: true, wf: `{"2":{"class_type":"Save","inputs":{"prefix":"zz","images":["1",0]}},"1":{"class_type":"EmptyImage","inputs":{"seed":99,"width":64}}}`},
		{name: "other class type", wf: `{"1":{"class_type":"LoadImage","inputs":{"width":8,"seed":1}},"2":{"class_type":"Save","inputs":{"images":["1",0],"prefix":"a"}}}`},
		{name: "other link", wf: `{"1":{"class_type":"EmptyImage","inputs":{"width":8,"seed":1}},"2":{"class_type":"Save","inputs":{"images":["1",1],"prefix":"a"}}}`},
		{name: "one more input", wf: `{"1":{"class_type":"EmptyImage","inputs":{"width":8,"seed":1,"h":2}},"2":{"class_type":"Save","inputs":{"images":["1",0],"prefix":"a"}}}`},
		{name: "one more node", wf: `{"1":{"class_type":"EmptyImage","inputs":{"width":8,"seed":1}},"2":{"class_type":"Save","inputs":{"images":["1",0],"prefix":"a"}},"3":{"class_type":"Save","inputs":{}}}`},
	}
	want := WorkflowShape([]byte(base))
	if want == "" {
		t.Fatal("no shape for a valid workflow")
	}
	for _, tt := range tests {
		if got := WorkflowShape([]byte(tt.wf)); (got == want) != tt.same {
			t.Errorf("%s: shape %q vs %q, same = %v", tt.name, got, want, tt.same)
		}
	}
	for _, bad := range []string{``, `[]`, `{}`, `"x"`} {
		if got := WorkflowShape([]byte(bad)); got != "" {
			t.Errorf("WorkflowShape(%q) = %q, want empty", bad, got)
		}
	}
}

func TestPollScheduleLikelyEnd(t *testing.T) {
	t.Parallel()
	e := NewDurationEstimator()
	for range 3 {
		e.learn("s", finishedJob(JobSucceeded, 3000, "", ""))
	}
	now := time.Date(2026, 1, 1, 0, 0, 10, 0, time.UTC)
	started := func(ago time.Duration) *string { s := now.Add(-ago).Format(time.RFC3339Nano); return &s }
	margin := 3*time.Second/32 + likelyEndMargin
	tests := []struct {
		name   string
		shape  string
		job    *Job
		want   time.Duration
		wantOK bool
	}{
		{name: "queued as submitted: it may start now, so one run from now", shape: "s", job: &Job{Status: JobQueued}, want: 3*time.Second + margin, wantOK: true},
		{name: "running: just after its likely end", shape: "s", job: &Job{Status: JobRunning, StartedAt: started(time.Second)}, want: 2*time.Second + margin, wantOK: true},
		{name: "running just past its likely end: a tenth of the run time", shape: "s", job: &Job{Status: JobRunning, StartedAt: started(3*time.Second + margin)}, want: 300 * time.Millisecond, wantOK: true},
		{name: "longer overdue: less often", shape: "s", job: &Job{Status: JobRunning, StartedAt: started(3*time.Second + margin + 200*time.Millisecond)}, want: 400 * time.Millisecond, wantOK: true},
		// Blind: the next whole period of the run (6 s) that lies more than a quarter period ahead.
		{name: "overdue beyond how far agreeing run times lie: blind", shape: "s", job: &Job{Status: JobRunning, StartedAt: started(3*time.Second + margin + time.Second)}, want: 6*time.Second + blindMargin(6*time.Second) - (3*time.Second + margin + time.Second), wantOK: true},
		// Blind past 20 periods: marks a twentieth apart from 40 s (42, 44.1, 46.305 s).
		{name: "very long overdue: blind, a twentieth of the run so far", shape: "s", job: &Job{Status: JobRunning, StartedAt: started(44100*time.Millisecond + blindMargin(44100*time.Millisecond))}, want: 46305*time.Millisecond + blindMargin(46305*time.Millisecond) - (44100*time.Millisecond + blindMargin(44100*time.Millisecond)), wantOK: true},
		{name: "running without a start time", shape: "s", job: &Job{Status: JobRunning}},
		{name: "started in our future", shape: "s", job: &Job{Status: JobRunning, StartedAt: started(-time.Second)}},
		{name: "shape never seen", shape: "t", job: &Job{Status: JobQueued}},
	}
	for _, tt := range tests {
		p := newPollSchedule(WaitOptions{Durations: e, Shape: tt.shape}, nil)
		p.lastRead, p.began = now, now.Add(-time.Minute) // the record was just read; the budget allows a read
		p.clk = fixedClock{now}
		got, ok := p.untilLikelyEnd(tt.job, now)
		if ok != tt.wantOK || got != tt.want {
			t.Errorf("%s: untilLikelyEnd = %v, %v; want %v, %v", tt.name, got, ok, tt.want, tt.wantOK)
		}
	}
}

// Run times of one shape that vary: a running job is read once after the late end of them
// (the ninth decile), so that it is finished at that read; so is a queued one that may start now.
func TestPollScheduleLikelyEndReadsAfterTheLateRunTimes(t *testing.T) {
	t.Parallel()
	e := NewDurationEstimator()
	for _, ms := range []int64{2800, 2900, 3000, 3000, 3100, 3200, 3300, 2950, 3050, 3400} {
		e.learn("s", finishedJob(JobSucceeded, ms, "", ""))
	}
	now := time.Date(2026, 1, 1, 0, 0, 10, 0, time.UTC)
	start := now.Add(-time.Second).Format(time.RFC3339Nano)
	p := newPollSchedule(WaitOptions{Durations: e, Shape: "s"}, nil)
	runFor := 3400*time.Millisecond + 3050*time.Millisecond/32 + likelyEndMargin
	if got, _ := p.untilLikelyEnd(&Job{Status: JobQueued}, now); got != runFor {
		t.Errorf("queued: %v, want %v (it may start now)", got, runFor)
	}
	want := runFor - time.Second
	if got, _ := p.untilLikelyEnd(&Job{Status: JobRunning, StartedAt: &start}, now); got != want {
		t.Errorf("running: %v, want %v (after the ninth decile, 3.4s)", got, want)
	}
}

func TestDurationEstimatorFollowers(t *testing.T) {
	t.Parallel()
	e := NewDurationEstimator()
	first, second, other := e.join("s"), e.join("s"), e.join("t")
	if first.follows() || !second.follows() || other.follows() {
		t.Fatalf("followers: first %v, second %v, other shape %v; want false, true, false", first.follows(), second.follows(), other.follows())
	}
	p := newPollSchedule(WaitOptions{Durations: e, Shape: "s"}, second)
	now := time.Date(2026, 1, 1, 0, 0, 10, 0, time.UTC)
	p.clk, p.began = fixedClock{now}, now
	running := &Job{Status: JobRunning}
	if got := p.Next(running, false); got != followerSafetyFirst*defaultPollMax {
		t.Errorf("a follower while the shape is probed: next = %v, want its safety net %v", got, followerSafetyFirst*defaultPollMax)
	}
	e.learn("s", finishedJob(JobSucceeded, 3000, "", ""))
	select {
	case <-second.bell:
	default:
		t.Fatal("the shape's first run time did not ring its follower")
	}
	if second.follows() {
		t.Error("a wait still follows once its shape has a run time")
	}
	for range estimateMinSamples {
		e.learn("s", finishedJob(JobSucceeded, 3000, "", ""))
	}
	if got, want := p.Next(running, false), defaultPollMax/2+blindMargin(defaultPollMax/2); got != want {
		t.Errorf("a former follower once the shape is known (no start time): next = %v, want its blind plan's first read %v", got, want)
	}
	first.leave()
	second.leave()
	other.leave()
	if len(e.waiting) != 0 {
		t.Errorf("waits left in flight: %v", e.waiting)
	}
	if alone := e.join("u"); alone.follows() {
		t.Error("the only wait of its shape is a follower")
	} else {
		alone.leave()
	}
}

// expectedRunTime is the likely run time of a job of the shape: the median of the recent run
// times, when there are enough of them and they agree.
func expectedRunTime(e *DurationEstimator, shape string) (time.Duration, bool) {
	median, _, ok := e.runTimes(shape)
	return median, ok
}

// News of a shape's run time that comes between reads (the bell) finds a job already past its
// likely end while the record in hand was read before it: the job is read at once, not a tenth
// of a run later as one just read and found still running would be.
func TestPollScheduleReadsAtOnceAJobPastItsEndSinceTheLastRead(t *testing.T) {
	t.Parallel()
	e := NewDurationEstimator()
	for range 3 {
		e.learn("s", finishedJob(JobSucceeded, 3000, "", ""))
	}
	now := time.Date(2026, 1, 1, 0, 0, 10, 0, time.UTC)
	started := now.Add(-3300 * time.Millisecond).Format(time.RFC3339Nano) // past its likely end, 3.11 s
	job := &Job{Status: JobRunning, StartedAt: &started}
	for _, tt := range []struct {
		name     string
		lastRead time.Time
		want     time.Duration
	}{
		{name: "read before the likely end", lastRead: now.Add(-2 * time.Second), want: 0},
		{name: "read since, still running", lastRead: now, want: 300*time.Millisecond + (3300*time.Millisecond-3*time.Second-3*time.Second/32-likelyEndMargin)/2},
	} {
		p := newPollSchedule(WaitOptions{Durations: e, Shape: "s"}, nil)
		p.lastRead = tt.lastRead
		if got, ok := p.untilLikelyEnd(job, now); !ok || got != tt.want {
			t.Errorf("%s: untilLikelyEnd = %v, %v; want %v", tt.name, got, ok, tt.want)
		}
	}
}
