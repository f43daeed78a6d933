package client

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"hash"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// A download rides out transient failures until its context's deadline, as a wait does: an
// attempt that fails for a transient reason (transientFailure: a refused or reset connection, a
// timeout, 408, 429, 500, 502, 503, 504, a body cut short or stalled) is followed by another, as
// the service's Retry-After asks, else after a backoff growing with jitter up to the client's
// largest wait, each attempt held while the client's waits are held (the service's rate limit,
// its outage gate). Each attempt is one request: the download, not the HTTP client, retries.
//
// An attempt after some bytes were written asks only for the rest (Range: bytes=N-). A 206 whose
// Content-Range starts at byte N continues the content. A 200 (a server that ignores Range) is
// the whole content again, read from its start: its first N bytes are checked against the ones
// already written (a SHA-256 of them, kept as they were written) and dropped, so the writer gets
// every byte once, in order, and never has to be rewound; content that differs ends the
// download. A 416 is answered by one attempt for the whole content, at once.
//
// What is not transient ends the download at once: 401, 403, 404, 410, any other 4xx, a body
// over its bounds, content that changed, a writer that failed (its error is the writer's, not
// the server's: a bucket that failed is not the service being down). Memory stays bounded: the
// bytes go to the writer as they arrive.

// downloadSource gives each attempt of a download its request.
type downloadSource interface {
	// request returns the request of the next attempt (reading, for an asset, its record for a
	// freshly signed URL).
	request(ctx context.Context) (call, error)
	// retryNow is told every failed attempt and reports whether it is worth one more at once,
	// outside the backoff (a signed URL that may have expired).
	retryNow(err error) bool
	// readsRecord reports whether each attempt reads a record on the service first.
	readsRecord() bool
}

// fixedSource asks the same URL on every attempt: a URL the caller gave (it cannot be signed
// anew here), or the v1 view route, whose redirect is signed anew on every request.
type fixedSource struct{ cl call }

func (s fixedSource) request(context.Context) (call, error) { return s.cl, nil }
func (fixedSource) retryNow(error) bool                     { return false }
func (fixedSource) readsRecord() bool                       { return false }

// assetSource reads the asset's record before every attempt but the first (whose record the
// caller just read): a signed URL is a credential that expires, so it is used at once and never
// kept for a later attempt.
type assetSource struct {
	c        *Client
	rec      *Asset // the record of the attempt under way
	size     int64  // the size the first record declared
	used     bool   // rec's URL served an attempt
	readErr  bool   // the last attempt failed reading the record
	resigned bool   // the last attempt was the one more after a 403
}

func (s *assetSource) request(ctx context.Context) (call, error) {
	s.readErr = false
	if s.used {
		rec, err := s.c.GetAsset(ctx, s.rec.ID)
		if err != nil {
			s.readErr = true
			return call{}, err
		}
		if rec.SizeBytes != s.size {
			return call{}, fmt.Errorf("asset %s now declares %d bytes, %d when the download began: its content changed", rec.ID, rec.SizeBytes, s.size)
		}
		s.rec = rec
	}
	s.used = true
	if s.rec.URL == "" {
		return call{}, fmt.Errorf("asset %s: the service gave no url to download it from", s.rec.ID)
	}
	return s.c.downloadCall(s.rec.URL)
}

// retryNow: storage answers 403 to a signed URL that expired (its lifetime starts when it is
// signed, and the service does not say how long it is). One more attempt, with a URL signed
// now, tells that from a refusal; a second 403 in a row is one. A 403 to the record itself is
// a refusal.
func (s *assetSource) retryNow(err error) bool {
	again := statusOf(err) == http.StatusForbidden && !s.readErr && !s.resigned
	s.resigned = again
	return again
}

func (*assetSource) readsRecord() bool { return true }

// downloadCall is the request for the bytes at rawURL. Credentials go only to the service's own
// origin; a signed storage URL on another host carries its own authorization and gets none of
// ours.
func (c *Client) downloadCall(rawURL string) (call, error) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return call{}, fmt.Errorf("download: %q is not an http(s) URL", redactLink(rawURL))
	}
	cred := credNone
	if origin(u) == origin(c.endpoint) {
		cred = credBearerKey
	}
	return call{op: "download", method: http.MethodGet, url: rawURL, cred: cred,
		header: downloadHeader(), policy: retryIdempotent, stream: true}, nil
}

