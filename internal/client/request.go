package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"

	"github.com/hashicorp/go-retryablehttp"
)

// maxJSONBody bounds a JSON response the client decodes. Job records with many outputs, catalogs
// and schema documents fit easily; a runaway or hostile body is refused instead of exhausting
// memory.
const maxJSONBody = 32 << 20

// credential says which secret goes with a request, and how.
type credential int

const (
	credNone      credential = iota
	credBearerKey            // Authorization: Bearer <api_key> (v2 jobs, assets)
	credAPIKey               // X-API-Key: <api_key> (router, v1)
	credRegistry             // Authorization: Bearer <registry_token> (registry)
)

// call is one logical operation: possibly several attempts under its retry policy.
type call struct {
	op     string // for errors and logs: "submit job"
	method string
	url    string
	cred   credential
	header http.Header
	body   []byte // JSON; resent unchanged on every attempt
	policy retryPolicy
	stream bool  // no per-attempt deadline (event streams, downloads, held synchronous calls)
	once   bool  // never resent by net/http on its own (see Client.once)
	accept []int // statuses besides 2xx that are answers, not errors (304, 202, 409 for cancel...)
	// answerLost, when set (a v2 submission), is set once an attempt may have reached the
	// service without its answer coming back (see resendSubmission).
	answerLost *bool
}

// do runs c and returns the response for a 2xx or accepted status. Any other status becomes an
// *APIError (body read and closed). Transport errors are returned as they are.
func (cl *Client) do(ctx context.Context, c call) (*http.Response, error) {
	ctx, writes := traceWrites(ctx)
	req, err := cl.newRequest(ctx, c)
	if err != nil {
		return nil, err
	}
	var last comeBackAnswer
	rc := cl.retryingClient(c.policy, watchingStop(ctx, cl.baseFor(c)), &last, c.answerLost)
	if c.policy == retryIdempotent && readingInWait(ctx) {
		rc.RetryMax = 0 // the wait retries its reads itself (waitLoop), paced with the client's other waits
	}
	resp, err := rc.Do(req)
	if err != nil {
		if resp != nil {
			resp.Body.Close() // an answer handed back with the error that ended the attempts
		}
		err = fmt.Errorf("%s: %s %s: %w", c.op, c.method, redactLink(c.url), attemptsEnded(ctx, err, last))
		if !writes.wrote.Load() {
			// No attempt wrote a byte of the request: the service cannot have seen it.
			return nil, &NotSentError{Operation: c.op, URL: redactLink(c.url), Setting: cl.settingFor(c.url), Cause: err}
		}
		return nil, err
	}
	if resp.StatusCode/100 == 2 || slices.Contains(c.accept, resp.StatusCode) {
		return resp, nil
	}
	apiErr := newAPIError(c.op, resp)
	apiErr.fromRouter = cl.isRouterURL(c.url)
	if apiErr.RetryAfter > cl.maxRetryAfter {
		apiErr.RetryAfterCap = cl.maxRetryAfter // this is why checkRetry stopped: say so
	}
	return nil, apiErr
}

// newRequest builds c's request with its headers and credentials.
func (cl *Client) newRequest(ctx context.Context, c call) (*retryablehttp.Request, error) {
	var body any
	if c.body != nil {
		body = c.body
	}
	req, err := retryablehttp.NewRequestWithContext(ctx, c.method, c.url, body)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", c.op, err)
	}
	for k, vs := range c.header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	if c.body != nil && req.Header.Get("Content-Type") == "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if req.Header.Get("Accept") == "" {
		req.Header.Set("Accept", "application/json")
	}
	req.Header.Set("User-Agent", cl.userAgent)
	cl.authorize(req.Request, c.cred)
	return req, nil
}

// baseFor is the HTTP client c is sent with.
func (cl *Client) baseFor(c call) *http.Client {
	switch {
	case c.once:
		return cl.once
	case c.stream:
		return cl.stream
	}
	return cl.short
}

