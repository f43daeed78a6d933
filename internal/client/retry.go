package client

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/hashicorp/go-retryablehttp"
)

// The retry budget, one number per operation (Config.MaxRetries is the provider's max_retries,
// default 5), and the only layer of retries there is:
//
//   - a read, a cancel, a delete, a download (retryIdempotent): at most 1 + MaxRetries attempts;
//   - a v2 job submission (retryJobSubmit): resent under its single-use key after every
//     transient failure (a refused or reset connection, 408, 429, 500, 502, 503, 504) as the
//     Retry-After asks, else with backoff, until answered or the context's deadline
//     (resendSubmission), each attempt through the client's outage gate;
//   - a router call or queued submission (retryRouterInvoke): 1 + MaxRetries attempts, except the
//     answers that say the run goes on, resent until the deadline;
//   - a write without a key (retryNotApplied): 1 + MaxRetries attempts, made only when the request
//     never left or the service declined it with a Retry-After;
//   - an event stream (retryNever): one attempt per connection; a wait redials a stream that
//     ended early at most maxEventRedials times.
//
// A wait (WaitJob, AwaitModelResult, WaitPrompt) sends each read once and rides out transient
// failures itself until its deadline (waitLoop), paced with the client's other waits. go-retryablehttp is
// set per operation in retryingClient: CheckRetry and RetryMax from the policy; Backoff the same
// for every policy (Retry-After honoured, else exponential with full jitter), since how long to
// wait does not depend on whether resending is safe; ErrorHandler passes the last answer through
// for every policy, so the caller decodes the service's error.

// retryPolicy decides, for one operation, which failures are worth another attempt. It is chosen
// per operation because safety differs: a GET can always be resent; a v2 submission only where the
// service released its single-use key (a 429) or the request never left.
type retryPolicy int

const (
	// retryIdempotent: reads, and operations the service or our assumptions make idempotent
	// (cancel). Connection errors, 408, 429, 500, 502, 503, 504 are retried.
	retryIdempotent retryPolicy = iota
	// retryJobSubmit: POST /api/v2/jobs, under its single-use Idempotency-Key: resent under the
	// same key after every transient failure until answered or the context ends
	// (resendSubmission).
	retryJobSubmit
	// retryNever: one attempt.
	retryNever
	// retryRouterInvoke: the router's synchronous call and queued submission. The router's
	// Idempotency-Key records a call and replays its outcome to the same key and body, so the
	// same key and body are resent on the answers routerInvokeRetryable lists, and when no
	// response came back. The client never chooses a new key: that is the caller's decision
	// alone. The answers that say the run goes on (routerStillRunning) are resent until the
	// context's deadline, not max_retries times (untilDeadlineOn): giving up while the router
	// still holds the run would leave the caller to start a second, billable one.
	retryRouterInvoke
	// retryNotApplied: writes without an idempotency key that are not idempotent in general:
	// POST /api/prompt (a resend could run the workflow twice), an upload without overwrite (a
	// resend could store a second copy under a new name), and the registry's claim-my-node and
	// create translations (a claim resent after it took effect would be answered "already
	// claimed" and hide the success; translations posted twice may not be a no-op either). So
	// another attempt is made only when the request never reached the service, or the service
	// answered 429 or 503 WITH a Retry-After header: that is the service saying "not now, come
	// back", which does not process the request; the client waits as long as Retry-After asks.
	// A 5xx without Retry-After, or a broken connection after sending, is an unknown outcome,
	// reported, never resent. (Deleting a node uses retryIdempotent: deleting
	// twice ends the same way, and a 404 on a retry is success.)
	retryNotApplied
)

