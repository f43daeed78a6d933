package client

import (
	"context"
	"net/http"
	"sync"
	"time"
)

// outageFailures is how many transient failures in a row, across every wait and submission of
// a client with no answer in between, tell that the service is down as a whole (a gateway
// answering 503, a restart refusing connections), not that one read was unlucky.
const outageFailures = 3

// outageProbeMin is the least wait between two probes while the service is down when it named
// no Retry-After: a service that is down is asked about once a second at most.
const outageProbeMin = time.Second

// outageProbeMax is the longest wait between two probes while the service is down when it named
// no Retry-After: a service that comes back is found within a few seconds, for one request every
// few seconds while it is down.
const outageProbeMax = 5 * time.Second

// outageGate is what the waits and submissions of one client learn together about the service
// being down, in three states (serviceState). While requests get answers the service is up and
// the gate costs nothing (a 429 is an answer: the service is up and paces this client itself).
// After one transient failure the service is in doubt: the failure may be one unlucky request or
// the start of an outage, so one request at a time (the scout) goes out until one is answered
// (the service is up again) or outageFailures come in a row. Without that, every wait whose read
// falls due before the third failure comes back would send it: a batch whose rows started
// together has dozens due within milliseconds. Once outageFailures transient failures come in a
// row, the service is taken for down: reads and submissions then hold, and one request at a time
// (the probe) goes out, after a backoff that grows exponentially with full jitter from
// outageProbeMin up to outageProbeMax, or as long as the service's Retry-After asks. A probe that
// fails backs the gate off again; the first answer (of a probe or of any request) takes the
// service for up for every wait at once. So a batch of any size sends a few requests a second at
// most while the service is down, instead of its number of waits times their pace.
type outageGate struct {
	minWait, maxWait time.Duration

	mu       sync.Mutex
	failures int          // transient failures in a row since the last answer
	answered bool         // the service has answered a request of this client at least once
	service  serviceState // what the gate takes the service for
	backoffs int          // probes that failed since the service was taken for down
	probeAt  time.Time    // when the next probe may go (serviceDown only)
	probing  bool         // a probe (serviceDown) or a scout (serviceInDoubt) is out
	// changed is closed, and replaced, whenever the service is taken for up or a probe or scout ends: the
	// waits held by it look again.
	changed chan struct{}
}

// serviceState is what the outage gate takes the service for, from the outcomes of this client's
// requests.
type serviceState int

const (
	// serviceUp: the last request got an answer (or none has failed yet); every request goes.
	serviceUp serviceState = iota
	// serviceInDoubt: transient failures came last, fewer than outageFailures in a row; one
	// request at a time (the scout) goes, until one is answered or the service is down.
	serviceInDoubt
	// serviceDown: outageFailures transient failures in a row, or a probe failed since; one
	// request at a time (the probe) goes, after a backoff, until one is answered.
	serviceDown
)

// gateTicket is what the gate handed a request: whether it is the probe or the scout (its
// outcome must be observed, which frees the gate for the next), and whether the client's
// departures let it go (its answer must be told to them).
type gateTicket struct {
	probe, departed bool
	left            time.Time // when the departures let it go
}

func newOutageGate(minWait, maxWait time.Duration) *outageGate {
	return &outageGate{minWait: minWait, maxWait: maxWait, changed: make(chan struct{})}
}

