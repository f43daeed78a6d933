package client

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// virtualClock replaces the client's waits between attempts: each wait the client computes is
// added to a virtual clock instead of slept through, and the operation's context is canceled
// once the clock passes the budget (or too many attempts were made without it moving).
type virtualClock struct {
	mu       sync.Mutex
	elapsed  time.Duration
	shortest time.Duration
	waits    int
	budget   time.Duration
	cancel   context.CancelFunc
}

func (v *virtualClock) hook(minWait, maxWait time.Duration, attempt int, resp *http.Response) time.Duration {
	w := backoff(minWait, maxWait, attempt, resp)
	v.mu.Lock()
	defer v.mu.Unlock()
	v.elapsed += w
	if v.waits == 0 || w < v.shortest {
		v.shortest = w
	}
	v.waits++
	if v.elapsed >= v.budget || v.waits >= 5000 {
		v.cancel()
		return time.Hour // the canceled context ends the wait at once
	}
	return 0
}

// A 429 whose Retry-After is 0 or a date already past is "back off", not "now": over 60 s of
// (virtual) waiting, a submission that keeps being refused is sent a handful of times, every wait
// is at least the backoff floor, and the final error says what every answer said (a definite
// 429 queue_full and how many), not that the outcome is unknown.
func TestRateLimitWithoutADelayStillBacksOff(t *testing.T) {
	t.Parallel()
	for _, retryAfter := range []string{"0", "Wed, 21 Oct 2015 07:28:00 GMT"} {
		t.Run("Retry-After "+retryAfter, func(t *testing.T) {
			t.Parallel()
			var posts atomic.Int64
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				posts.Add(1)
				w.Header().Set("Retry-After", retryAfter)
				w.Header().Set("X-Svc-Request-Id", "req-full")
				w.WriteHeader(http.StatusTooManyRequests)
				_, _ = w.Write([]byte(`{"error":{"code":"queue_full","message":"the queue is full"}}`))
			}))
			defer srv.Close()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			clock := &virtualClock{budget: time.Minute, cancel: cancel}
			c, err := New(Config{Endpoint: srv.URL, RetryWaitMin: DefaultRetryWaitMin, RetryWaitMax: DefaultRetryWaitMax})
			if err != nil {
				t.Fatal(err)
			}
			c.backoffHook = clock.hook

			_, err = c.SubmitJob(ctx, SubmitJobInput{Workflow: json.RawMessage(`{}`), IdempotencyKey: "k"})

			n := posts.Load()
			t.Logf("Retry-After %q: %d POSTs in %s of waiting, shortest wait %s", retryAfter, n, clock.elapsed, clock.shortest)
			if n > 40 {
				t.Errorf("%d POSTs in %s of waiting; want a handful", n, clock.elapsed)
			}
			if clock.shortest < DefaultRetryWaitMin {
				t.Errorf("a wait of %s, under the %s floor", clock.shortest, DefaultRetryWaitMin)
			}
			var unknown *UnknownOutcomeError
			if err == nil || errors.As(err, &unknown) {
				t.Fatalf("want a definite refusal, got %v", err)
			}
			for _, want := range []string{"HTTP 429", "queue_full", "req-full", "attempts in a row"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("the error does not say %q: %v", want, err)
				}
			}
		})
	}
}

// The floor holds for every policy: a read, a v1 prompt and a registry claim refused with
// Retry-After: 0 wait at least the floor between their (max_retries-bounded) attempts.
func TestBackoffFloor(t *testing.T) {
	t.Parallel()
	past := time.Now().Add(-time.Hour).UTC().Format(http.TimeFormat)
	tests := []struct {
		retryAfter string
		want       func(time.Duration) bool
	}{
		{"0", func(d time.Duration) bool { return d >= DefaultRetryWaitMin }},
		{past, func(d time.Duration) bool { return d >= DefaultRetryWaitMin }},
		{"", func(d time.Duration) bool { return d >= DefaultRetryWaitMin }},
		{"3", func(d time.Duration) bool { return d == 3*time.Second }},
	}
	for _, tt := range tests {
		for attempt := range 4 {
			h := http.Header{}
			if tt.retryAfter != "" {
				h.Set("Retry-After", tt.retryAfter)
			}
			got := backoff(DefaultRetryWaitMin, DefaultRetryWaitMax, attempt, &http.Response{StatusCode: http.StatusTooManyRequests, Header: h})
			if !tt.want(got) {
				t.Errorf("Retry-After %q, attempt %d: waits %s", tt.retryAfter, attempt, got)
			}
		}
	}
}

// A resend of a refused submission is not started when the deadline would cut it off before
// its answer: the submission that the service's last answer settled ("not now, nothing ran")
// stays settled, rather than becoming one that may have run. Here the wait after the first 429
// ends 100 ms before the deadline, and the server takes 300 ms to answer.
func TestSubmitNotResentTooCloseToTheDeadline(t *testing.T) {
	t.Parallel()
	var posts atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if posts.Add(1) > 1 {
			time.Sleep(300 * time.Millisecond)
		}
		w.Header().Set("Retry-After", "0")
		w.WriteHeader(http.StatusTooManyRequests)
		_, _ = w.Write([]byte(`{"error":{"code":"queue_full","message":"the queue is full"}}`))
	}))
	defer srv.Close()
	c, err := New(Config{Endpoint: srv.URL, RetryWaitMin: DefaultRetryWaitMin, RetryWaitMax: DefaultRetryWaitMax})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 400*time.Millisecond)
	defer cancel()
	c.backoffHook = func(time.Duration, time.Duration, int, *http.Response) time.Duration {
		deadline, _ := ctx.Deadline()
		return time.Until(deadline) - 100*time.Millisecond
	}

	_, err = c.SubmitJob(ctx, SubmitJobInput{Workflow: json.RawMessage(`{}`), IdempotencyKey: "k"})

	if n := posts.Load(); n != 1 {
		t.Errorf("%d POSTs, want 1: the resend would have been cut off", n)
	}
	var unknown *UnknownOutcomeError
	if err == nil || errors.As(err, &unknown) || !DeclinedUntilDeadline(err) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("want the deadline's end of a definite refusal, got %v", err)
	}
}
