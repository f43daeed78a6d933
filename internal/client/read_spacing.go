package client

import (
	"context"
	"sync"
	"time"
)

// Reads of a client's waits that fall due together leave one by one: the waits of a batch do
// fall due together (rows submitted together start, progress and end together, and the first
// end of a shape tells every other wait of it when to look), and a read that leaves before the
// answer to the one before it is back cannot learn from it. Were the service to go down just
// then, every read under way would meet the outage before its first failure came back (the
// outage gate learns from answers, not from requests under way). So a burst opens as its
// answers come back, as a TCP connection's window does: its reads leave readSpacing apart, and
// only while fewer are unanswered than the window, which starts at burstWindow and grows by one
// with each good answer (doubling every answer time). However far away the service is, an
// outage that begins as a burst does meets burstWindow reads of it; one that begins in the
// middle of a long burst meets what the answers of the last answer time let out. A burst of 64
// reads takes about five answer times more than their spacing (a quarter of a second to a
// service 50 ms away). A read whose answer is later than answerWait no longer holds the next
// one: a service that hangs costs a burst a few reads a second, not its end. A read that does
// not fall due together with another leaves at once, whatever is under way, and the next burst
// starts at burstWindow again; so does the burst after a failure.
const (
	// readSpacing is the least time between two reads that fall due together. It bounds a
	// burst at 500 reads a second, more than a batch of 1,024 rows in flight reads (512 a
	// second were each polled every 2 s; its waits read less: followers every 4 to 8 s, the
	// others near their job's likely end).
	readSpacing = 2 * time.Millisecond
	// burstWindow is how many reads of a burst may be under way at once when it begins.
	burstWindow = 2
	// answerWait is how long a read of a burst waits for an answer to those under way.
	answerWait = 250 * time.Millisecond
)

// spacedDepartures lets the reads of a client's waits leave, one by one through its lane when
// they fall due together (see readSpacing).
type spacedDepartures struct {
	gap, answerWait time.Duration
	lane            chan struct{} // held by the read choosing its departure: the others queue

	mu         sync.Mutex
	last       time.Time     // when the last read left
	unanswered int           // reads that left through the lane, answer not yet told
	window     int           // how many may be unanswered when the next of a burst leaves
	answered   chan struct{} // closed, and replaced, when one of them is answered
}

func newSpacedDepartures() *spacedDepartures {
	return &spacedDepartures{gap: readSpacing, answerWait: answerWait, window: burstWindow,
		lane: make(chan struct{}, 1), answered: make(chan struct{})}
}

// depart lets a read due now leave: at once when no other read left within the gap and none is
// choosing its departure, else in its turn (see readSpacing). Once it may leave, look (the
// outage gate and the rate limit) has the last word: the read leaves, counted until its answer
// is told (answer), only when look lets it go. A context that ends lets it fail at once.
func (d *spacedDepartures) depart(ctx context.Context, look func() (time.Duration, <-chan struct{}, gateTicket)) (time.Duration, <-chan struct{}, gateTicket) {
	if d.enterLane(ctx) != nil {
		return 0, nil, gateTicket{}
	}
	defer func() { <-d.lane }()
	wait, changed, t := look()
	if wait > 0 || t.probe { // held, or the gate's lone probe or scout, answered to the gate
		return wait, changed, t
	}
	d.mu.Lock()
	d.last = time.Now()
	d.unanswered++
	d.mu.Unlock()
	t.departed = true
	return 0, nil, t
}

// enterLane takes the lane and, unless the read falls due alone, waits there for its turn.
func (d *spacedDepartures) enterLane(ctx context.Context) error {
	select {
	case d.lane <- struct{}{}:
		if d.alone(time.Now()) {
			return nil
		}
	default: // another read is choosing its departure: this one falls due together with it
		select {
		case d.lane <- struct{}{}:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if err := d.awaitTurn(ctx); err != nil {
		<-d.lane
		return err
	}
	return nil
}

// alone reports whether a read due at now falls due alone (no read left within the gap); the
// next burst then starts with its first window.
func (d *spacedDepartures) alone(now time.Time) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if now.Sub(d.last) < d.gap {
		return false
	}
	d.window = burstWindow
	return true
}

// awaitTurn waits, holding the lane, until the read may leave.
func (d *spacedDepartures) awaitTurn(ctx context.Context) error {
	_, err := awaitRelease(ctx, func() (time.Duration, <-chan struct{}, gateTicket) {
		wait, answered := d.turn(time.Now())
		return wait, answered, gateTicket{}
	})
	return err
}

// turn is how long the read holding the lane must still wait at now (0: go), and the channel
// that rings sooner when an answer may end the wait (nil: none).
func (d *spacedDepartures) turn(now time.Time) (time.Duration, <-chan struct{}) {
	d.mu.Lock()
	defer d.mu.Unlock()
	since := now.Sub(d.last)
	switch {
	case since < d.gap:
		return d.gap - since, nil
	case d.unanswered < d.window || since >= d.answerWait:
		return 0, nil
	}
	return d.answerWait - since, d.answered
}

// answer tells the departures how the read they let go with t went: a good answer opens the
// window by one, a transient failure closes it to its first size.
func (d *spacedDepartures) answer(t gateTicket, outcome gateOutcome) {
	if !t.departed {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.unanswered--
	switch outcome {
	case gateAnswered:
		d.window++
	case gateFailed:
		d.window = burstWindow
	}
	close(d.answered)
	d.answered = make(chan struct{})
}
