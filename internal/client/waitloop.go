package client

import (
	"context"
	"time"
)

// waitSchedule chooses how long a wait sleeps before its next read. WaitJob takes one in
// WaitOptions.schedule (tests); the default is the adaptive schedule described on WaitJob.
type waitSchedule[R any] interface {
	// Next returns the wait before the next read, given the last record read and whether a
	// live event stream is connected (its events then wake the wait sooner, so the timer is
	// only a safety net). After a failed read it is called with the last good record and
	// streaming false.
	Next(last R, streaming bool) time.Duration
}

// jobSchedule is the schedule of WaitJob.
type jobSchedule = waitSchedule[*Job]

// clock is the time source of the waits; tests inject a fixed one.
type clock interface{ Now() time.Time }

type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }

// outagePolicy is the one rule for failed reads while waiting: the thing waited for runs on
// during an outage, so a few failed reads in a row (each already retried) are waited out; a
// failure that waiting cannot fix (a 4xx such as 401, 403 or 404), or one too many, ends the wait.
type outagePolicy struct{ failures int }

// giveUp counts a failed read and reports whether the wait ends with it.
func (p *outagePolicy) giveUp(err error) bool {
	p.failures++
	return p.failures >= maxReadFailures || !transientReadError(err)
}

// recovered forgets the failures after a good read.
func (p *outagePolicy) recovered() { p.failures = 0 }

// growingInterval starts at a floor and grows by half at each step up to a cap: the wait
// between reads while nothing tells how long is left.
type growingInterval struct{ cur, max time.Duration }

func newGrowingInterval(floor, ceiling time.Duration) growingInterval {
	return growingInterval{cur: floor, max: ceiling}
}

// next returns the current interval and grows the following one.
func (g *growingInterval) next() time.Duration {
	d := g.cur
	g.cur = min(g.cur*3/2, g.max)
	return d
}

// sleepCtx waits d, or less when ctx ends first (then it returns ctx's error).
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// dueTimer is a timer that knows when it is due, so a wake-up can bring it forward without
// ever putting it back.
type dueTimer struct {
	t   *time.Timer
	due time.Time
	clk clock
}

func newDueTimer(clk clock, d time.Duration) *dueTimer {
	return &dueTimer{t: time.NewTimer(d), due: clk.Now().Add(d), clk: clk}
}

// reset makes the timer fire after d (dropping a tick not yet received).
func (t *dueTimer) reset(d time.Duration) {
	resetTimer(t.t, d)
	t.due = t.clk.Now().Add(d)
}

// bringForward makes the timer fire after d unless it is already due sooner.
func (t *dueTimer) bringForward(d time.Duration) {
	if t.clk.Now().Add(d).Before(t.due) {
		t.reset(d)
	}
}

// wakeGate decides, for each wake-up of an event stream, whether it re-reads the record now or
// waits. Every wake-up waits for floor after the last read, an urgent one (the terminal status)
// included: a stream that repeats it while the record still says running costs one read per
// floor, not one per event. A hint (progress, output, log, a non-terminal status) also waits a
// third of the time waited so far, at least minHintGap, so a long job's chatty stream costs a
// few reads, not one per step.
type wakeGate struct {
	floor time.Duration
}

// hold returns how long a wake-up must still wait (0: read now).
func (g wakeGate) hold(w wakeup, sinceRead, sinceStart time.Duration) time.Duration {
	if w.urgent {
		return max(g.floor-sinceRead, 0)
	}
	return max(max(minHintGap, sinceStart/3)-sinceRead, 0)
}

