package client

import (
	"context"
	"time"
)

// WaitOptions tune WaitJob.
type WaitOptions struct {
	// OnUpdate is called with every record that differs from the previous one.
	OnUpdate func(*Job)
	// PollMin is the least time between two reads; PollMax the period of the fixed poll whose
	// request budget a blind wait keeps (default 2 s).
	PollMin, PollMax time.Duration
	// PollStreaming is the safety-net interval while the event stream is connected: events
	// wake the loop, so polling then only guards against a stream that went quiet.
	PollStreaming time.Duration
	// NoEvents disables the event stream (poll only).
	NoEvents bool
	// Durations, when set, supplies the likely run time of jobs of this Shape (see
	// WorkflowShape) while nothing else tells how long is left, and learns from this job once it
	// has finished. Share one across the waits of a batch.
	Durations *DurationEstimator
	Shape     string
	// schedule, when set (tests only), replaces the adaptive schedule built from PollMin, PollMax and
	// PollStreaming. PollMin still bounds how often event wake-ups may re-read the job.
	schedule jobSchedule
}

const (
	defaultPollMin       = 100 * time.Millisecond
	defaultPollMax       = 2 * time.Second
	defaultPollStreaming = 10 * time.Second
	// minHintGap is the least time between two re-reads prompted by non-terminal events
	// (status, progress, output, log); the gap then grows with the time waited (a third of
	// it), so a long job's chatty stream costs a few reads, not one per step. A terminal
	// status, or the stream's end, re-reads at once.
	minHintGap = time.Second
	// estimateOverdueFraction: a job overdue by more than this fraction of its shape's run
	// time (as far as agreeing run times may lie from their median) is polled at PollMax.
	estimateOverdueFraction = 8
	// likelyEndMargin is added to a job's likely end before it is read, with a thirty-second
	// of its run time, so the read finds it finished rather than about to.
	likelyEndMargin = 20 * time.Millisecond
)

// WaitJob waits until job is terminal and returns the last record. The job record is the only
// truth: the event stream, when the service offers one, only wakes the loop. Without a stream
// the schedule (pollSchedule) uses what it knows: progress, when it moves, foretells the end,
// read just after it; when it does not, the waits that share WaitOptions.Durations (a batch)
// read each job near its likely end, from the run times of finished jobs of its shape, its
// place in the queue and when the batch's running jobs will likely end; with nothing to go on, a
// wait reads blind (blindPlan: just after whole periods of the job's run, counted from its
// started_at), within the request budget of a fixed poll at PollMax. No read
// comes sooner than the service's Retry-After asks, and no event, not even a terminal status,
// re-reads the job sooner than PollMin after the last read. On a context error it returns the
// last record seen together with the error.
func (c *Client) WaitJob(ctx context.Context, job *Job, opts WaitOptions) (*Job, error) {
	ctx, stop := context.WithCancel(ctx)
	defer stop()

	sched := opts.schedule
	var seat *batchSeat
	if sched == nil {
		seat = opts.Durations.join(opts.Shape)
		defer seat.leave()
		sched = newPollSchedule(opts, seat)
	}
	loop := waitLoop[*Job]{
		read:     c.RefreshJob,
		done:     (*Job).Terminal,
		schedule: sched,
		share:    waitShare{c},
		gate:     wakeGate{floor: orDuration(opts.PollMin, defaultPollMin)},
		onRead: func(prev, next *Job) {
			if changed(prev, next) && opts.OnUpdate != nil {
				opts.OnUpdate(next)
			}
		},
	}
	if ps, ok := sched.(*pollSchedule); ok && seat != nil {
		// News of the job's shape between reads (its first run time, the probe handed to this
		// wait) makes the schedule plan anew.
		loop.replan, loop.onReplan = seat.bell, ps.replan
	}
	// A service that answered 501 to one event stream serves none: later waits poll at once.
	if !opts.NoEvents && job.URLs.Events != "" && !c.eventsNotImplemented.Load() {
		loop.events = c.eventSource(job.URLs.Events)
	}
	final, err := loop.run(ctx, job)
	if err == nil {
		opts.Durations.learn(opts.Shape, final)
	}
	return final, err
}

