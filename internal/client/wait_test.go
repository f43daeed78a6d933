package client

import (
	"testing"
	"time"
)

func TestPollSchedule(t *testing.T) {
	opts := WaitOptions{PollMin: 100 * time.Millisecond, PollMax: 2 * time.Second, PollStreaming: 10 * time.Second}
	running := func(v float64) *Job { return &Job{Status: JobRunning, Progress: &Progress{Value: v}} }

	t.Run("streaming polls only as a safety net", func(t *testing.T) {
		if got := newPollSchedule(opts).next(running(0.5), true); got != 10*time.Second {
			t.Fatalf("interval = %v, want 10s", got)
		}
	})
	t.Run("without progress the interval grows geometrically to the cap", func(t *testing.T) {
		p := newPollSchedule(opts)
		var got []time.Duration
		for range 10 {
			got = append(got, p.next(&Job{Status: JobQueued}, false))
		}
		if got[0] != 100*time.Millisecond || got[1] != 150*time.Millisecond || got[9] != 2*time.Second {
			t.Fatalf("intervals = %v", got)
		}
	})
	tests := []struct {
		name       string
		first, now float64
		elapsed    time.Duration
		want       time.Duration
	}{
		// 10% in 1 s: 8 s left after 20%: poll in 4 s, capped at 2 s.
		{name: "far from the end the cap holds", first: 0.1, now: 0.2, elapsed: time.Second, want: 2 * time.Second},
		// 50% in 5 s: 1 s left at 90%: poll in 0.5 s.
		{name: "near the end it polls at half the time left", first: 0.4, now: 0.9, elapsed: 5 * time.Second, want: 500 * time.Millisecond},
		// 98% done: 0.1 s left: never below the floor.
		{name: "at the very end the floor holds", first: 0.0, now: 0.99, elapsed: 5 * time.Second, want: 100 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newPollSchedule(opts)
			p.firstAt, p.firstValue = time.Now().Add(-tt.elapsed), tt.first
			got := p.next(running(tt.now), false)
			if d := got - tt.want; d < -20*time.Millisecond || d > 20*time.Millisecond {
				t.Fatalf("interval = %v, want about %v", got, tt.want)
			}
		})
	}
}
