package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"time"
)

// Asset is the record of GET /api/v2/assets/{id}: a fresh, signed url for the asset's bytes.
type Asset struct {
	ID           string  `json:"id"`
	Name         string  `json:"name"`
	ContentType  string  `json:"content_type"`
	SizeBytes    int64   `json:"size_bytes"`
	Hash         *string `json:"hash"`
	URL          string  `json:"url"`
	URLExpiresAt string  `json:"url_expires_at"`
	JobID        *string `json:"job_id,omitempty"`
}

// GetAsset reads an asset record, whose url is freshly signed.
func (c *Client) GetAsset(ctx context.Context, id string) (*Asset, error) {
	seg, err := pathSegment("asset id", id)
	if err != nil {
		return nil, err
	}
	var a Asset
	resp, err := c.doJSON(ctx, call{
		op: "read asset", method: http.MethodGet, url: joinPath(c.endpoint, "api", "v2", "assets", seg),
		cred: credBearerKey, policy: retryIdempotent,
	}, &a)
	if err != nil {
		return nil, err
	}
	if a.URL != "" {
		if a.URL, err = resolveAnyOrigin(resp.url, a.URL); err != nil {
			return nil, fmt.Errorf("read asset %s: bad url: %w", id, err)
		}
	}
	return &a, nil
}

// Download describes a completed download.
type Download struct {
	ContentType string
	Size        int64
	RequestID   string
}

// DownloadLimits bound one download. The zero value bounds nothing beyond Content-Length.
type DownloadLimits struct {
	// MaxBytes refuses a body longer than this (0: no absolute bound).
	MaxBytes int64
	// DeclaredSize, when set, is the size the service's record gives: a body of any other length
	// is refused, and reading stops one byte past it.
	DeclaredSize *int64
	// StallTimeout aborts a body from which no byte came for this long (0: never).
	StallTimeout time.Duration
}

var (
	// ErrDownloadStalled is wrapped by a download that got no byte for DownloadLimits.StallTimeout.
	ErrDownloadStalled = errors.New("no data arrived within the stall timeout")
	// ErrDownloadTooLarge is wrapped by a download whose body is, or says it is, longer than allowed.
	ErrDownloadTooLarge = errors.New("body longer than allowed")
)

// DownloadTo streams the bytes at rawURL into w, within lim, riding out transient failures
// until ctx's deadline and resuming with a range request where the server allows one (see
// download). Every attempt asks rawURL: a URL given by the caller cannot be signed anew here.
// Credentials go only to the service's own origin; a signed storage URL on another host carries
// its own authorization and gets none of ours.
func (c *Client) DownloadTo(ctx context.Context, rawURL string, w io.Writer, lim DownloadLimits) (*Download, error) {
	cl, err := c.downloadCall(rawURL)
	if err != nil {
		return nil, err
	}
	return c.download(ctx, fixedSource{cl}, w, lim)
}

// DownloadAsset streams the bytes of the asset whose record rec was just read into w, within
// lim (DeclaredSize is the record's size when lim leaves it unset), riding out transient
// failures until ctx's deadline and resuming with a range request where the server allows one
// (see download). The first attempt uses rec's signed URL; every later one reads the record
// again for a URL signed then: a signed URL is a credential that expires, used at once and never
// kept. It returns the record of the last attempt, whose hash (computed lazily by the service)
// may be known when the first record's was not.
func (c *Client) DownloadAsset(ctx context.Context, rec *Asset, w io.Writer, lim DownloadLimits) (*Download, *Asset, error) {
	if lim.DeclaredSize == nil {
		size := rec.SizeBytes
		lim.DeclaredSize = &size
	}
	src := &assetSource{c: c, rec: rec, size: rec.SizeBytes}
	got, err := c.download(ctx, src, w, lim)
	return got, src.rec, err
}

// GetAssetRidingOut reads an asset record as a download's attempts read it: a transient failure
// (a refused or reset connection, 408, 429, 5xx) is read again, held with the client's waits and
// backing off as Retry-After asks or with jitter, until ctx ends.
func (c *Client) GetAssetRidingOut(ctx context.Context, id string) (*Asset, error) {
	return readRidingOut(ctx, c, func(ctx context.Context) (*Asset, error) { return c.GetAsset(ctx, id) })
}

// downloadHeader asks for the stored bytes as they are. With Accept-Encoding set explicitly,
// net/http neither asks for gzip on its own nor inflates the answer, so a body served with
// Content-Encoding: gzip is stored exactly as served (and its length and hash are the served
// bytes'): a small compressed body can never become a huge file.
func downloadHeader() http.Header {
	return http.Header{"Accept": {"*/*"}, "Accept-Encoding": {"identity"}}
}

// checkLength refuses, before any byte is read, a Content-Length over the bounds.
func (lim DownloadLimits) checkLength(contentLength int64) error {
	switch {
	case contentLength < 0:
		return nil
	case lim.MaxBytes > 0 && contentLength > lim.MaxBytes:
		return fmt.Errorf("%w: Content-Length %d is over the %d bytes allowed", ErrDownloadTooLarge, contentLength, lim.MaxBytes)
	case lim.DeclaredSize != nil && contentLength != *lim.DeclaredSize:
		return fmt.Errorf("Content-Length %d differs from the %d bytes the asset record declares", contentLength, *lim.DeclaredSize)
	}
	return nil
}

// readBound is how many bytes are read at most: one past the smallest bound, so that a longer
// body is noticed without reading on.
func (lim DownloadLimits) readBound() int64 {
	bound := int64(math.MaxInt64 - 1)
	if lim.MaxBytes > 0 {
		bound = lim.MaxBytes
	}
	if lim.DeclaredSize != nil {
		bound = min(bound, *lim.DeclaredSize)
	}
	return bound + 1
}

// checkRead judges the n bytes read against the bounds and the declared lengths.
func (lim DownloadLimits) checkRead(n, contentLength int64) error {
	switch {
	case lim.MaxBytes > 0 && n > lim.MaxBytes:
		return fmt.Errorf("%w: more than the %d bytes allowed were served; stopped reading", ErrDownloadTooLarge, lim.MaxBytes)
	case lim.DeclaredSize != nil && n > *lim.DeclaredSize:
		return fmt.Errorf("%w: more than the %d bytes the asset record declares were served; stopped reading", ErrDownloadTooLarge, *lim.DeclaredSize)
	case lim.DeclaredSize != nil && n < *lim.DeclaredSize:
		return fmt.Errorf("got %d bytes, the asset record declares %d", n, *lim.DeclaredSize)
	case contentLength >= 0 && n != contentLength:
		return fmt.Errorf("got %d bytes, Content-Length said %d", n, contentLength)
	}
	return nil
}

// stallWatchdog cancels a download when no byte arrived for its timeout.
type stallWatchdog struct {
	timeout time.Duration
	timer   *time.Timer
}

func newStallWatchdog(timeout time.Duration, cancel context.CancelCauseFunc) *stallWatchdog {
	cause := fmt.Errorf("%w (%s without a byte)", ErrDownloadStalled, timeout)
	return &stallWatchdog{timeout: timeout, timer: time.AfterFunc(timeout, func() { cancel(cause) })}
}

func (wd *stallWatchdog) stop() { wd.timer.Stop() }

func (wd *stallWatchdog) reader(r io.Reader) io.Reader { return stallReader{r: r, wd: wd} }

// stallReader re-arms the watchdog whenever a read brings bytes.
type stallReader struct {
	r  io.Reader
	wd *stallWatchdog
}

func (s stallReader) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	if n > 0 {
		s.wd.timer.Reset(s.wd.timeout)
	}
	return n, err
}
