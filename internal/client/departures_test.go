package client

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// Requests leave departureSpacing apart at least, and only while fewer are unanswered than a
// window that opens as answers come back (burstWindow, then up to burstWindowMax, or what keeps
// floorRate leaving when answers are slow): before the first answer, burstWindow requests at
// most are under way, whatever the answers' latency; a failure closes the window again (two
// under way, two answer times per two requests); answers later than answerWait no longer hold
// the next request; requests due further apart than the answers take are not delayed.
func TestSpacedDeparturesOpenBurstsAsAnswersComeBack(t *testing.T) {
	t.Parallel()
	const never = gateNothing // no answer comes
	tests := []struct {
		name    string
		reads   int
		every   time.Duration // between the reads falling due (0: all at once)
		latency time.Duration // of each answer
		outcome gateOutcome
		// wantBeforeAnswer is how many left before the first answer came back, wantUnanswered
		// the most under way at once, wantLast when the last left.
		wantBeforeAnswer, wantUnanswered int
		wantLast                         time.Duration
	}{
		{name: "answers within a millisecond", reads: 64, latency: 500 * time.Microsecond, outcome: gateAnswered,
			wantBeforeAnswer: 1, wantUnanswered: 1, wantLast: 63 * departureSpacing},
		// Answers this slow would hold burstWindowMax to fewer than floorRate a second: the
		// window grows to what keeps floorRate leaving (6 at 20 ms, 26 at 100 ms), as the
		// smoothed answer time comes to the answers' latency.
		{name: "answers in 20 ms", reads: 64, latency: 20 * time.Millisecond, outcome: gateAnswered,
			wantBeforeAnswer: burstWindow, wantUnanswered: 5, wantLast: 282 * time.Millisecond},
		{name: "answers in 100 ms", reads: 64, latency: 100 * time.Millisecond, outcome: gateAnswered,
			wantBeforeAnswer: burstWindow, wantUnanswered: 25, wantLast: 508 * time.Millisecond},
		{name: "failures in 20 ms", reads: 64, latency: 20 * time.Millisecond, outcome: gateFailed,
			wantBeforeAnswer: burstWindow, wantUnanswered: burstWindow, wantLast: 621 * time.Millisecond},
		{name: "no answer", reads: 6, latency: time.Hour, outcome: never,
			wantBeforeAnswer: 6, wantUnanswered: 6, wantLast: departureSpacing + 4*answerWait},
		{name: "due 10 ms apart, answers in 95 ms", reads: 20, every: 10 * time.Millisecond, latency: 95 * time.Millisecond,
			outcome: gateAnswered, wantBeforeAnswer: burstWindow, wantUnanswered: 10, wantLast: 290 * time.Millisecond},
		{name: "due 40 ms apart, answers in 95 ms", reads: 20, every: 40 * time.Millisecond, latency: 95 * time.Millisecond,
			outcome: gateAnswered, wantBeforeAnswer: burstWindow, wantUnanswered: 3, wantLast: 19 * 40 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				d := newSpacedDepartures()
				var mu sync.Mutex
				under, most, beforeAnswer := 0, 0, 0
				var last time.Duration
				start := time.Now()
				firstAnswer := start.Add(tt.latency)
				var wg sync.WaitGroup
				for i := range tt.reads {
					wg.Go(func() {
						time.Sleep(time.Duration(i) * tt.every)
						_, _, ticket := d.depart(t.Context(), openGate)
						mu.Lock()
						under++
						most = max(most, under)
						last = max(last, time.Since(start))
						if time.Now().Before(firstAnswer) {
							beforeAnswer++
						}
						mu.Unlock()
						if tt.outcome == never {
							return
						}
						time.Sleep(tt.latency)
						mu.Lock()
						under--
						mu.Unlock()
						d.answer(ticket, tt.outcome)
					})
				}
				wg.Wait()
				t.Logf("%d before the first answer, at most %d under way, the last left after %v", beforeAnswer, most, last)
				if beforeAnswer != tt.wantBeforeAnswer {
					t.Errorf("%d reads left before the first answer; want %d", beforeAnswer, tt.wantBeforeAnswer)
				}
				if most != tt.wantUnanswered {
					t.Errorf("at most %d reads under way; want %d", most, tt.wantUnanswered)
				}
				if last != tt.wantLast {
					t.Errorf("the last read left after %v; want %v", last, tt.wantLast)
				}
			})
		})
	}
}

// A request that the gate holds once its turn comes does not leave: it is not counted as under way,
// and the next read's turn does not wait for its answer.
func TestSpacedDeparturesCountOnlyReadsThatLeave(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		d := newSpacedDepartures()
		held := func() (time.Duration, <-chan struct{}, gateTicket) { return time.Second, nil, gateTicket{} }
		for range 5 {
			if wait, _, ticket := d.depart(t.Context(), held); wait != time.Second || ticket.departed {
				t.Fatalf("depart while the service is down = %v, %+v; want held a second, not departed", wait, ticket)
			}
		}
		start := time.Now()
		for range burstWindow {
			if _, _, ticket := d.depart(t.Context(), openGate); !ticket.departed {
				t.Fatalf("depart = %+v; want departed", ticket)
			}
		}
		if waited := time.Since(start); waited > departureSpacing*burstWindow {
			t.Errorf("the first reads after the held ones waited %v; want at most %v", waited, departureSpacing*burstWindow)
		}
		ctx, cancel := context.WithTimeout(t.Context(), time.Millisecond)
		defer cancel()
		if _, _, ticket := d.depart(ctx, openGate); ticket.departed {
			t.Errorf("a read whose context ended in its turn departed")
		}
	})
}

func openGate() (time.Duration, <-chan struct{}, gateTicket) { return 0, nil, gateTicket{} }
