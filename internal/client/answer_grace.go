package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/hashicorp/go-retryablehttp"
)

// ErrStopped is why an attempt of a submission did not start: the caller stopped (an interrupt,
// a timeout) before it left. Nothing of it reached the service.
var ErrStopped = fmt.Errorf("stopped before this attempt was sent: %w", context.Canceled)

// submitting returns the context one submission (SubmitJob, SubmitModelRequest, SubmitPrompt)
// is made in, given its caller's ctx: ctx's end (an interrupt, a deadline) is the stop. From
// then on no attempt of it starts (one held by the outage gate or the departures, a resend after
// a failure: each fails as not sent), and an attempt already on the wire is given up to the
// client's AnswerGrace to be answered, so that the id of a job the service created comes back.
// The context returned ends as soon as no attempt is on the wire after the stop (at once when
// none is), the grace after the stop at the latest, or when release is called, which must be
// once the submission has returned.
func (c *Client) submitting(ctx context.Context) (submitCtx context.Context, release context.CancelFunc) {
	if ctx.Err() != nil {
		return ctx, func() {}
	}
	w := &stopWatch{stop: ctx, changed: make(chan struct{})}
	ended, cancel := context.WithCancel(context.WithValue(context.WithoutCancel(ctx), stopWatchKey{}, w))
	unhook := context.AfterFunc(ctx, func() { w.endOnceAnswered(ended, cancel, c.answerGrace) })
	return graceContext{Context: ended, stop: ctx}, func() {
		unhook()
		cancel()
	}
}

// graceContext is a submission's context (see submitting): it ends by the grace, and tells its
// caller's deadline and, once ended, its caller's reason, so that a resend is still not started
// too close to the deadline, and an end at the deadline still reads as a deadline.
type graceContext struct {
	context.Context                 // ended once no attempt is on the wire after the stop
	stop            context.Context // the caller's
}

func (g graceContext) Deadline() (time.Time, bool) { return g.stop.Deadline() }

func (g graceContext) Err() error {
	err := g.Context.Err()
	if err != nil && g.stop.Err() != nil {
		return g.stop.Err()
	}
	return err
}

// stopWatch counts the attempts on the wire of a submission (see submitting), and knows when its
// caller stopped.
type stopWatch struct {
	stop context.Context // the caller's context: its end is the stop

	mu      sync.Mutex
	onWire  int           // attempts written or being written, answer not yet read
	changed chan struct{} // closed, and replaced, whenever onWire drops
}

type stopWatchKey struct{}

func stopWatchOf(ctx context.Context) *stopWatch {
	w, _ := ctx.Value(stopWatchKey{}).(*stopWatch)
	return w
}

// stopped reports whether ctx is a submission context whose caller stopped.
func stopped(ctx context.Context) bool {
	w := stopWatchOf(ctx)
	return w != nil && w.stop.Err() != nil
}

// endOnceAnswered, run at the stop, cancels the submissions' context once no attempt is on
// the wire, or grace later.
func (w *stopWatch) endOnceAnswered(submitCtx context.Context, cancel context.CancelFunc, grace time.Duration) {
	timer := time.NewTimer(grace)
	defer timer.Stop()
	for {
		w.mu.Lock()
		n, changed := w.onWire, w.changed
		w.mu.Unlock()
		if n == 0 {
			cancel()
			return
		}
		select {
		case <-changed:
		case <-timer.C:
			cancel()
			return
		case <-submitCtx.Done():
			return
		}
	}
}

// depart counts an attempt about to be written; false once the caller stopped: the attempt
// must not start. Both read the stop under one lock, so an attempt either is counted before
// endOnceAnswered looks, or sees the stop.
func (w *stopWatch) depart() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stop.Err() != nil {
		return false
	}
	w.onWire++
	return true
}

// arrive uncounts an attempt whose answer was read, or that failed.
func (w *stopWatch) arrive() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.onWire--
	close(w.changed)
	w.changed = make(chan struct{})
}

// untilStop is ctx, ended early at the stop of the submissions it carries (if any): a request
// held before it leaves (by the outage gate, the departures) is given up at the stop, not at the
// end of the grace that attempts already on the wire have.
func untilStop(ctx context.Context) (context.Context, context.CancelFunc) {
	w := stopWatchOf(ctx)
	if w == nil {
		return ctx, func() {}
	}
	held, cancel := context.WithCancelCause(ctx)
	unhook := context.AfterFunc(w.stop, func() { cancel(ErrStopped) })
	return held, func() {
		unhook()
		cancel(nil)
	}
}

// watchingStop is base, with each attempt of a submission (see submitting) passing the
// stop watch (stopWatchTransport); other requests are sent with base as it is.
func watchingStop(ctx context.Context, base *http.Client) *http.Client {
	if stopWatchOf(ctx) == nil {
		return base
	}
	watched := *base
	watched.Transport = stopWatchTransport{next: orDefaultTransport(base.Transport)}
	return &watched
}

// stopWatchTransport refuses an attempt of a submission whose caller stopped, before it is
// written, and counts the others on the wire until their answer's body is closed.
type stopWatchTransport struct{ next http.RoundTripper }

func (t stopWatchTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	w := stopWatchOf(req.Context())
	if w == nil {
		return t.next.RoundTrip(req)
	}
	if !w.depart() {
		if req.Body != nil {
			_ = req.Body.Close()
		}
		return nil, &NotSentError{Operation: "submission stopped", URL: redactLink(req.URL.String()), Cause: ErrStopped}
	}
	resp, err := t.next.RoundTrip(req)
	if err != nil {
		w.arrive()
		return nil, err
	}
	resp.Body = &arriveOnClose{ReadCloser: resp.Body, arrive: sync.OnceFunc(w.arrive)}
	return resp, nil
}

// arriveOnClose is an answer's body that uncounts its attempt when closed.
type arriveOnClose struct {
	io.ReadCloser
	arrive func()
}

func (b *arriveOnClose) Close() error {
	defer b.arrive()
	return b.ReadCloser.Close()
}

// endRetriesAtStop is check, except that no attempt follows once the caller of a submission
// stopped (check still sees the last answer or failure, to keep what it learns of the outcome).
// The call then ends as at its deadline, with errStoppedBeforeResend: what the service last said
// decides the outcome. A "come back later" (429: nothing ran) is then a submission declined, not
// one refused for good, and an answer that settles nothing is an unknown outcome.
func endRetriesAtStop(check retryablehttp.CheckRetry) retryablehttp.CheckRetry {
	return func(ctx context.Context, resp *http.Response, err error) (bool, error) {
		retry, cerr := check(ctx, resp, err)
		if retry && stopped(ctx) {
			if cerr == nil {
				cerr = errStoppedBeforeResend
			}
			return false, cerr
		}
		return retry, cerr
	}
}

// errStoppedBeforeResend ends a call whose caller stopped when another attempt was due.
var errStoppedBeforeResend = errors.New("stopped (Terraform was interrupted) before the next attempt")
