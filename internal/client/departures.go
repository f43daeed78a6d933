package client

import (
	"context"
	"sync"
	"time"
)

// The requests of a client leave one by one, and only a few at a time may be unanswered. The
// waits and submissions of a batch fall due together (rows submitted together start, progress
// and end together, and the first end of a shape tells every other wait of it when to look),
// and a request that leaves before the answer to the one before it is back cannot learn from
// it: were the service to go down just then, every request under way would meet the outage
// before its first failure came back (the outage gate learns from answers, not from requests
// under way). So requests open a window as their answers come back, as a TCP connection does:
// they leave departureSpacing apart at least, and only while fewer are unanswered than the
// window, which starts at burstWindow, grows by one with each good answer up to
// burstWindowMax, closes again at a failure, and starts again at burstWindow once nothing is
// under way. Whenever the service goes down, burstWindowMax requests at most meet it before
// its first failure is back, however slowly answers come back (a loaded machine, a service far
// away). The price is a ceiling on the client's requests of burstWindowMax per answer time:
// nearby the spacing's 500 a second is the lower; to a service 50 ms away it is about 80 a
// second, more than the reads of a batch polling 64 rows every 2 s (32 a second). A request whose answer is later than answerWait no longer holds the next one:
// a service that hangs costs the client a few requests a second, not its end. A download counts
// until its answer's headers are in, not while its body streams.
const (
	// departureSpacing is the least time between two requests. It bounds a burst at 500
	// requests a second, more than a batch of 1,024 rows in flight reads (512 a second were
	// each polled every 2 s; its waits read less: followers every 4 to 8 s, the others near
	// their job's likely end).
	departureSpacing = time.Millisecond
	// burstWindow is how many requests may be under way at once when nothing was, and
	// burstWindowMax how many once their answers come back, unless answers are so slow that
	// fewer than floorRate requests a second would leave: then as many as floorRate keeps under
	// way, up to windowCeiling.
	burstWindow, burstWindowMax, windowCeiling = 2, 3, 64
	floorRate                                  = 250
	// answerWait is how long a request waits for an answer to those under way.
	answerWait = 250 * time.Millisecond
)

// spacedDepartures lets the requests of a client leave one by one through its lane (see
// departureSpacing).
type spacedDepartures struct {
	gap, answerWait time.Duration
	lane            chan struct{} // held by the request choosing its departure: the others queue

	mu         sync.Mutex
	last       time.Time     // when the last request left
	unanswered int           // requests that left, answer not yet told
	window     int           // how many may be unanswered when the next leaves
	answerTime time.Duration // smoothed time from a departure to its answer
	answered   chan struct{} // closed, and replaced, when one of them is answered
}

func newSpacedDepartures() *spacedDepartures {
	return &spacedDepartures{gap: departureSpacing, answerWait: answerWait, window: burstWindow,
		lane: make(chan struct{}, 1), answered: make(chan struct{})}
}

// depart lets a request due now leave in its turn (see departureSpacing). Once it may leave,
// look (the outage gate, and for reads the rate limit) has the last word: the request leaves,
// counted until its answer is told (answer), only when look lets it go. A context that ends
// lets it fail at once.
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
	t.departed, t.left = true, d.last
	return 0, nil, t
}

// enterLane takes the lane and waits there for the request's turn.
func (d *spacedDepartures) enterLane(ctx context.Context) error {
	select {
	case d.lane <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	d.idleReset(time.Now())
	if err := d.awaitTurn(ctx); err != nil {
		<-d.lane
		return err
	}
	return nil
}

// idleReset starts a new burst with its first window when nothing is under way and nothing
// left within the gap.
func (d *spacedDepartures) idleReset(now time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.unanswered == 0 && now.Sub(d.last) >= d.gap {
		d.window = burstWindow
	}
}

// awaitTurn waits, holding the lane, until the request may leave.
func (d *spacedDepartures) awaitTurn(ctx context.Context) error {
	_, err := awaitRelease(ctx, func() (time.Duration, <-chan struct{}, gateTicket) {
		wait, answered := d.turn(time.Now())
		return wait, answered, gateTicket{}
	})
	return err
}

// turn is how long the request holding the lane must still wait at now (0: go), and the
// channel that rings sooner when an answer may end the wait (nil: none).
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

// answer tells the departures how the request they let go with t went: a good answer opens
// the window by one (up to windowMaxLocked), a transient failure closes it to its first size.
func (d *spacedDepartures) answer(t gateTicket, outcome gateOutcome) {
	if !t.departed {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.unanswered--
	if outcome != gateNothing { // smoothed as TCP smooths its round trip time, by eighths
		d.answerTime += (time.Since(t.left) - d.answerTime) / 8
	}
	switch outcome {
	case gateAnswered:
		d.window = min(d.window+1, d.windowMaxLocked())
	case gateFailed:
		d.window = burstWindow
	}
	close(d.answered)
	d.answered = make(chan struct{})
}

// windowMaxLocked is the most requests that may be under way: burstWindowMax, or what keeps
// floorRate requests a second leaving while answers take answerTime.
func (d *spacedDepartures) windowMaxLocked() int {
	return min(max(burstWindowMax, int(d.answerTime*floorRate/time.Second)+1), windowCeiling)
}

// answerOnce is answer for the request let go with t, told the first time the function it
// returns is called (with the request's error, nil when answered), and never again.
func (d *spacedDepartures) answerOnce(t gateTicket) func(err error) {
	var once sync.Once
	return func(err error) {
		once.Do(func() {
			outcome, _ := readOutcome(err)
			d.answer(t, outcome)
		})
	}
}
