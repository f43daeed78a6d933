package client

import (
	"context"
	"fmt"
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

// A wait rides out transient failures until its context's deadline: a read that fails for a
// transient reason (transientFailure: a refused or reset connection, an attempt that timed out,
// 408, 429, 500, 502, 503, 504, whatever the body) does not end it; the wait reads again as the
// service's Retry-After asks, else after a backoff that grows exponentially with full jitter up
// to the client's largest wait (rideOutWait). What is not transient (401, 403, 404, 410, 422, ...)
// ends the wait with that error, as does the context. Each read inside a wait is one attempt
// (readOnce): the wait is the one place its reads are retried, so the client's waits can pace
// them together (readShare: a rate limit's Retry-After and the outage gate hold every wait at
// once). max_retries bounds a request outside a wait only.

// readShare is what the waits of one client share about the service (the Client implements it
// through waitShare): how long a read due now is held, and what each read told.
type readShare interface {
	// readTurn returns how long a read due now must wait (0: read now, with the ticket), and a
	// channel closed when that may have changed (nil: none). It may block until the read's turn
	// among the client's requests (spacedDepartures), or until ctx ends.
	readTurn(ctx context.Context) (time.Duration, <-chan struct{}, gateTicket)
	// readDone is told the outcome of every read (nil: it succeeded).
	readDone(t gateTicket, err error)
	// rideOut is the wait before reading again after the given number of transient
	// failures in a row, the last one err.
	rideOut(failures int, err error) time.Duration
}

type inWaitKey struct{}

// readOnce marks the context of a wait's reads: each is sent once, the wait retrying it.
func readOnce(ctx context.Context) context.Context { return context.WithValue(ctx, inWaitKey{}, true) }

// readingInWait reports whether ctx is that of a wait's read.
func readingInWait(ctx context.Context) bool { v, _ := ctx.Value(inWaitKey{}).(bool); return v }

// waitShare is the Client's readShare.
type waitShare struct{ c *Client }

func (s waitShare) readTurn(ctx context.Context) (time.Duration, <-chan struct{}, gateTicket) {
	return s.c.turn(ctx, s.look)
}

// look is the wait of a read due now: the service's rate limit, for every wait at once, then
// the outage gate.
func (s waitShare) look() (time.Duration, <-chan struct{}, gateTicket) {
	if d := s.c.readsHeldFor(); d > 0 {
		return d, nil, gateTicket{}
	}
	return s.c.gate.admit()
}

func (s waitShare) readDone(t gateTicket, err error) {
	outcome, wait := readOutcome(err)
	s.c.report(t, outcome, wait)
}

// rideOut is the wait before a request riding out failures goes again: its own backoff
// (rideOutWait) while the outage gate takes the service for up or in doubt. While it takes it for
// down, the gate paces the request instead (it lets one probe out at a time, a few seconds apart
// or as Retry-After asks), so the wait is the least one: a backoff grown through a long outage would
// otherwise keep the request asleep well after the service is back, and a lone wait has no
// other request to probe for it.
func (s waitShare) rideOut(failures int, err error) time.Duration {
	wait := rideOutWait(s.c.retryWaitMin, s.c.retryWaitMax, failures, err)
	if s.c.gate.serviceIsDown() {
		return min(wait, s.c.retryWaitMin)
	}
	return wait
}

// rideOutWait is the wait after the given number of transient read failures in a row: the
// Retry-After of the last when it asked for one (at least minWait), else exponential with full
// jitter from minWait up to maxWait.
func rideOutWait(minWait, maxWait time.Duration, failures int, err error) time.Duration {
	if wait := retryAfterOf(err); wait >= minWait {
		return wait
	}
	return jitteredBackoff(minWait, maxWait, failures)
}

// Defaults of a wait built without a readShare (tests of the engine alone).
const (
	defaultRideOutMin = 250 * time.Millisecond
	defaultRideOutMax = 30 * time.Second
)

// failureStreak is what a wait, a download or a read riding out failures keeps of them: how
// many transient failures came in a row, since when, and the last one.
type failureStreak struct {
	n     int
	since time.Time
	last  error
}

// add counts a transient failure at now.
func (f *failureStreak) add(err error, now time.Time) {
	if f.n == 0 {
		f.since = now
	}
	f.n++
	f.last = err
}

// RideOutError is the end of a wait, a download or a read that its context's deadline (or the
// caller's stop) cut while it was riding out failing attempts: what failed is kept beside the
// context's error, which errors.Is still finds (Unwrap).
type RideOutError struct {
	Err      error     // the context's error
	Failures int       // attempts in a row that failed
	Since    time.Time // when the first of them failed
	Last     error     // the last failure
}

func (e *RideOutError) Error() string {
	// The last failure is told, not wrapped: the wait ended at its deadline, and a caller asking
	// what the error means must find that, not a transient read failure it rode out.
	return fmt.Sprintf("%v (the last %d attempt(s) failed, since %s; the last: %v)", e.Err, e.Failures,
		e.Since.UTC().Format(time.RFC3339), e.Last)
}

func (e *RideOutError) Unwrap() error { return e.Err }

// rideOutEnded is the context's error at the end of a wait, a download or a read: a
// *RideOutError naming the failures it was riding out, if any.
func rideOutEnded(ctxErr error, streak failureStreak) error {
	if streak.last == nil {
		return ctxErr
	}
	return &RideOutError{Err: ctxErr, Failures: streak.n, Since: streak.since, Last: streak.last}
}

// readRidingOut reads once per attempt, as a wait's reads go (held with the client's waits, its
// outcome told to them), and reads again after a transient failure, as Retry-After asks or
// backing off with jitter, until ctx ends. What is not transient ends it at once.
func readRidingOut[T any](ctx context.Context, c *Client, read func(ctx context.Context) (T, error)) (T, error) {
	share := waitShare{c}
	var zero T
	var streak failureStreak
	for {
		ticket, err := holdForShare(ctx, share)
		if err != nil {
			return zero, rideOutEnded(err, streak)
		}
		v, err := read(readOnce(ctx))
		share.readDone(ticket, err)
		switch {
		case err == nil:
			return v, nil
		case ctx.Err() != nil:
			return zero, rideOutEnded(err, streak)
		case !transientFailure(err):
			return zero, err
		}
		streak.add(err, time.Now())
		if err := sleepUnlessDone(ctx, share.rideOut(streak.n, err)); err != nil {
			return zero, rideOutEnded(err, streak)
		}
	}
}

// sleepUnlessDone waits d, or until ctx ends (its error).
func sleepUnlessDone(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

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

// delay returns how long a wake-up must still wait (0: read now).
func (g wakeGate) delay(w wakeup, sinceRead, sinceStart time.Duration) time.Duration {
	if w.urgent {
		return max(g.floor-sinceRead, 0)
	}
	return max(max(minHintGap, sinceStart/3)-sinceRead, 0)
}

// waitLoop is the one wait engine, under every wait of the client (WaitJob, WaitPrompt,
// AwaitModelResult's status reads and collects): it reads a record until done
// says so, sleeping between reads as the schedule says, woken sooner by an optional event stream
// (which it also redials), riding out transient read failures until the context ends, and ending
// on the first read that fails for good. It returns the last record read; on a context error or
// a failed read, that record comes back with the error.
type waitLoop[R any] struct {
	read     func(ctx context.Context, last R) (R, error)
	done     func(R) bool
	schedule waitSchedule[R]
	// events, when set, is the record's event stream: its events wake the loop, and the loop
	// redials it when it ends early (see eventSource).
	events *eventSource
	gate   wakeGate
	// side, when set, carries work from sources the wait interprets itself (a socket's frames,
	// its redial and grace timers): each handler runs on the loop's goroutine, so the state it
	// changes needs no lock, and returns whether to read the record at once. done is asked
	// again after every handler.
	side   <-chan sideHandler
	onRead func(prev, next R) // after each good read; may be nil
	// share, when set, is what the client's waits share: a read due while it holds them waits
	// (the client's rate limit and its outage gate, honoured by all its waits at once), and it
	// paces the reads after a transient failure.
	share readShare
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
	stream := eventStream{src: w.events}
	stream.open(ctx)
	defer stream.stop()
	timer := newDueTimer(w.clk, w.schedule.Next(last, stream.streaming()))
	defer timer.t.Stop()
	readCtx := readOnce(ctx)
	var heldUntilChange <-chan struct{} // the share's channel while it holds a due read
	var streak failureStreak            // transient read failures in a row
	for !w.done(last) {
		// A source that floods keeps its channel always ready: the deadline is checked before
		// every message, not left to the select's random choice.
		if err := ctx.Err(); err != nil {
			return last, rideOutEnded(err, streak)
		}
		select {
		case <-ctx.Done():
			return last, rideOutEnded(ctx.Err(), streak)
		case <-w.replan:
			if !stream.streaming() && streak.n == 0 {
				timer.reset(w.onReplan(last))
			}
			continue
		case handle := <-w.side:
			if handle(ctx) {
				timer.reset(0)
			}
			continue
		case <-stream.redialDue():
			stream.open(ctx)
			continue
		case ev, ok := <-stream.wake():
			now := w.clk.Now()
			if !w.onWake(&stream, ev, ok, timer, last, now.Sub(lastRead), now.Sub(started)) {
				continue // coalesce; the timer still runs
			}
		case <-heldUntilChange:
		case <-timer.t.C:
		}
		ticket, held, wait := w.shareHold(ctx, timer)
		if heldUntilChange = held; wait {
			continue
		}
		next, err := w.read(readCtx, last)
		lastRead = w.clk.Now()
		w.reportRead(ticket, err)
		if err != nil {
			if ctx.Err() != nil {
				return last, rideOutEnded(ctx.Err(), streak)
			}
			if !transientFailure(err) {
				return last, err
			}
			streak.add(err, lastRead)
			timer.reset(w.rideOut(streak.n, err))
			continue
		}
		streak = failureStreak{}
		if w.onRead != nil {
			w.onRead(last, next)
		}
		last = next
		timer.reset(w.schedule.Next(last, stream.streaming()))
	}
	return last, nil
}

// shareHold asks the client's share whether a read due now may go. When it must wait, the timer
// is reset to the share's wait and held is the channel that tells of a change sooner.
func (w *waitLoop[R]) shareHold(ctx context.Context, timer *dueTimer) (ticket gateTicket, held <-chan struct{}, wait bool) {
	if w.share == nil {
		return gateTicket{}, nil, false
	}
	d, changed, t := w.share.readTurn(ctx)
	if d > 0 {
		timer.reset(d)
		return gateTicket{}, changed, true
	}
	return t, nil, false
}

// reportRead tells the client's share the outcome of a read it let go with ticket.
func (w *waitLoop[R]) reportRead(ticket gateTicket, err error) {
	if w.share != nil {
		w.share.readDone(ticket, err)
	}
}

// rideOut is the wait before reading again after failures transient failures in a row.
func (w *waitLoop[R]) rideOut(failures int, err error) time.Duration {
	if w.share != nil {
		return w.share.rideOut(failures, err)
	}
	return rideOutWait(defaultRideOutMin, defaultRideOutMax, failures, err)
}

// eventSource opens a record's event stream, one connection at a time; the wait loop redials a
// connection that ended early (see eventStream).
type eventSource struct {
	open func(ctx context.Context) *eventConn
	// redialWait is the wait before the given redial (0 the first).
	redialWait func(redial int) time.Duration
}

// eventConn is one connection of an event stream: its wake-ups, then, once wake is closed, how
// it ended.
type eventConn struct {
	wake <-chan wakeup
	// Written before wake closes, read after.
	opened      bool // the service answered with a stream (not refused)
	sawTerminal bool // it delivered the terminal status
}

// maxEventRedials bounds the redials of one wait's event stream: a stream that keeps ending
// early is left, and polling carries on alone.
const maxEventRedials = 2

// eventStream is a wait's view of its event stream. Once a connection has delivered an event,
// the timer is only a safety net. Until then it is not trusted (a proxy may buffer it, so it
// stays open and says nothing) and the loop polls on the schedule. When a connection that
// delivered events ends, the loop re-reads at once, then polls on the schedule; a connection
// refused, or that ended on the terminal status, is not redialled; one that was served and ended
// early is redialled after a backoff, at most maxEventRedials times.
type eventStream struct {
	src     *eventSource // nil without a stream
	conn    *eventConn   // nil while none is open
	live    bool         // the open connection delivered an event
	redials int
	redial  *time.Timer // due redial, nil when none
}

func (s *eventStream) streaming() bool { return s.conn != nil && s.live }

// wake is the open connection's channel (nil, never ready, when none is open).
func (s *eventStream) wake() <-chan wakeup {
	if s.conn == nil {
		return nil
	}
	return s.conn.wake
}

// redialDue is the channel of the due redial (nil when none).
func (s *eventStream) redialDue() <-chan time.Time {
	if s.redial == nil {
		return nil
	}
	return s.redial.C
}

// open opens a connection, when the wait has a stream.
func (s *eventStream) open(ctx context.Context) {
	s.redial = nil
	if s.src != nil {
		s.conn, s.live = s.src.open(ctx), false
	}
}

// ended forgets the connection that ended and plans its redial when it ended early.
func (s *eventStream) ended() {
	c := s.conn
	s.conn, s.live = nil, false
	if c.opened && !c.sawTerminal && s.redials < maxEventRedials {
		s.redial = time.NewTimer(s.src.redialWait(s.redials))
		s.redials++
	}
}

func (s *eventStream) stop() {
	if s.redial != nil {
		s.redial.Stop()
	}
}

// onWake handles one message of the event stream (ok false: the connection ended) and reports
// whether to read the record now.
func (w *waitLoop[R]) onWake(s *eventStream, ev wakeup, ok bool, timer *dueTimer, last R, sinceRead, sinceStart time.Duration) bool {
	if !ok {
		wasLive := s.live
		s.ended()
		return wasLive
	}
	if !s.live { // the stream proved itself: the timer becomes the safety net
		s.live = true
		timer.reset(w.schedule.Next(last, true))
	}
	if d := w.gate.delay(ev, sinceRead, sinceStart); d > 0 {
		if ev.urgent {
			timer.bringForward(d) // read once the floor has passed
		}
		return false
	}
	return true
}
