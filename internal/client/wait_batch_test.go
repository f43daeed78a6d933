package client

import (
	"context"
	"testing"
	"time"
)

func TestLikelyStart(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 1, 0, 0, 10, 0, time.UTC)
	at := now.Add
	place := func(p int64) *int64 { return &p }
	tests := []struct {
		name     string
		position *int64
		ends     []time.Time
		want     time.Time
	}{
		{name: "no running job of the batch: it may start now", position: place(1), want: now},
		{name: "first in line: when the first running job ends", position: place(1), ends: []time.Time{at(3 * time.Second), at(time.Second), at(2 * time.Second)}, want: at(time.Second)},
		{name: "second in line: when the second ends", position: place(2), ends: []time.Time{at(3 * time.Second), at(time.Second), at(2 * time.Second)}, want: at(2 * time.Second)},
		{name: "place 0 and no place are taken as first", position: place(0), ends: []time.Time{at(2 * time.Second), at(time.Second)}, want: at(time.Second)},
		{name: "absent place", ends: []time.Time{at(2 * time.Second)}, want: at(2 * time.Second)},
		{name: "an unknown or past end could be now", position: place(1), ends: []time.Time{{}, at(-time.Second), at(time.Second)}, want: now},
		{name: "more ahead than the batch runs: slots it cannot see could free now", position: place(4), ends: []time.Time{at(time.Second), at(2 * time.Second)}, want: now},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := likelyStart(now, tt.position, tt.ends); !got.Equal(tt.want) {
				t.Fatalf("likelyStart = %v, want %v", got.Sub(now), tt.want.Sub(now))
			}
		})
	}
}

// learnedEstimator knows jobs of shape "s" run 3 s.
func learnedEstimator() *DurationEstimator {
	e := NewDurationEstimator()
	for range 3 {
		e.learn("s", finishedJob(JobSucceeded, 3000, "", ""))
	}
	return e
}

func startedAgo(now time.Time, ago time.Duration) *string {
	s := now.Add(-ago).Format(time.RFC3339Nano)
	return &s
}

// A job read while queued waits behind the batch's running jobs: it is read a run after the
// one ahead of it ends, not a run from now, which would find it running and cost a read more.
func TestPollScheduleQueuedJobWaitsForTheBatchAhead(t *testing.T) {
	t.Parallel()
	e := learnedEstimator()
	now := time.Date(2026, 1, 1, 0, 0, 10, 0, time.UTC)
	runFor := 3*time.Second + 3*time.Second/32 + likelyEndMargin
	for _, ago := range []time.Duration{2 * time.Second, time.Second, 500 * time.Millisecond} { // ends in 1 s, 2 s, 2.5 s
		seat := e.join("s")
		defer seat.leave()
		p := newPollSchedule(WaitOptions{Durations: e, Shape: "s"}, seat)
		p.clk = fixedClock{now}
		p.Next(&Job{Status: JobRunning, StartedAt: startedAgo(now, ago)}, false)
	}
	seat := e.join("s")
	defer seat.leave()
	p := newPollSchedule(WaitOptions{Durations: e, Shape: "s"}, seat)
	p.clk = fixedClock{now}
	two := int64(2)
	queued := &Job{Status: JobQueued, QueuePosition: &two}
	if got := p.Next(queued, false); got != runFor {
		t.Errorf("as submitted (a free slot may take it now): next = %v, want %v", got, runFor)
	}
	if got, want := p.Next(queued, false), 2*time.Second+runFor; got != want {
		t.Errorf("read queued second in line: next = %v, want %v (the second end, then a run)", got, want)
	}
}

// While no job of a shape has finished, one wait probes it on the regular schedule and the
// others keep a slow safety net; a probe read still queued hands the probe on, once to each.
func TestShapeProbe(t *testing.T) {
	t.Parallel()
	e := NewDurationEstimator()
	a, b, c := e.join("s"), e.join("s"), e.join("s")
	defer c.leave()
	now := time.Date(2026, 1, 1, 0, 0, 10, 0, time.UTC)
	schedule := func(s *batchSeat) *pollSchedule {
		p := newPollSchedule(WaitOptions{Durations: e, Shape: "s"}, s)
		p.asked = true // the records below were read
		p.clk, p.began = fixedClock{now}, now
		return p
	}
	running, queued := &Job{Status: JobRunning}, &Job{Status: JobQueued}
	// Three waits: the probe reads 1 + 2/2 times as often as a lone wait: its blind plan's
	// period is half of PollMax (its first read after half of that, and the mark's margin).
	if got, want := schedule(a).Next(running, false), defaultPollMax/2/2+blindMargin(defaultPollMax/2/2); got != want {
		t.Errorf("the probe: next = %v, want its blind plan with the period shared with its two followers, %v", got, want)
	}
	if got := schedule(b).Next(running, false); got != followerSafetyFirst*defaultPollMax {
		t.Errorf("a follower: next = %v, want the safety net %v", got, followerSafetyFirst*defaultPollMax)
	}
	rung := func(s *batchSeat) bool {
		select {
		case <-s.bell:
			return true
		default:
			return false
		}
	}
	schedule(a).Next(queued, false)
	if !a.follows() || b.follows() || !rung(b) || rung(c) {
		t.Fatalf("a probe read queued: a follows %v, b probes %v (rung), c rung %v; want the probe handed to b", a.follows(), !b.follows(), rung(c))
	}
	schedule(b).Next(queued, false)
	schedule(c).Next(queued, false)
	if !a.follows() || !b.follows() || c.follows() {
		t.Fatal("the probe is handed on past the last wait that has not held it")
	}
	a.leave()
	b.leave()
	if c.follows() {
		t.Fatal("the last wait follows")
	}
	d := e.join("t")
	other := e.join("t")
	d.leave() // the probe's job failed: it teaches nothing, so the probe passes on
	if other.follows() || !rung(other) {
		t.Fatal("a probe that left without a run time did not hand the probe on")
	}
	other.leave()
}