// checkRetry is the CheckRetry of policy p. A Retry-After above the cap ends the retries: waiting
// less than asked would poll faster than the service allows, and waiting longer is not our call.
func (c *Client) checkRetry(p retryPolicy) retryablehttp.CheckRetry {
	return func(ctx context.Context, resp *http.Response, err error) (bool, error) {
		if ctx.Err() != nil {
			return false, ctx.Err()
		}
		if p == retryNever {
			return false, nil
		}
		if err != nil {
			if p == retryNotApplied {
				return (neverSent(err) || requestUnwritten(ctx)) && transientTransportError(err), nil
			}
			return transientTransportError(err), nil
		}
		wait, hasWait := parseRetryAfter(resp.Header.Get("Retry-After"))
		if hasWait && p == retryIdempotent && resp.StatusCode == http.StatusTooManyRequests {
			c.holdReads(wait) // a rate limit: every wait of the client holds its reads
		}
		if hasWait && wait > c.maxRetryAfter {
			return false, nil
		}
		switch p {
		case retryRouterInvoke:
			return routerInvokeRetryable(resp), nil
		case retryNotApplied:
			return declinedForLater(resp.StatusCode, resp.Header), nil
		default:
			return transientStatus(resp.StatusCode), nil
		}
	}
}

// declinedForLater reports whether an answer is the service declining a request for now: a 429 or
// 503 WITH a Retry-After header. The request was not processed, so resending it cannot do the work
// twice, and a failure that ends on such an answer is not an unknown outcome.
func declinedForLater(status int, h http.Header) bool {
	if status != http.StatusTooManyRequests && status != http.StatusServiceUnavailable {
		return false
	}
	_, ok := parseRetryAfter(h.Get("Retry-After"))
	return ok
}

// notApplied reports whether err is a final answer of the kind declinedForLater describes (the
// retries ran out, or the Retry-After was above the cap).
func notApplied(err error) bool {
	var apiErr *APIError
	return errors.As(err, &apiErr) && declinedForLater(apiErr.StatusCode, apiErr.Header)
}

// routerInvokeRetryable is the one source of the router's retry table for a response (the
// retryRouterInvoke policy): resend the same key and body on an answer that says the run goes on
// (routerStillRunning: 409 concurrency_limit_exceeded, 504 deadline_exceeded with Retry-After),
// on 408, on 429 of either type and on every 5xx; never on anything else (400, 413, 422, a 409 of
// another type). An unknown X-Svc-Error-Type acts as internal_error, so an unknown 409 is not
// retried and an unknown 5xx is.
func routerInvokeRetryable(resp *http.Response) bool {
	code := resp.StatusCode
	return routerStillRunning(resp) ||
		code == http.StatusRequestTimeout || code == http.StatusTooManyRequests || code >= 500
}

// neverSent reports whether err shows the request cannot have reached the service: the
// connection was never established, or its TLS handshake failed verification (the request is
// written only after the handshake).
func neverSent(err error) bool {
	if isNotSent(err) || errors.Is(err, syscall.ECONNREFUSED) {
		return true
	}
	var verifyErr *tls.CertificateVerificationError
	if errors.As(err, &verifyErr) {
		return true
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		return dnsErr.IsTemporary || dnsErr.IsTimeout
	}
	var opErr *net.OpError
	return errors.As(err, &opErr) && opErr.Op == "dial"
}

// transientTransportError reports whether a transport error is worth another attempt. Certificate
// problems, bad URLs and redirect loops are not: they will fail the same way again.
func transientTransportError(err error) bool {
	var certErr *x509.UnknownAuthorityError
	var hostErr x509.HostnameError
	var invalidErr x509.CertificateInvalidError
	if errors.As(err, &certErr) || errors.As(err, &hostErr) || errors.As(err, &invalidErr) {
		return false
	}
	if _, refused := refusedRedirect(err); refused {
		return false // the same request would be redirected the same way
	}
	if proxyRefusedTunnel(err) {
		return false // the proxy would refuse it the same way
	}
	msg := err.Error()
	if plainHTTPAnswer(err) {
		return false // a TLS client against a plain-HTTP server: the scheme is wrong
	}
	for _, permanent := range []string{"unsupported protocol scheme", "stopped after", "invalid header", "certificate"} {
		if strings.Contains(msg, permanent) {
			return false
		}
	}
	return true
}