// resetTimer stops t, drains a pending tick, and sets it to fire after d.
func resetTimer(t *time.Timer, d time.Duration) {
	if !t.Stop() {
		select {
		case <-t.C:
		default:
		}
	}
	t.Reset(d)
}

// pollSchedule is the default jobSchedule: it chooses the next poll interval from what the
// records show.
type pollSchedule struct {
	min, max, streaming time.Duration
	firstAt             time.Time // first record with progress, and its value
	firstValue          float64
	durations           *DurationEstimator // likely run times by workflow shape (may be nil)
	shape               string
	// seat is the wait's place in the batch (may be nil): it tells whether another wait probes
	// the shape (then this one follows, keeping only a slow safety net until the first job of
	// the shape has finished), and when the batch's other jobs will likely end.
	seat   *batchSeat
	safety growingInterval
	asked  bool // Next was asked before: the record it is given was read, not submitted
	clk    clock
	began  time.Time // when the wait began
	// lastRead is when Next was last asked after a read (or the submission): the record the
	// schedule plans from is as old as that.
	lastRead time.Time
	// notBefore is when the Retry-After of the last read allows the next.
	notBefore time.Time
	// record is the last record Next was given, and reads how many records it was given after
	// the first: the reads this wait made (the blind plan's budget counts them).
	record *Job
	reads  int
	// seenRunning is where the marks of a job running without a started_at count from, and
	// prevRead when the record before the last was read (zero: none).
	seenRunning, prevRead time.Time
	// aimed: the last wait aimed at the end progress foretold; a read that then finds the job
	// running waits at least half a blind wait before the next, so a job stuck near its end
	// is not read at every PollMin.
	aimed bool
}

const (
	// followerSafetyFirst and followerSafetyMax bound a follower's safety net while the first
	// job of its shape runs, as multiples of PollMax: it starts at two fixed-poll periods, so a
	// short job pays nothing for it, and grows by half up to four, so a long one pays a few
	// reads where a fixed poll pays one per period.
	followerSafetyFirst = 2
	followerSafetyMax   = 4
)

func newPollSchedule(opts WaitOptions, seat *batchSeat) *pollSchedule {
	p := &pollSchedule{
		min:       orDuration(opts.PollMin, defaultPollMin),
		max:       orDuration(opts.PollMax, defaultPollMax),
		streaming: orDuration(opts.PollStreaming, defaultPollStreaming),
		durations: opts.Durations,
		shape:     opts.Shape,
		seat:      seat,
	}
	p.safety = newGrowingInterval(followerSafetyFirst*p.max, followerSafetyMax*p.max)
	p.clk = systemClock{}
	p.began = p.clk.Now()
	return p
}

// runOrigin is where the blind marks of the job's run count from (see blindPlan): its
// started_at, never later than now (a server clock ahead of ours); when a running job has none,
// the read before the one that first saw it running (it started since: the earlier bound keeps
// the marks from drifting late); while it has not started, the wait's start.
func (p *pollSchedule) runOrigin(job *Job, now time.Time) time.Time {
	if job.Status == JobQueued || job.Status == "" {
		return p.began
	}
	if start, ok := parseJobTime(job.StartedAt); ok {
		if start.After(now) {
			return now
		}
		return start
	}
	if p.seenRunning.IsZero() {
		p.seenRunning = later(p.prevRead, p.began)
	}
	return p.seenRunning
}

// blind is the wait before the next blind read (blindPlan); a probe (see batchSeat) reads more
// often, spending the reads its followers save: its period is PollMax over its share. A period
// shorter than the Retry-After of the last read is stretched to it: the service paces the reads
// anyway, and on marks of that pace they still fall just after whole periods of the run (each
// mark's margin grows by a twenty-fourth of the period, which covers the read's own latency).
func (p *pollSchedule) blind(job *Job, now time.Time) time.Duration {
	period := max(time.Duration(float64(p.max)/p.seat.probeShare()), p.min, job.RetryAfter)
	return blindPlan{period: period, floor: p.min, began: p.began, origin: p.runOrigin(job, now),
		reads: p.reads, notBefore: p.notBefore}.wait(now)
}