// waitLoop is the one wait engine: it reads a record until done says so, sleeping between reads
// as the schedule says, woken sooner by an optional event stream, and applying the outage
// policy to failed reads. It returns the last record read; on a context error or a failure
// that ends the wait, that record comes back with the error.
type waitLoop[R any] struct {
	read     func(ctx context.Context, last R) (R, error)
	done     func(R) bool
	schedule waitSchedule[R]
	wake     <-chan wakeup // nil without an event stream
	gate     wakeGate
	// side, when set, carries work from sources the wait interprets itself (a socket's frames,
	// its redial and grace timers): each handler runs on the loop's goroutine, so the state it
	// changes needs no lock, and returns whether to read the record at once. done is asked
	// again after every handler.
	side    <-chan sideHandler
	onRead  func(prev, next R)                   // after each good read; may be nil
	onRetry func(ctx context.Context, err error) // a failed read that is waited out
	// replan, when set, delivers news for the schedule between reads (of a job's shape: its
	// first run time, or the probe handed to this wait); onReplan then returns the new wait
	// before the next read (0: now). It is heard only while polling: a live stream's events say
	// more.
	replan   <-chan struct{}
	onReplan func(last R) time.Duration
	clk      clock
}

// sideHandler is one piece of work from a wait's side source; it reports whether the record
// must be read at once.
type sideHandler func(ctx context.Context) (readNow bool)

func (w *waitLoop[R]) run(ctx context.Context, last R) (R, error) {
	if w.clk == nil {
		w.clk = systemClock{}
	}
	started := w.clk.Now()
	lastRead := started
	stream := eventStream{wake: w.wake}
	timer := newDueTimer(w.clk, w.schedule.Next(last, stream.streaming()))
	defer timer.t.Stop()
	var outage outagePolicy
	for !w.done(last) {
		// A source that floods keeps its channel always ready: the deadline is checked before
		// every message, not left to the select's random choice.
		if err := ctx.Err(); err != nil {
			return last, err
		}
		select {
		case <-ctx.Done():
			return last, ctx.Err()
		case <-w.replan:
			if !stream.streaming() {
				timer.reset(w.onReplan(last))
			}
			continue
		case handle := <-w.side:
			if handle(ctx) {
				timer.reset(0)
			}
			continue
		case ev, ok := <-stream.wake:
			now := w.clk.Now()
			if !w.onWake(&stream, ev, ok, timer, last, now.Sub(lastRead), now.Sub(started)) {
				continue // coalesce; the timer still runs
			}
		case <-timer.t.C:
		}
		next, err := w.read(ctx, last)
		lastRead = w.clk.Now()
		if err != nil {
			if ctx.Err() != nil {
				return last, ctx.Err()
			}
			if outage.giveUp(err) {
				return last, err
			}
			w.onRetry(ctx, err)
			timer.reset(w.schedule.Next(last, false))
			continue
		}
		outage.recovered()
		if w.onRead != nil {
			w.onRead(last, next)
		}
		last = next
		timer.reset(w.schedule.Next(last, stream.streaming()))
	}
	return last, nil
}

// eventStream is a wait's view of its event stream. Once the stream has delivered an event,
// the timer is only a safety net. Until then it is not trusted (a proxy may buffer it, so it
// stays open and says nothing) and the loop polls on the schedule. If the stream ends after it
// delivered events, its channel closes and the loop re-reads at once, then polls on the
// schedule; a stream refused or ended before its first event told nothing about the record, so
// polling simply carries on as scheduled.
type eventStream struct {
	wake <-chan wakeup // nil without a stream, or once it ended
	live bool          // it delivered an event
}

func (s *eventStream) streaming() bool { return s.wake != nil && s.live }

// onWake handles one message of the event stream (ok false: the stream ended) and reports
// whether to read the record now.
func (w *waitLoop[R]) onWake(s *eventStream, ev wakeup, ok bool, timer *dueTimer, last R, sinceRead, sinceStart time.Duration) bool {
	if !ok {
		s.wake = nil
		return s.live
	}
	if !s.live { // the stream proved itself: the timer becomes the safety net
		s.live = true
		timer.reset(w.schedule.Next(last, true))
	}
	if d := w.gate.hold(ev, sinceRead, sinceStart); d > 0 {
		if ev.urgent {
			timer.bringForward(d) // read once the floor has passed
		}
		return false
	}
	return true
}
