package client

import (
	"context"
	"sync"
	"time"
)

// readSpacing is the least time between two reads of a client's waits that fall due together.
// The waits of a batch do (rows submitted together start, progress and end together, and the
// first end of a shape tells every other wait of it when to look), and a read that leaves
// before the answer to the one before it is back cannot learn from it: were the service to go
// down just then, all of them would meet the outage before its first failure came back (the
// outage gate learns from answers, not from requests under way). Spaced so, a few at most are
// under way before an answer is back (a service answers within a millisecond or two on a
// local network), and a burst of 64 reads is spread over an eighth of a second; reads that do
// not fall due together are not delayed. It bounds a client's reads at 500 a second, more
// than a batch of 1,024 rows in flight reads (512 a second were each polled every 2 s; its
// waits read less: followers every 4 to 8 s, the others near their job's likely end).
const readSpacing = 2 * time.Millisecond

// spacedDepartures hands out departure times at least gap apart: each read due now takes the
// next free slot and waits until it. A slot taken by a read that the outage gate then holds is
// not handed out again: the gap after it is only a little longer.
type spacedDepartures struct {
	gap  time.Duration
	mu   sync.Mutex
	next time.Time // the first free slot
}

// depart waits for the next free slot (none when it is due) or until ctx ends.
func (d *spacedDepartures) depart(ctx context.Context) error {
	d.mu.Lock()
	now := time.Now()
	at := later(d.next, now)
	d.next = at.Add(d.gap)
	d.mu.Unlock()
	wait := at.Sub(now)
	if wait <= 0 {
		return nil
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
