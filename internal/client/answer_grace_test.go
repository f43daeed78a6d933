package client

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

// At the stop of a submission's caller, no attempt starts (held at the gate, waiting to be
// resent): the submission returns at once, as not sent when nothing left, else as an unknown
// outcome naming its key; an attempt on the wire is given the grace for its answer, and no
// more.
func TestAnswerGraceEndsSubmissionsAtTheStop(t *testing.T) {
	t.Parallel()
	const grace = 400 * time.Millisecond
	const key = "key-of-the-test"
	tests := []struct {
		name string
		// first answers the first request (nil: 503, as every later one), once release is
		// closed when it waits for it (closed right after the stop).
		first func(w http.ResponseWriter, r *http.Request, release <-chan struct{})
		// prepare readies the client; stopWhen says when to stop (nil: at once), given channels
		// that ring when the first request arrived and when a resend was due.
		prepare  func(c *Client)
		stopWhen func(arrived, resendDue <-chan struct{}) <-chan struct{}
		want     func(t *testing.T, job *Job, err error)
		requests int64
		// within is how long after the stop the submission must have returned.
		within time.Duration
	}{
		{
			name: "held by the gate: not sent",
			prepare: func(c *Client) {
				for range outageFailures { // the service is taken for down; its next probe is far off
					c.gate.record(gateTicket{}, gateFailed, time.Hour)
				}
			},
			want: func(t *testing.T, _ *Job, err error) {
				var notSent *NotSentError
				if !errors.As(err, &notSent) {
					t.Fatalf("err = %v; want not sent", err)
				}
			},
			requests: 0, within: 200 * time.Millisecond,
		},
		{
			name:     "its resend due after a 503: no resend, an unknown outcome naming the key",
			stopWhen: func(_, resendDue <-chan struct{}) <-chan struct{} { return resendDue },
			want: func(t *testing.T, _ *Job, err error) {
				var unknown *UnknownOutcomeError
				if !errors.As(err, &unknown) || unknown.IdempotencyKey != key {
					t.Fatalf("err = %v; want an unknown outcome naming the key", err)
				}
			},
			requests: 1, within: 200 * time.Millisecond,
		},
		{
			// A 429 releases the key: the service's last word is that nothing ran.
			name: "on the wire, answered 429 queue_full after the stop: no resend, declined (nothing ran), not refused for good",
			first: func(w http.ResponseWriter, _ *http.Request, release <-chan struct{}) {
				<-release
				w.Header().Set("Retry-After", "0")
				w.WriteHeader(http.StatusTooManyRequests)
				_, _ = w.Write([]byte(`{"error":{"code":"queue_full","message":"the queue is full; retry later"}}`))
			},
			stopWhen: func(arrived, _ <-chan struct{}) <-chan struct{} { return arrived },
			want: func(t *testing.T, _ *Job, err error) {
				if !DeclinedUntilDeadline(err) {
					t.Fatalf("err = %v; want the submission declined, nothing run", err)
				}
			},
			requests: 1, within: 200 * time.Millisecond,
		},
		{
			name: "on the wire, answered within the grace: the job",
			first: func(w http.ResponseWriter, _ *http.Request, release <-chan struct{}) {
				<-release
				w.WriteHeader(http.StatusCreated)
				_, _ = w.Write([]byte(jobJSON("11111111-1111-1111-1111-111111111111", "pending")))
			},
			stopWhen: func(arrived, _ <-chan struct{}) <-chan struct{} { return arrived },
			want: func(t *testing.T, job *Job, err error) {
				if err != nil || job == nil || job.ID != "11111111-1111-1111-1111-111111111111" {
					t.Fatalf("job %v, err %v; want the job answered within the grace", job, err)
				}
			},
			requests: 1, within: grace,
		},
		{
			name: "on the wire, never answered: an unknown outcome at the grace's end",
			first: func(_ http.ResponseWriter, r *http.Request, _ <-chan struct{}) {
				_, _ = io.Copy(io.Discard, r.Body) // the server sees the client go only once the body is read
				<-r.Context().Done()
			},
			stopWhen: func(arrived, _ <-chan struct{}) <-chan struct{} { return arrived },
			want: func(t *testing.T, _ *Job, err error) {
				var unknown *UnknownOutcomeError
				if !errors.As(err, &unknown) || unknown.IdempotencyKey != key {
					t.Fatalf("err = %v; want an unknown outcome naming the key", err)
				}
			},
			requests: 1, within: grace + 300*time.Millisecond,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var n, afterStop atomic.Int64
			var stoppedFlag atomic.Bool
			arrived, release := make(chan struct{}), make(chan struct{})
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				i := n.Add(1)
				if stoppedFlag.Load() {
					afterStop.Add(1)
				}
				if i == 1 {
					close(arrived)
				}
				if i == 1 && tt.first != nil {
					tt.first(w, r, release)
					return
				}
				w.Header().Set("X-Svc-Request-Id", "req-1")
				w.WriteHeader(http.StatusServiceUnavailable)
			}))
			defer srv.Close()
			resendDue := make(chan struct{}, 1)
			c := testClient(t, srv.URL, func(cfg *Config) { cfg.MaxRetries, cfg.AnswerGrace = 5, grace })
			c.backoffHook = func(_, _ time.Duration, _ int, _ *http.Response) time.Duration {
				select {
				case resendDue <- struct{}{}:
				default:
				}
				return time.Hour
			}
			if tt.prepare != nil {
				tt.prepare(c)
			}
			ctx, stop := context.WithCancel(context.Background())
			type result struct {
				job *Job
				err error
				at  time.Time
			}
			out := make(chan result, 1)
			go func() {
				job, err := c.SubmitJob(ctx, SubmitJobInput{Workflow: json.RawMessage(`{"1":{}}`), IdempotencyKey: key})
				out <- result{job, err, time.Now()}
			}()
			if tt.stopWhen != nil {
				<-tt.stopWhen(arrived, resendDue)
			}
			stoppedFlag.Store(true)
			stoppedAt := time.Now()
			stop()
			close(release)
			res := <-out
			tt.want(t, res.job, res.err)
			if took := res.at.Sub(stoppedAt); took > tt.within {
				t.Errorf("returned %v after the stop; want within %v", took, tt.within)
			}
			if got := n.Load(); got != tt.requests {
				t.Errorf("%d requests; want %d", got, tt.requests)
			}
			if got := afterStop.Load(); got != 0 {
				t.Errorf("%d requests arrived after the stop; want none", got)
			}
		})
	}
}