// Next implements jobSchedule. It is asked after every read (and once before the first), so
// the record it is given is as recent as now. It never reads sooner than the service's
// Retry-After on the last read asks.
func (p *pollSchedule) Next(job *Job, streaming bool) time.Duration {
	now := p.clk.Now()
	p.prevRead = p.lastRead
	if job != p.record { // a new record: read (the first one was submitted, not read)
		if p.record != nil {
			p.reads++
		}
		p.record = job
	}
	p.lastRead = now
	p.notBefore = now.Add(job.RetryAfter)
	return max(p.next(job, streaming, now), job.RetryAfter)
}

// next is the wait before the next read: the safety net while a live stream wakes the wait;
// else what the job's progress foretells; else, queued or running without a rate, when jobs
// of its shape ran long enough (untilLikelyEnd); else, while another wait probes the shape, a
// slow safety net; else the blind plan.
func (p *pollSchedule) next(job *Job, streaming bool, now time.Time) time.Duration {
	if streaming {
		p.tellBatch(job, now, 0, false)
		return p.streaming
	}
	if left, ok := p.timeLeft(job); ok {
		p.tellBatch(job, now, left, true)
		return p.untilForetoldEnd(job, now, left)
	}
	p.aimed = false
	p.tellBatch(job, now, 0, false)
	if job.Status == JobQueued && p.asked {
		p.seat.queuedWhileProbing()
	}
	d, ok := p.untilLikelyEnd(job, now)
	p.asked = true
	if ok {
		return d
	}
	if p.seat.follows() {
		return p.safety.next()
	}
	return p.blind(job, now)
}

// untilForetoldEnd is the wait before the next read of a job whose progress says it ends in
// left: just after that (an eighth more), unless the blind plan's next read comes sooner. A
// read aimed so that finds the job still running waits at least half the blind wait for the
// next.
func (p *pollSchedule) untilForetoldEnd(job *Job, now time.Time, left time.Duration) time.Duration {
	blind := p.blind(job, now)
	d := min(blind, max(left+left/8+likelyEndMargin, p.min))
	if p.aimed {
		d = max(d, blind/2)
	}
	p.aimed = d < blind
	return d
}

// replan is asked when the wait has news of its shape between two reads: the shape's first run
// time, or the probe handed to it. A record that said queued may be stale by now (the job may
// have started since), so it is read at once; a running one is read as the news suggests.
func (p *pollSchedule) replan(job *Job) time.Duration {
	if job.Status != JobRunning {
		return 0
	}
	now := p.clk.Now()
	return max(p.next(job, false, now), p.notBefore.Sub(now))
}

// tellBatch tells the batch whether the job runs, and when it will likely end: from its
// progress (left, when known), else from its start and its shape's run time.
func (p *pollSchedule) tellBatch(job *Job, now time.Time, left time.Duration, leftKnown bool) {
	if p.seat == nil {
		return
	}
	if job.Status != JobRunning {
		p.seat.notRunning()
		return
	}
	var end time.Time // zero: unknown
	if leftKnown {
		end = now.Add(left)
	} else if start, started := parseJobTime(job.StartedAt); started {
		// Only here is the shape's run time asked for: each ask copies and sorts its samples.
		if expected, known := p.likelyRunTime(); known {
			end = start.Add(expected)
		}
	}
	p.seat.running(end)
}

// likelyRunTime is the median run time of the job's shape, whether its run times agree or not.
func (p *pollSchedule) likelyRunTime() (time.Duration, bool) {
	if expected, _, _, ok := p.estimate(); ok {
		return expected, true
	}
	_, median, _, ok := p.durations.spread(p.shape)
	return median, ok
}

// estimate returns the shape's likely and late run times from its finished jobs, when enough of
// them agree (trusted); until then from the first to finish (not trusted), since the jobs of a
// batch that share its shape likely take about as long.
func (p *pollSchedule) estimate() (expected, late time.Duration, trusted, ok bool) {
	if expected, late, ok = p.durations.runTimes(p.shape); ok {
		return expected, late, true, true
	}
	first, ok := p.durations.firstRunTime(p.shape)
	return first, first, false, ok
}