// download runs the attempts of one download from src into w, within lim.
func (c *Client) download(ctx context.Context, src downloadSource, w io.Writer, lim DownloadLimits) (*Download, error) {
	d := &resumable{c: c, lim: lim, sink: &prefixSink{w: w, sum: sha256.New()}}
	share := waitShare{c}
	var streak failureStreak // transient failures in a row
	for {
		ticket, err := holdForShare(ctx, share)
		if err != nil {
			return nil, rideOutEnded(err, streak)
		}
		d.answered, ticket.departed = c.departures.answerOnce(ticket), false
		got, reached, err := d.attempt(readOnce(ctx), src)
		d.answered(err)
		outcome, retryAfter := reached.outcome(err)
		c.report(ticket, outcome, retryAfter)
		if err == nil {
			return got, nil
		}
		again := src.retryNow(err) || d.retryNow(err)
		switch {
		case ctx.Err() != nil:
			return nil, rideOutEnded(err, streak)
		case d.sink.failed(err):
			return nil, err
		case again:
			continue
		case !transientFailure(err):
			return nil, err
		}
		streak.add(err, time.Now())
		c.log.Debug(ctx, "download failed; trying again", map[string]any{"failures": streak.n, "bytes": d.sink.n, "error": err.Error()})
		if err := sleepUnlessDone(ctx, share.rideOut(streak.n, err)); err != nil {
			return nil, rideOutEnded(err, streak)
		}
	}
}

// holdForShare waits while the client's waits are held (the service's rate limit, the outage
// gate) and returns the ticket the gate handed the request.
func holdForShare(ctx context.Context, s readShare) (gateTicket, error) {
	return awaitRelease(ctx, func() (time.Duration, <-chan struct{}, gateTicket) { return s.readTurn(ctx) })
}

// resumable is the state of one download across its attempts.
type resumable struct {
	c       *Client
	lim     DownloadLimits
	sink    *prefixSink
	noRange bool // the server refused a range (416): ask for the whole content
	// answered tells the client's departures that the attempt's request was answered (or
	// failed): once its headers are in, a body that takes its time holds no other request.
	answered func(err error)
}

// attempt runs one attempt and says which hosts it reached.
func (d *resumable) attempt(ctx context.Context, src downloadSource) (*Download, attemptReach, error) {
	cl, err := src.request(ctx)
	if err != nil { // the record read failed: the service's own answer or failure
		return nil, attemptReach{endedOnService: true}, err
	}
	ctx, followed := followingRedirects(ctx)
	got, err := d.stream(ctx, cl)
	service := origin(d.c.endpoint)
	asked, _ := url.Parse(cl.url) // parsed by request already
	last := asked
	if to := followed.lastURL(); to != nil {
		last = to
	}
	return got, attemptReach{
		endedOnService: origin(last) == service,
		// A record read, or a redirect the service answered, before the content.
		serviceAnswered: src.readsRecord() || (last != asked && origin(asked) == service),
	}, err
}

// attemptReach is where one attempt went: whether it ended on the service's origin (its answer
// or failure is the service's), and whether the service answered it something on the way.
type attemptReach struct {
	endedOnService, serviceAnswered bool
}

// outcome is what an attempt tells the outage gate: a failure on another host (a signed storage
// URL, a redirect to one) says nothing of the service, but a record read or a redirect the
// service answered before it says the service is up.
func (r attemptReach) outcome(err error) (gateOutcome, time.Duration) {
	switch {
	case r.endedOnService:
		return readOutcome(err)
	case r.serviceAnswered:
		return gateAnswered, 0
	}
	return gateNothing, 0
}

// retryNow reports a 416 to a range: the next attempt asks for the whole content, at once.
func (d *resumable) retryNow(err error) bool {
	if statusOf(err) == http.StatusRequestedRangeNotSatisfiable && d.sink.n > 0 && !d.noRange {
		d.noRange = true
		return true
	}
	return false
}