// The first run time of a shape is used by the jobs of the batch at once, but as one run time
// may be an outlier (a cold start), never later than the safety net.
func TestPollScheduleFirstRunTime(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 1, 0, 0, 10, 0, time.UTC)
	tests := []struct {
		name  string
		first int64 // ms
		want  time.Duration
	}{
		{name: "near the end the first job suggests", first: 3000, want: 2*time.Second + 3*time.Second/32 + likelyEndMargin},
		{name: "never later than the safety net", first: 30000, want: followerSafetyFirst * defaultPollMax},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := NewDurationEstimator()
			e.learn("s", finishedJob(JobSucceeded, tt.first, "", ""))
			p := newPollSchedule(WaitOptions{Durations: e, Shape: "s"}, e.join("s"))
			p.clk = fixedClock{now}
			if got := p.Next(&Job{Status: JobRunning, StartedAt: startedAgo(now, time.Second)}, false); got != tt.want {
				t.Fatalf("next = %v, want %v", got, tt.want)
			}
		})
	}
}

// News between reads: a record that said queued may be stale, so it is read at once; a running
// one is read when the news suggests.
func TestPollScheduleReplan(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 1, 0, 0, 10, 0, time.UTC)
	e := NewDurationEstimator()
	e.learn("s", finishedJob(JobSucceeded, 3000, "", ""))
	p := newPollSchedule(WaitOptions{Durations: e, Shape: "s"}, e.join("s"))
	p.clk = fixedClock{now}
	if got := p.replan(&Job{Status: JobQueued}); got != 0 {
		t.Errorf("queued: replan = %v, want 0 (read now)", got)
	}
	if got, want := p.replan(&Job{Status: JobRunning, StartedAt: startedAgo(now, 3*time.Second)}), 3*time.Second/32+likelyEndMargin; got != want {
		t.Errorf("running: replan = %v, want %v", got, want)
	}
}

// The wait loop hears news between reads and re-times its next read.
func TestWaitLoopReplan(t *testing.T) {
	t.Parallel()
	news := make(chan struct{}, 1)
	news <- struct{}{}
	reads, replans := 0, 0
	loop := waitLoop[*Job]{
		read:     func(context.Context, *Job) (*Job, error) { reads++; return &Job{Status: JobSucceeded}, nil },
		done:     (*Job).Terminal,
		schedule: constantSchedule(time.Hour),
		replan:   news,
		onReplan: func(*Job) time.Duration { replans++; return 0 },
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	final, err := loop.run(ctx, &Job{Status: JobRunning})
	if err != nil || final.Status != JobSucceeded || reads != 1 || replans != 1 {
		t.Fatalf("run = %v, %v after %d reads and %d replans; want succeeded after 1 of each", final, err, reads, replans)
	}
}

// Jobs of a shape whose run times do not agree are not read before the early end of them, then
// their spread apart, at most PollMax: where polling from scratch would start at PollMin again.
func TestPollScheduleVaryingRunTimes(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 1, 0, 0, 10, 0, time.UTC)
	tests := []struct {
		name    string
		samples []int64 // ms
		job     *Job
		want    time.Duration
	}{
		{name: "running, before the early end", samples: []int64{1000, 1500, 2000, 2500, 3000}, job: &Job{Status: JobRunning, StartedAt: startedAgo(now, 200*time.Millisecond)}, want: 800 * time.Millisecond},
		{name: "running, past the early end: the spread", samples: []int64{1000, 1500, 2000, 2500, 3000}, job: &Job{Status: JobRunning, StartedAt: startedAgo(now, 1500*time.Millisecond)}, want: 2 * time.Second},
		{name: "a narrower spread", samples: []int64{1000, 1200, 1400, 1600, 1800}, job: &Job{Status: JobRunning, StartedAt: startedAgo(now, 1500*time.Millisecond)}, want: 800 * time.Millisecond},
		{name: "as submitted: the early end from now", samples: []int64{1000, 1500, 2000, 2500, 3000}, job: &Job{Status: JobQueued}, want: time.Second},
		{name: "a wide spread: at most max apart", samples: []int64{1000, 5000, 9000, 20000, 40000}, job: &Job{Status: JobRunning, StartedAt: startedAgo(now, 3*time.Second)}, want: defaultPollMax},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := NewDurationEstimator()
			for _, ms := range tt.samples {
				e.learn("s", finishedJob(JobSucceeded, ms, "", ""))
			}
			p := newPollSchedule(WaitOptions{Durations: e, Shape: "s"}, e.join("s"))
			p.clk = fixedClock{now}
			if got := p.Next(tt.job, false); got != tt.want {
				t.Fatalf("next = %v, want %v", got, tt.want)
			}
		})
	}
}