// admit says how long a request due now must wait (0: send it now, with the ticket) and a
// channel closed when that may have changed (nil: nothing to watch).
func (g *outageGate) admit() (time.Duration, <-chan struct{}, gateTicket) {
	if g == nil {
		return 0, nil, gateTicket{}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.service == serviceUp {
		return 0, nil, gateTicket{}
	}
	if g.probing { // until the probe's or scout's outcome, which rings changed
		return g.maxWait, g.changed, gateTicket{}
	}
	if d := time.Until(g.probeAt); g.service == serviceDown && d > 0 {
		return d, g.changed, gateTicket{}
	}
	g.probing = true
	return 0, nil, gateTicket{probe: true}
}

// awaitRelease calls ask until it lets the request go (a wait of 0), sleeping as long as it says
// or until the channel it gives rings, and returns the ticket it handed; or ctx's error.
func awaitRelease(ctx context.Context, ask func() (time.Duration, <-chan struct{}, gateTicket)) (gateTicket, error) {
	for {
		d, changed, t := ask()
		if d <= 0 {
			return t, nil
		}
		timer := time.NewTimer(d)
		select {
		case <-ctx.Done():
			timer.Stop()
			return gateTicket{}, ctx.Err()
		case <-changed:
		case <-timer.C:
		}
		timer.Stop()
	}
}

// gateOutcome is what one request tells the gate.
type gateOutcome int

const (
	gateNothing  gateOutcome = iota // it tells nothing of the service (the context ended, a bad URL)
	gateAnswered                    // the service answered: it is up
	gateFailed                      // a transient failure: it may be down
)

// record takes in the outcome of a request the gate let through with ticket t; retryAfter is
// the wait its answer asked for (0: none).
func (g *outageGate) record(t gateTicket, outcome gateOutcome, retryAfter time.Duration) {
	if g == nil {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if t.probe { // whatever its outcome, the waits held until it look again
		g.probing = false
		defer g.ringLocked()
	}
	switch outcome {
	case gateAnswered:
		wasUp := g.service == serviceUp
		g.failures, g.answered = 0, true
		g.service, g.backoffs = serviceUp, 0
		if !wasUp && !t.probe {
			g.ringLocked()
		}
	case gateFailed:
		g.failures++
		if g.service != serviceDown {
			g.service = serviceInDoubt
		}
		if (g.service == serviceDown && t.probe) || (g.service == serviceInDoubt && g.failures >= outageFailures) {
			g.service = serviceDown
			g.probeAt = time.Now().Add(g.backoffLocked(retryAfter))
			g.backoffs++
			if !t.probe {
				g.ringLocked()
			}
		}
	}
}

// failing reports whether the last request the gate heard of failed for a transient reason (the
// service is in doubt or down).
func (g *outageGate) failing() bool {
	if g == nil {
		return false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.service != serviceUp
}

// serviceIsDown reports whether the service is taken for down. While it is, the gate paces every
// request riding out failures (its probe finds the service back), so they wait the least
// between attempts rather than a backoff grown through the outage.
func (g *outageGate) serviceIsDown() bool {
	if g == nil {
		return false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.service == serviceDown
}

// everAnswered reports whether the service has answered this client at least once. A
// connection refused by a service that never answered is more likely a wrong endpoint than an
// outage.
func (g *outageGate) everAnswered() bool {
	if g == nil {
		return true
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.answered
}

// backoffLocked is the wait before the next probe: the service's Retry-After when it gave one,
// else exponential with full jitter from outageProbeMin up to outageProbeMax, both held within
// the client's own retry waits (a client built to retry within milliseconds, in tests, probes as
// fast).
func (g *outageGate) backoffLocked(retryAfter time.Duration) time.Duration {
	if retryAfter >= g.minWait {
		return retryAfter
	}
	floor := max(g.minWait, min(outageProbeMin, g.maxWait))
	return jitteredBackoff(floor, max(min(g.maxWait, outageProbeMax), floor), g.backoffs+1)
}

func (g *outageGate) ringLocked() {
	close(g.changed)
	g.changed = make(chan struct{})
}

// gatedTransport lets each attempt of the requests it carries (submissions) through the
// client's outage gate and departures, and tells them how each went.
type gatedTransport struct {
	next http.RoundTripper
	c    *Client
}

func (t gatedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	// A submission held here is given up at its caller's stop (untilStop): it never left.
	ctx, release := untilStop(req.Context())
	defer release()
	ticket, err := awaitRelease(ctx, func() (time.Duration, <-chan struct{}, gateTicket) { return t.c.turn(ctx, t.c.gate.admit) })
	if err == nil && ctx.Err() != nil { // the context ended in the attempt's turn
		t.c.report(ticket, gateNothing, 0)
		err = ctx.Err()
	}
	if err != nil { // the context ended while the gate or the departures held the attempt: it never left
		if req.Body != nil {
			_ = req.Body.Close()
		}
		return nil, &NotSentError{Operation: "held while the service was down", URL: redactLink(req.URL.String()), Cause: context.Cause(ctx)}
	}
	resp, err := t.next.RoundTrip(req)
	outcome, wait := responseOutcome(resp, err)
	t.c.report(ticket, outcome, wait)
	return resp, err
}