// proxyRefusedTunnel reports a proxy's refusal of the tunnel with a 4xx (403 Forbidden, 407
// Proxy Authentication Required...): net/http reports it as the bare text of that status.
func proxyRefusedTunnel(err error) bool {
	var urlErr *url.Error
	if !errors.As(err, &urlErr) || urlErr.Err == nil {
		return false
	}
	msg := urlErr.Err.Error()
	for code := 400; code < 500; code++ {
		if text := http.StatusText(code); text != "" && msg == text {
			return true
		}
	}
	return false
}

// backoff waits what Retry-After asks (it is below the cap, or checkRetry would have stopped),
// and otherwise grows exponentially with full jitter between min and max. Every wait has that
// floor: a Retry-After of 0 or a date already past, on an answer that refuses the request for
// now, still means "back off", not "now" (taken at its word, it made a tight loop of POSTs).
func backoff(minWait, maxWait time.Duration, attempt int, resp *http.Response) time.Duration {
	if resp != nil {
		if wait, ok := parseRetryAfter(resp.Header.Get("Retry-After")); ok && wait >= minWait {
			return wait
		}
	}
	return jitteredBackoff(minWait, maxWait, attempt)
}

func jitteredBackoff(minWait, maxWait time.Duration, attempt int) time.Duration {
	ceiling := minWait << min(attempt, 20)
	if ceiling <= 0 || ceiling > maxWait {
		ceiling = maxWait
	}
	if ceiling <= minWait {
		return minWait
	}
	return minWait + rand.N(ceiling-minWait)
}

// parseRetryAfter reads Retry-After as integer seconds (what the service sends) or an HTTP date (RFC 9110).
func parseRetryAfter(v string) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
		if secs < 0 {
			return 0, false
		}
		if secs > int64(24*time.Hour/time.Second) {
			secs = int64(24 * time.Hour / time.Second)
		}
		return time.Duration(secs) * time.Second, true
	}
	if t, err := http.ParseTime(v); err == nil {
		d := time.Until(t)
		if d < 0 {
			d = 0
		}
		return d, true
	}
	return 0, false
}

// untilDeadlineOn lets the answers comeBack marks be retried for as long as the operation's
// context allows, waiting each time as long as the service asks (up to the cap checkRetry
// enforces). They are the service saying "not now: the same request, later": a v2 job submit
// answered 429 (queue_full, deployment_not_ready: the key was released and nothing ran), or a
// router call whose run is still going (routerStillRunning). A busy queue or a long run can
// outlast a few retries, and giving up early would make the caller choose a new key. Every other
// retry still counts against max_retries. When the context would end before the wait the service
// asks for, it stops at once and hands that answer back, so the caller reports it rather than a
// bare deadline; last (when not nil) keeps each such answer, for the error when the context ends
// during a wait or an attempt instead. It is made per call, since it counts.
func (c *Client) untilDeadlineOn(comeBack func(*http.Response) bool, check retryablehttp.CheckRetry, last *comeBackAnswer) retryablehttp.CheckRetry {
	others := 0
	return func(ctx context.Context, resp *http.Response, err error) (bool, error) {
		retry, cerr := check(ctx, resp, err)
		// Another answer (or a failure other than the deadline ending an attempt) since the last
		// "come back" answer: that one is no longer what the service last said.
		if last != nil && ((err == nil && !comeBack(resp)) || (err != nil && ctx.Err() == nil)) {
			*last = comeBackAnswer{}
		}
		// The context ended during an attempt that may have reached the service: the last
		// answer no longer settles the outcome.
		if last != nil && err != nil && ctx.Err() != nil && !neverSent(err) {
			last.inFlight = true
		}
		if !retry {
			return false, cerr
		}
		if err != nil || !comeBack(resp) {
			if others++; others > c.maxRetries {
				return false, cerr
			}
			return true, cerr
		}
		if last != nil {
			*last = comeBackAnswer{status: resp.StatusCode, header: resp.Header.Clone(), code: peekErrorCode(resp), times: last.times + 1}
		}
		if deadline, ok := ctx.Deadline(); ok {
			if wait, ok := parseRetryAfter(resp.Header.Get("Retry-After")); ok && time.Until(deadline) < wait {
				return false, nil
			}
		}
		return true, cerr
	}
}

