package client

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"
)

func TestWakeGateHold(t *testing.T) {
	t.Parallel()
	g := wakeGate{floor: 100 * time.Millisecond}
	tests := []struct {
		name                  string
		urgent                bool
		sinceRead, sinceStart time.Duration
		want                  time.Duration
	}{
		{"urgent past the floor reads now", true, 150 * time.Millisecond, time.Minute, 0},
		{"urgent within the floor waits for it", true, 30 * time.Millisecond, time.Minute, 70 * time.Millisecond},
		{"a hint waits at least minHintGap", false, 400 * time.Millisecond, 2 * time.Second, 600 * time.Millisecond},
		{"a hint waits a third of the time waited", false, 10 * time.Second, 60 * time.Second, 10 * time.Second},
		{"a hint past its gap reads now", false, 25 * time.Second, 60 * time.Second, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := g.delay(wakeup{urgent: tt.urgent}, tt.sinceRead, tt.sinceStart); got != tt.want {
				t.Fatalf("hold = %v, want %v", got, tt.want)
			}
		})
	}
}

// recordingSchedule is a jobSchedule that polls at once and remembers what it was asked.
type recordingSchedule struct{ seen []string }

func (s *recordingSchedule) Next(last *Job, _ bool) time.Duration {
	s.seen = append(s.seen, last.Status)
	return time.Millisecond
}

// WaitOptions.schedule replaces the adaptive schedule: it is asked after every read, with the
// record just read, and its delay paces the reads.
func TestWaitJobUsesTheGivenSchedule(t *testing.T) {
	t.Parallel()
	id := "66666666-6666-6666-6666-666666666666"
	s := &scripted{steps: []http.HandlerFunc{
		status(200, nil, jobJSON(id, "queued")), status(200, nil, jobJSON(id, "running")), status(200, nil, jobJSON(id, "succeeded")),
	}}
	srv := httptest.NewServer(s)
	defer srv.Close()
	c := testClient(t, srv.URL)
	sched := &recordingSchedule{}
	start := &Job{ID: id, Status: JobQueued, URLs: JobURLs{Self: srv.URL + "/api/v2/jobs/" + id}}
	got, err := c.WaitJob(context.Background(), start, WaitOptions{NoEvents: true, schedule: sched, PollMax: time.Hour})
	if err != nil || got.Status != JobSucceeded {
		t.Fatalf("WaitJob = %+v, %v", got, err)
	}
	// Asked before the first read, then after each read.
	if want := []string{"queued", "queued", "running", "succeeded"}; !slices.Equal(sched.seen, want) {
		t.Fatalf("schedule asked with %v, want %v", sched.seen, want)
	}
}

// fixedSchedule waits the same time before every read.
type fixedSchedule[R any] time.Duration

func (d fixedSchedule[R]) Next(R, bool) time.Duration { return time.Duration(d) }

// sideState is the record of the side-channel tests: reads counted, and a flag a handler sets
// to end the wait.
type sideState struct {
	reads int
	over  bool
}

// The engine's side channel: each handler runs on the loop's goroutine, one that asks for a
// read gets it at once (the schedule alone would wait an hour), and done is asked again after
// every handler, so one that ends the wait ends it without a read.
func TestWaitLoopSideHandlers(t *testing.T) {
	t.Parallel()
	readNow := func(context.Context) bool { return true }
	tests := []struct {
		name      string
		handlers  func(st *sideState) []sideHandler
		wantReads int
	}{
		{"a handler asking to read reads at once", func(*sideState) []sideHandler {
			return []sideHandler{readNow}
		}, 1},
		{"a handler that ends the wait ends it without a read", func(st *sideState) []sideHandler {
			return []sideHandler{func(context.Context) bool { st.over = true; return true }}
		}, 0},
		{"a handler not asking to read leaves the schedule alone", func(st *sideState) []sideHandler {
			return []sideHandler{
				func(context.Context) bool { return false },
				func(context.Context) bool { st.over = st.reads == 0; return false },
			}
		}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			st := &sideState{}
			side := make(chan sideHandler)
			go func() {
				for _, h := range tt.handlers(st) {
					side <- h
				}
			}()
			loop := waitLoop[*sideState]{
				read: func(_ context.Context, s *sideState) (*sideState, error) {
					s.reads++
					s.over = true
					return s, nil
				},
				done:     func(s *sideState) bool { return s.over },
				schedule: fixedSchedule[*sideState](time.Hour),
				side:     side,
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			got, err := loop.run(ctx, st)
			if err != nil {
				t.Fatalf("run: %v (reads %d)", err, st.reads)
			}
			if got.reads != tt.wantReads {
				t.Fatalf("reads = %d, want %d", got.reads, tt.wantReads)
			}
		})
	}
}

// A side source that floods keeps the side channel always ready, so after the context ends
// select would pick at random between its Done channel and the next handler; the engine
// checks the context before every handler instead, so none runs once it ended. Here the
// channel is full and the context ends inside a handler, on the loop's goroutine: without the
// check, each round runs at least one more handler with probability 1/2, so the rounds leave
// a chance of 2^-64 of missing it.
func TestWaitLoopRunsNoHandlerAfterTheContextEnds(t *testing.T) {
	t.Parallel()
	const rounds, endAt, flood = 64, 3, 16
	for round := range rounds {
		ctx, cancel := context.WithCancel(context.Background())
		handled, afterEnd := 0, 0
		side := make(chan sideHandler, flood)
		for range flood {
			side <- func(context.Context) bool {
				if ctx.Err() != nil {
					afterEnd++
				}
				if handled++; handled == endAt {
					cancel()
				}
				return false
			}
		}
		loop := waitLoop[*sideState]{
			read:     func(_ context.Context, s *sideState) (*sideState, error) { s.reads++; return s, nil },
			done:     func(s *sideState) bool { return s.over },
			schedule: fixedSchedule[*sideState](time.Hour),
			side:     side,
		}
		_, err := loop.run(ctx, &sideState{})
		cancel()
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("round %d: run error = %v, want the context's end", round, err)
		}
		if afterEnd != 0 {
			t.Fatalf("round %d: %d handler(s) ran after the context ended", round, afterEnd)
		}
	}
}