// untilLikelyEnd is the wait until just after the job's likely end, when jobs of its shape have
// shown how long they run. A queued job will likely start when the batch's running jobs ahead
// of it end (likelyStart), and end a late run time after that; a running one is read once just
// after its start plus a late run time of the shape, and, if it is still running then, at a
// tenth of the median plus half the time it is overdue (at most max).
func (p *pollSchedule) untilLikelyEnd(job *Job, now time.Time) (time.Duration, bool) {
	expected, late, trusted, ok := p.estimate()
	if !ok {
		return p.untilVaryingEnd(job, now)
	}
	d, ok := p.untilEnd(job, now, expected, late)
	if ok && !trusted {
		// One run time may be an outlier (a first job slowed by a cold start): it never puts
		// the next read later than the safety net would.
		d = min(d, p.safety.cur)
	}
	return d, ok
}

// untilEnd is untilLikelyEnd for the given likely and late run times. A job just submitted is
// queued by definition, free slots or not: it may start now; only a record read since says it
// waits behind others.
func (p *pollSchedule) untilEnd(job *Job, now time.Time, expected, late time.Duration) (time.Duration, bool) {
	start, ok := p.likelyStartOf(job, now)
	if !ok {
		return 0, false
	}
	// Reading just before the end costs a read and a retry: aim a little after the late end of
	// the shape's run times.
	left := start.Add(late + expected/32 + likelyEndMargin).Sub(now)
	switch overdue := -left; {
	case overdue >= 0 && p.lastRead.Before(now.Add(-overdue)):
		// The job is past its likely end, and the record was read before that (the news of
		// its shape came between reads): read it now.
		return 0, true
	case overdue > expected/estimateOverdueFraction:
		// Far beyond the run times of its shape (further than they may lie from each other):
		// they say nothing of this job's end, which is looked for blind.
		return p.blind(job, now), true
	case overdue >= 0:
		// Overdue: jobs of one shape vary by a tenth or so, so re-read at a tenth of the run
		// time, and less often the later it gets.
		return min(max(expected/10+overdue/2, p.min), p.max), true
	}
	return max(left, p.min), true
}

// untilVaryingEnd is the wait before the next read of a job whose shape's run times do not
// agree: nothing until the early end of them (the first decile) after its start, then reads
// their spread apart (from the first to the ninth decile), at most max: a fixed poll at max
// reads before the early end too, so this one costs no more reads, and sees the end as soon.
func (p *pollSchedule) untilVaryingEnd(job *Job, now time.Time) (time.Duration, bool) {
	early, _, late, ok := p.durations.spread(p.shape)
	if !ok {
		return 0, false
	}
	start, ok := p.likelyStartOf(job, now)
	if !ok {
		return 0, false
	}
	if untilEarly := start.Add(early).Sub(now); untilEarly > 0 {
		return max(untilEarly, p.min), true
	}
	return min(max(late-early, p.min), p.max), true
}

// likelyStartOf is when the job started, or, queued, will likely start (see untilEnd).
func (p *pollSchedule) likelyStartOf(job *Job, now time.Time) (time.Time, bool) {
	switch job.Status {
	case JobQueued:
		if !p.asked {
			return now, true
		}
		return likelyStart(now, job.QueuePosition, p.seat.othersEnds()), true
	case JobRunning:
		start, ok := parseJobTime(job.StartedAt)
		return start, ok && !start.After(now) // no start time, or a clock ahead of ours: unknown
	}
	return time.Time{}, false
}

// timeLeft estimates the time until the job ends from the rate of its progress since the
// first record that carried progress. It reports false until there is a rate.
func (p *pollSchedule) timeLeft(job *Job) (time.Duration, bool) {
	if job.Status != JobRunning || job.Progress == nil {
		return 0, false
	}
	v := job.Progress.Value
	now := p.clk.Now()
	if p.firstAt.IsZero() {
		p.firstAt, p.firstValue = now, v
		return 0, false
	}
	elapsed := now.Sub(p.firstAt)
	done := v - p.firstValue
	if done <= 0 || elapsed <= 0 || v >= 1 {
		return 0, false
	}
	return time.Duration(float64(elapsed) * (1 - v) / done), true
}

// changed reports whether b tells something new over a: a status, outputs, progress or a new
// place in the queue (each is worth a progress line).
func changed(a, b *Job) bool {
	if a.Status != b.Status || len(a.Outputs) != len(b.Outputs) || !equalPos(a.QueuePosition, b.QueuePosition) {
		return true
	}
	if (a.Progress == nil) != (b.Progress == nil) {
		return true
	}
	return a.Progress != nil && *a.Progress != *b.Progress
}