// attemptAnswerTime is the least time before the context's deadline that a resend of a "come
// back later" request starts with. One started later is likely cut off before its answer: the
// request may then have reached the service, and a submission the service's last answer had
// settled ("nothing ran") would become one whose outcome is unknown.
const attemptAnswerTime = 250 * time.Millisecond

// errTooLateForAnAttempt ends a "come back later" wait when the next attempt would start too
// close to the deadline (refuseAttemptTooLate). It is the deadline's doing, and says so to
// errors.Is(err, context.DeadlineExceeded).
var errTooLateForAnAttempt = tooLateError{}

type tooLateError struct{}

func (tooLateError) Error() string {
	return "context deadline exceeded: too little time was left for another attempt to be answered"
}

func (tooLateError) Is(target error) bool { return target == context.DeadlineExceeded }

// refuseAttemptTooLate is the PrepareRetry of the policies that resend "come back later"
// requests until the deadline (untilDeadlineOn): it stops before an attempt that would start
// less than attemptAnswerTime before the deadline.
func refuseAttemptTooLate(req *http.Request) error {
	if deadline, ok := req.Context().Deadline(); ok && time.Until(deadline) < attemptAnswerTime {
		return errTooLateForAnAttempt
	}
	return nil
}

// comeBackAnswer is what untilDeadlineOn keeps of the last "come back later" answer.
type comeBackAnswer struct {
	status   int
	header   http.Header
	code     string // the error code its body gave (v2 puts it there, not in a header)
	times    int    // how many such answers came in a row
	inFlight bool   // the context ended during a later attempt, which may have reached the service
	// attemptErr is the last attempt's transport failure (a submission's), named when the
	// context ends during the wait after it.
	attemptErr error
}

// waitEndedError is a context that ended while the client waited on (or resent after) an
// answer that said to come back later: the error keeps that answer, which the bare context
// error would lose.
type waitEndedError struct {
	err  error
	last comeBackAnswer
}

func (e *waitEndedError) Error() string {
	last := fmt.Sprintf("HTTP %d", e.last.status)
	if t := e.last.header.Get("X-Svc-Error-Type"); t != "" {
		last += " " + echoHeader(t)
	} else if e.last.code != "" {
		last += " " + echoHeader(e.last.code)
	}
	if id := e.last.header.Get("X-Svc-Request-Id"); id != "" {
		last += fmt.Sprintf(" (request id %s)", echoHeader(id))
	}
	last += ","
	if e.last.times > 1 {
		last += fmt.Sprintf(" the answer to %d attempts in a row,", e.last.times)
	}
	return fmt.Sprintf("%v; the last answer, %s said to send the same request again later", e.err, last)
}

// settled reports whether the answer it keeps settles the outcome: no attempt was on its way
// when the context ended, so the service's last word was the "come back later" answer.
func (e *waitEndedError) settled() bool { return !e.last.inFlight }

func (e *waitEndedError) Unwrap() error { return e.err }

// backoffOrDefault is the wait between attempts: backoff, unless a test replaced it to watch
// the waits without sleeping through them.
func (c *Client) backoffOrDefault() retryablehttp.Backoff {
	if c.backoffHook != nil {
		return c.backoffHook
	}
	return backoff
}

// pacedByTheGate is backoff for requests whose attempts pass the outage gate (gated): while the
// service is taken for down, the gate paces them (it holds each attempt until its probe finds the service
// back, and lets it go then), so the wait between attempts is the least one; a backoff grown
// through a long outage would otherwise keep a submission sleeping well after the service is
// back.
func (c *Client) pacedByTheGate(backoff retryablehttp.Backoff) retryablehttp.Backoff {
	return func(minWait, maxWait time.Duration, attempt int, resp *http.Response) time.Duration {
		wait := backoff(minWait, maxWait, attempt, resp)
		if c.gate.serviceIsDown() {
			return minWait
		}
		return wait
	}
}