// attemptsEnded is the error of a call whose attempts ended without an answer to hand back: when
// the context (or too little time left) ended them, it names the last attempt's failure or the
// last "come back later" answer, and errors.Is still finds the context's error.
func attemptsEnded(ctx context.Context, err error, last comeBackAnswer) error {
	deadlineEnded := ctx.Err() != nil || errors.Is(err, errTooLateForAnAttempt) || errors.Is(err, errStoppedBeforeResend)
	if deadlineEnded && last.status == 0 && last.attemptErr != nil {
		err = fmt.Errorf("%w; the last attempt failed: %w", err, last.attemptErr)
	}
	if ctx.Err() != nil && !errors.Is(err, ctx.Err()) {
		err = fmt.Errorf("%w: %w", ctx.Err(), err)
	}
	if deadlineEnded && last.status != 0 {
		err = &waitEndedError{err: err, last: last}
	}
	return err
}

// answer is what doJSON keeps of a response once its body is decoded and closed.
type answer struct {
	status int
	header http.Header
	url    *url.URL // the URL the request was sent to (before redirects): links resolve on its origin
}

// sentURL is the URL of the request the client sent, before any redirect. Links in an answer
// are resolved (and rebased) on its origin, the one the configuration named and the credentials
// were meant for: after a redirect to another origin, resp.Request.URL names the redirect target,
// and a link resolved there would carry the credentials to it on the next call.
func sentURL(resp *http.Response) *url.URL {
	req := resp.Request
	for req.Response != nil && req.Response.Request != nil {
		req = req.Response.Request
	}
	return req.URL
}

// doJSON runs c and decodes a JSON answer into out (when out is not nil).
func (cl *Client) doJSON(ctx context.Context, c call, out any) (answer, error) {
	resp, err := cl.do(ctx, c)
	if err != nil {
		return answer{}, err
	}
	defer resp.Body.Close()
	a := answer{status: resp.StatusCode, header: resp.Header, url: sentURL(resp)}
	if out == nil {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxErrorBody))
		return a, nil
	}
	if err := decodeJSON(resp, out); err != nil {
		return a, fmt.Errorf("%s: %w", c.op, err)
	}
	return a, nil
}

// decodeJSON decodes a bounded JSON body; a body over the bound is an error, not a truncation.
func decodeJSON(resp *http.Response, out any) error {
	if resp.ContentLength > maxJSONBody { // declared too big: refuse without reading any of it
		return fmt.Errorf("response body of %d bytes is over %d MiB refused (HTTP %d, request id %q)",
			resp.ContentLength, maxJSONBody>>20, resp.StatusCode, requestIDOf(resp.Header))
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxJSONBody+1))
	if err != nil {
		return fmt.Errorf("reading response (HTTP %d, request id %q): %w", resp.StatusCode, requestIDOf(resp.Header), err)
	}
	if len(data) > maxJSONBody {
		return fmt.Errorf("response body over %d MiB refused (HTTP %d, request id %q)", maxJSONBody>>20, resp.StatusCode, requestIDOf(resp.Header))
	}
	if err := json.Unmarshal(data, out); err != nil {
		// A record that tolerates them reads NaN and Infinity (not JSON) as null.
		if t, ok := out.(nonFiniteTolerant); ok {
			if clean, n := nullNonFinite(data); n > 0 && json.Unmarshal(clean, out) == nil {
				t.noteNonFinite(n)
				return nil
			}
		}
		return fmt.Errorf("response is not the expected JSON (HTTP %d, request id %q): %w; body: %s",
			resp.StatusCode, requestIDOf(resp.Header), err, excerpt(data))
	}
	return nil
}

func (cl *Client) authorize(req *http.Request, cred credential) {
	switch cred {
	case credBearerKey:
		if cl.apiKey != "" {
			req.Header.Set("Authorization", "Bearer "+cl.apiKey)
		}
	case credAPIKey:
		if cl.apiKey != "" {
			req.Header.Set("X-API-Key", cl.apiKey)
		}
	case credRegistry:
		if cl.registryToken != "" {
			req.Header.Set("Authorization", "Bearer "+cl.registryToken)
		}
	}
}

func mustJSON(v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(err) // only our own types are encoded here
	}
	return bytes.TrimRight(buf.Bytes(), "\n")
}
