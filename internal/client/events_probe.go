package client

import (
	"context"
	"sync"
)

// eventsProbe lets one wait at a time find out whether the service serves event streams at all.
// Until a stream has been answered, a wait that wants one waits for the answer of the stream
// already asked for: a batch that starts ten waits at once on a service that answers 501 sends
// one refused request, not ten. Once a stream has been served, every wait opens its own at once.
// The zero value is ready for use.
type eventsProbe struct {
	mu      sync.Mutex
	served  bool          // a stream was answered with a success
	pending chan struct{} // closed when the stream in flight has its answer; nil when none is
}

// begin returns once this wait may ask for a stream, and whether it is the probe (then it must
// call settle with the answer). It returns ok false when ctx ended or refused says the service
// serves none.
func (p *eventsProbe) begin(ctx context.Context, refused func() bool) (probing, ok bool) {
	for {
		if refused() {
			return false, false
		}
		p.mu.Lock()
		if p.served {
			p.mu.Unlock()
			return false, true
		}
		if p.pending == nil {
			p.pending = make(chan struct{})
			p.mu.Unlock()
			return true, true
		}
		answered := p.pending
		p.mu.Unlock()
		select {
		case <-ctx.Done():
			return false, false
		case <-answered:
		}
	}
}

// settle records the probe's answer and lets the waits behind it ask. A probe that failed
// for any reason but a 501 (remembered by the caller) lets the next wait try its own.
func (p *eventsProbe) settle(served bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.served = p.served || served
	if p.pending != nil {
		close(p.pending)
		p.pending = nil
	}
}