// resendSubmission is the CheckRetry of a v2 job submission. Its Idempotency-Key is single-use:
// the service runs the first request presenting it and refuses every later one with 422
// idempotency_key_reuse, never running it again. So the same request under the same key is
// resent after every transient failure until it is answered or the context ends: one that never
// arrived (a refused connection), one refused for now (429: the key released, nothing ran), and
// one whose answer was lost (a reset or timeout after sending, 408, 500, 502, 503, 504): that one
// either never reached the service, and the resend runs the workflow once, or did, and the resend
// is refused as a reuse; only then is the outcome unknown. answerLost (nil: the request carries
// no key) is set at the first answer that may have been lost; without a key such a request is
// never resent (it could run twice). last keeps each transient answer, for the error when the
// context ends, and whether an attempt may have arrived meanwhile (inFlight).
func (c *Client) resendSubmission(last *comeBackAnswer, answerLost *bool) retryablehttp.CheckRetry {
	if last == nil {
		last = &comeBackAnswer{}
	}
	unreached := 0
	return func(ctx context.Context, resp *http.Response, err error) (bool, error) {
		mayHaveArrived := submissionMayHaveArrived(ctx, resp, err)
		if mayHaveArrived && answerLost != nil {
			*answerLost = true
		}
		switch {
		case err == nil && transientStatus(resp.StatusCode):
			*last = comeBackAnswer{status: resp.StatusCode, header: resp.Header.Clone(), code: peekErrorCode(resp), times: last.times + 1}
		case err == nil:
			*last = comeBackAnswer{} // another answer
		case ctx.Err() == nil:
			*last = comeBackAnswer{attemptErr: err} // a failure other than the context's end
		}
		if mayHaveArrived || (answerLost != nil && *answerLost) {
			last.inFlight = true // the service's last word no longer settles the outcome
		}
		if ctx.Err() != nil {
			return false, ctx.Err()
		}
		if mayHaveArrived && answerLost == nil {
			return false, nil
		}
		if err != nil {
			if !mayHaveArrived && (answerLost == nil || !*answerLost) && !c.gate.everAnswered() {
				unreached++
			}
			return c.resendAfterFailure(err, unreached), nil
		}
		return transientStatus(resp.StatusCode) && c.resendAfterAnswer(ctx, resp), nil
	}
}

// resendAfterFailure: a submission that failed in transport is resent when the failure is
// transient. A service that has never answered this client and refuses the connection is more
// likely a wrong endpoint than an outage: such a submission, which never left, is tried
// 1 + max_retries times (unreached counts them) and reported as not sent, rather than held until
// the create timeout. Once the service has answered, a refusal is an outage, ridden out.
func (c *Client) resendAfterFailure(err error, unreached int) bool {
	return unreached <= c.maxRetries && transientTransportError(err)
}

// resendAfterAnswer: a transient answer is resent after the wait it asks for, unless that wait is
// longer than the client allows (waiting less would send faster than the service allows) or
// than the time left (the answer is handed back rather than a bare deadline).
func (c *Client) resendAfterAnswer(ctx context.Context, resp *http.Response) bool {
	wait, ok := parseRetryAfter(resp.Header.Get("Retry-After"))
	if !ok {
		return true
	}
	if wait > c.maxRetryAfter {
		return false
	}
	if deadline, ok := ctx.Deadline(); ok && time.Until(deadline) < wait {
		return false
	}
	return true
}

// submissionMayHaveArrived reports whether an attempt of a submission may have reached the
// service without its answer coming back: a transport failure after the request was written,
// or an answer that does not settle it (408, 500, 502, 503, 504). A 429 releases the key:
// nothing ran.
func submissionMayHaveArrived(ctx context.Context, resp *http.Response, err error) bool {
	if refused, ok := refusedRedirect(err); ok {
		return !refused.notProcessed()
	}
	if err != nil {
		return !neverSent(err) && !requestUnwritten(ctx)
	}
	return resp.StatusCode != http.StatusTooManyRequests && transientStatus(resp.StatusCode)
}

