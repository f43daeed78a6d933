package client

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
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

// DownloadTo streams the bytes at rawURL into w. Credentials go only to the service's own origin;
// a signed storage URL on another host carries its own authorization and gets none of ours.
func (c *Client) DownloadTo(ctx context.Context, rawURL string, w io.Writer) (*Download, error) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return nil, fmt.Errorf("download: %q is not an http(s) URL", redactLink(rawURL))
	}
	cred := credNone
	if origin(u) == origin(c.endpoint) {
		cred = credBearerKey
	}
	return c.streamTo(ctx, call{
		op: "download", method: http.MethodGet, url: rawURL, cred: cred,
		header: http.Header{"Accept": {"*/*"}}, policy: retryIdempotent, stream: true,
	}, w)
}

// streamTo runs cl and copies the response body into w as it arrives, checking its length.
func (c *Client) streamTo(ctx context.Context, cl call, w io.Writer) (*Download, error) {
	resp, err := c.do(ctx, cl)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	n, err := io.Copy(w, resp.Body)
	if err != nil {
		return nil, fmt.Errorf("%s %s: after %d bytes: %w", cl.op, redactLink(cl.url), n, err)
	}
	if resp.ContentLength >= 0 && n != resp.ContentLength {
		return nil, fmt.Errorf("%s %s: got %d bytes, Content-Length said %d", cl.op, redactLink(cl.url), n, resp.ContentLength)
	}
	return &Download{ContentType: resp.Header.Get("Content-Type"), Size: n, RequestID: requestIDOf(resp.Header)}, nil
}