// stream runs cl and copies its body into the sink, from the first byte not yet written.
func (d *resumable) stream(ctx context.Context, cl call) (*Download, error) {
	offset := d.sink.n
	if offset > 0 && !d.noRange {
		cl.header = cl.header.Clone()
		cl.header.Set("Range", "bytes="+strconv.FormatInt(offset, 10)+"-")
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	resp, err := d.c.do(ctx, cl)
	d.answered(err)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	fail := func(format string, args ...any) error {
		return fmt.Errorf("%s %s: %w (request id %q)", cl.op, redactLink(cl.url), fmt.Errorf(format, args...), requestIDOf(resp.Header))
	}
	skip, total, err := servedFrom(resp, offset)
	if err != nil {
		return nil, fail("%w", err)
	}
	if err := d.lim.checkLength(total); err != nil {
		return nil, fail("%w", err)
	}
	body := io.Reader(resp.Body)
	if d.lim.StallTimeout > 0 {
		wd := newStallWatchdog(d.lim.StallTimeout, cancel)
		defer wd.stop()
		body = wd.reader(resp.Body)
	}
	stalled := func(err error) error {
		if cause := context.Cause(ctx); errors.Is(cause, ErrDownloadStalled) {
			return cause
		}
		return err
	}
	if skip > 0 {
		if err := d.sink.matchPrefix(body, skip); err != nil {
			return nil, fail("answered 200 (the whole content) to a range request: %w", stalled(err))
		}
	}
	n, err := io.Copy(d.sink, io.LimitReader(body, d.lim.readBound()-offset))
	if err != nil {
		return nil, fail("after %d bytes: %w", offset+n, stalled(err))
	}
	if err := d.lim.checkRead(d.sink.n, total); err != nil {
		return nil, fail("%w", err)
	}
	return &Download{ContentType: resp.Header.Get("Content-Type"), Size: d.sink.n, RequestID: requestIDOf(resp.Header)}, nil
}

// servedFrom reads where the body of resp starts, for a request that asked for the content from
// byte offset: skip is how many of its first bytes are already written (a 200 starts at byte 0),
// total the content's whole length (-1: not said).
func servedFrom(resp *http.Response, offset int64) (skip, total int64, err error) {
	if resp.StatusCode != http.StatusPartialContent {
		return offset, resp.ContentLength, nil
	}
	start, end, total, ok := parseContentRange(resp.Header.Get("Content-Range"))
	switch {
	case !ok:
		return 0, 0, fmt.Errorf("answered 206 with Content-Range %q, which is not a single byte range", echoHeader(resp.Header.Get("Content-Range")))
	case start != offset:
		return 0, 0, fmt.Errorf("answered 206 for bytes from %d, not from byte %d as asked", start, offset)
	case resp.ContentLength >= 0 && resp.ContentLength != end-start+1:
		return 0, 0, fmt.Errorf("answered 206 for bytes %d-%d with a Content-Length of %d", start, end, resp.ContentLength)
	case total < 0:
		return 0, end + 1, nil // the range runs to the content's end, which it does not name
	}
	return 0, total, nil
}

// parseContentRange reads "bytes first-last/complete" (complete may be "*": -1).
func parseContentRange(v string) (first, last, complete int64, ok bool) {
	spec, found := strings.CutPrefix(strings.TrimSpace(v), "bytes ")
	rng, size, found2 := strings.Cut(spec, "/")
	a, b, found3 := strings.Cut(rng, "-")
	if !found || !found2 || !found3 {
		return 0, 0, 0, false
	}
	first, err1 := strconv.ParseInt(a, 10, 64)
	last, err2 := strconv.ParseInt(b, 10, 64)
	if err1 != nil || err2 != nil || first < 0 || last < first {
		return 0, 0, 0, false
	}
	complete = -1
	if size != "*" {
		n, err := strconv.ParseInt(size, 10, 64)
		if err != nil || n <= last {
			return 0, 0, 0, false
		}
		complete = n
	}
	return first, last, complete, true
}

// prefixSink is the caller's writer as a download sees it: it counts the bytes written, keeps
// their SHA-256 (so a server that serves the whole content again can be checked against them),
// and marks the writer's own failures, which no other attempt can mend.
type prefixSink struct {
	w   io.Writer
	n   int64
	sum hash.Hash
	err error // the writer's failure
}

func (s *prefixSink) Write(p []byte) (int, error) {
	n, err := s.w.Write(p)
	s.sum.Write(p[:n])
	s.n += int64(n)
	if err == nil && n < len(p) {
		err = io.ErrShortWrite
	}
	if err != nil {
		s.err = &writeFailedError{err: err}
		return n, s.err
	}
	return n, nil
}

// failed reports whether err is the writer's failure.
func (s *prefixSink) failed(err error) bool {
	var wf *writeFailedError
	return errors.As(err, &wf)
}

// matchPrefix reads the first n bytes of body, which must be those already written.
func (s *prefixSink) matchPrefix(body io.Reader, n int64) error {
	h := sha256.New()
	if _, err := io.CopyN(h, body, n); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF // cut before the bytes already written: another attempt may do better
		}
		return fmt.Errorf("reading the %d bytes already written again: %w", n, err)
	}
	if !bytes.Equal(h.Sum(nil), s.sum.Sum(nil)) {
		return fmt.Errorf("%w: its first %d bytes differ from the ones already written", ErrContentChanged, n)
	}
	return nil
}

// ErrContentChanged is wrapped by a download whose content, served again, was not the content
// already written.
var ErrContentChanged = errors.New("the content changed during the download")

// writeFailedError is the failure of the writer a download writes to.
type writeFailedError struct{ err error }

func (e *writeFailedError) Error() string { return "writing the download: " + e.err.Error() }
func (e *writeFailedError) Unwrap() error { return e.err }