// gated is base with every attempt let through the client's outage gate and departures
// (gatedTransport).
func (c *Client) gated(base *http.Client) *http.Client {
	return &http.Client{
		Transport:     gatedTransport{next: orDefaultTransport(base.Transport), c: c},
		Timeout:       base.Timeout,
		CheckRedirect: base.CheckRedirect,
		Jar:           base.Jar,
	}
}

func orDefaultTransport(rt http.RoundTripper) http.RoundTripper {
	if rt == nil {
		return http.DefaultTransport
	}
	return rt
}

// routerStillRunning reports the router's answers that say the run under the key goes on and
// the same request with the same key must come back later:
// 409 concurrency_limit_exceeded (the original call for the key still runs) and 504
// deadline_exceeded with Retry-After (the router keeps a handle to the accepted work; the resend
// collects it). Both 429 types are refusals before dispatch: nothing runs, so they stay bounded
// by max_retries like any other retry.
func routerStillRunning(resp *http.Response) bool {
	return routerStillRunningAnswer(resp.StatusCode, resp.Header)
}

func routerStillRunningAnswer(status int, h http.Header) bool {
	class := RouterErrorClass(h.Get("X-Svc-Error-Type"))
	switch status {
	case http.StatusConflict:
		return class == RouterErrConcurrencyLimit
	case http.StatusGatewayTimeout:
		_, hasRetryAfter := parseRetryAfter(h.Get("Retry-After"))
		return class == RouterErrDeadlineExceeded && hasRetryAfter
	}
	return false
}

// retryingClient builds the go-retryablehttp client for one operation. last, when not nil,
// receives the last "come back later" answer of policies that wait on them until the deadline.
func (c *Client) retryingClient(p retryPolicy, base *http.Client, last *comeBackAnswer, answerLost *bool) *retryablehttp.Client {
	check, retryMax, wait := c.checkRetry(p), c.maxRetries, c.backoffOrDefault()
	switch p {
	case retryJobSubmit:
		check, retryMax = c.resendSubmission(last, answerLost), math.MaxInt32
		base, wait = c.gated(base), c.pacedByTheGate(wait)
	case retryRouterInvoke:
		check, retryMax = c.untilDeadlineOn(routerStillRunning, check, last), math.MaxInt32
	}
	check = endRetriesAtStop(check)
	var prepare retryablehttp.PrepareRetry
	if p == retryJobSubmit || p == retryRouterInvoke {
		prepare = refuseAttemptTooLate
	}
	return &retryablehttp.Client{
		HTTPClient:   base,
		PrepareRetry: prepare,
		Logger:       nil, // logging goes through the hooks below, which redact
		RetryWaitMin: c.retryWaitMin,
		RetryWaitMax: c.retryWaitMax,
		RetryMax:     retryMax,
		CheckRetry:   check,
		Backoff:      wait,
		// Hand back the last response or error as it is, so the caller decodes the service's
		// error rather than seeing "giving up after N attempts".
		ErrorHandler: retryablehttp.PassthroughErrorHandler,
		RequestLogHook: func(_ retryablehttp.Logger, req *http.Request, attempt int) {
			fields := map[string]any{"method": req.Method, "url": redactURL(req.URL), "attempt": attempt + 1}
			if attempt > 0 {
				c.log.Debug(req.Context(), "retrying request", fields)
				return
			}
			c.log.Trace(req.Context(), "sending request", fields)
		},
		ResponseLogHook: func(_ retryablehttp.Logger, resp *http.Response) {
			c.log.Trace(resp.Request.Context(), "received response", map[string]any{
				"method":     resp.Request.Method,
				"url":        redactURL(resp.Request.URL),
				"status":     resp.StatusCode,
				"request_id": requestIDOf(resp.Header),
			})
		},
	}
}
