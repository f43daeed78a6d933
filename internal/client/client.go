// Package client is the API client of the workflow execution service: the v2 jobs interface, the
// model router, the v1 cloud interface and the node registry. It knows nothing of Terraform.
//
// Every operation goes through one retrying transport (go-retryablehttp) with a retry policy chosen
// for that operation: what is safe to resend depends on what the service does with a repeated request
// (an idempotency key it replays, a key it releases, nothing at all), not on the HTTP method alone.
package client

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"
)

// Defaults for Config fields left at their zero value.
const (
	DefaultEndpoint      = "http://127.0.0.1:8188"
	DefaultMaxRetries    = 5
	DefaultRetryWaitMin  = 250 * time.Millisecond
	DefaultRetryWaitMax  = 30 * time.Second
	DefaultMaxRetryAfter = 2 * time.Minute
	DefaultTimeout       = 2 * time.Minute
)

// Config configures a Client. Only Endpoint is needed; the other endpoints default to it.
type Config struct {
	Endpoint         string // workflow service: v2 jobs, assets, v1 cloud; may carry a mount prefix
	RouterEndpoint   string // model router; defaults to Endpoint
	RegistryEndpoint string // node registry; defaults to Endpoint

	APIKey        string // v2: Authorization: Bearer; router and v1: X-API-Key
	RegistryToken string // registry: Authorization: Bearer; defaults to APIKey

	MaxRetries    int           // retries of transient failures per operation (0 means none when MaxRetriesSet)
	MaxRetriesSet bool          // MaxRetries was given explicitly, so 0 is honoured
	RetryWaitMin  time.Duration // first backoff step
	RetryWaitMax  time.Duration // largest backoff step
	MaxRetryAfter time.Duration // longest Retry-After the client waits; a longer one ends the retries
	Timeout       time.Duration // per attempt of an ordinary (non-streaming) request
	// AnswerGrace is how long a submission's attempt already on the wire when its caller's
	// context ends may still take to be answered (see submitting); 0: not at all.
	AnswerGrace time.Duration

	UserAgent  string
	Logger     Logger
	HTTPClient *http.Client // base client; its Transport is reused, redirects are policed by the Client
}

// Client talks to the service. It is safe for concurrent use.
type Client struct {
	endpoint         *url.URL
	routerEndpoint   *url.URL
	registryEndpoint *url.URL

	apiKey        string
	registryToken string

	maxRetries    int
	retryWaitMin  time.Duration
	retryWaitMax  time.Duration
	maxRetryAfter time.Duration
	answerGrace   time.Duration
	backoffHook   func(minWait, maxWait time.Duration, attempt int, resp *http.Response) time.Duration // tests only; nil means backoff

	userAgent string
	log       Logger

	short  *http.Client // ordinary requests: a deadline per attempt
	stream *http.Client // event streams and downloads: no overall deadline
	// once carries the writes that must never be resent behind our back (a v2 submission, an
	// upload without overwrite). net/http silently resends a request carrying an
	// Idempotency-Key header when a reused connection breaks; for a single-use key that resend
	// is rejected as a duplicate and hides whether the first attempt created the job. Its
	// transport (noReplay) hands net/http requests it cannot resend, so whether to retry stays
	// our decision alone, and keeps a connection idle for at most onceIdleTimeout (see there).
	once *http.Client

	// eventsNotImplemented is set once the service answered an event stream with 501: it serves
	// none, so later waits poll without asking again (one request per job saved).
	eventsNotImplemented atomic.Bool
	// eventsProbe holds back the waits that start while the first event stream is being asked
	// for, until its answer says whether the service serves any.
	eventsProbe eventsProbe
	// readsHeldUntil (Unix nanoseconds, 0: never) is when the service's last 429 with a
	// Retry-After to a read lets reads go on: every wait of this client (a batch's rows alike)
	// holds its next read until then, so a rate limit is honoured by the batch as a whole, not
	// one wait at a time.
	readsHeldUntil atomic.Int64
	// gate is what the waits and submissions of this client learn together about the service
	// being down (outageGate): while it is, they hold, and one probe at a time goes out.
	gate *outageGate
	// departures lets the requests of this client's waits and submissions that fall due
	// together leave one by one (departureSpacing).
	departures *spacedDepartures
}

// turn is how long a request due now must wait (0: send it now, with the ticket), and a channel
// closed when that may have changed (nil: nothing to watch), as look (the outage gate, and for
// reads the rate limit) and the client's departures say. It may block briefly, until the
// request's turn among those due together, or until ctx ends (then it lets the request fail).
func (c *Client) turn(ctx context.Context, look func() (time.Duration, <-chan struct{}, gateTicket)) (time.Duration, <-chan struct{}, gateTicket) {
	d, changed, t := look()
	if d > 0 || t.probe { // held, or the gate's lone probe or scout: nothing to space
		return d, changed, t
	}
	return c.departures.depart(ctx, look)
}

// report tells the outage gate and the departures how a request let go with t went.
func (c *Client) report(t gateTicket, outcome gateOutcome, retryAfter time.Duration) {
	c.departures.answer(t, outcome)
	c.gate.record(t, outcome, retryAfter)
}

// holdReads notes a read answered 429 with Retry-After wait.
func (c *Client) holdReads(wait time.Duration) {
	until := time.Now().Add(wait).UnixNano()
	for {
		cur := c.readsHeldUntil.Load()
		if cur >= until || c.readsHeldUntil.CompareAndSwap(cur, until) {
			return
		}
	}
}

// readsHeldFor is how long reads are still held (0: not).
func (c *Client) readsHeldFor() time.Duration {
	return max(time.Until(time.Unix(0, c.readsHeldUntil.Load())), 0)
}

// New validates cfg and builds a Client.
func New(cfg Config) (*Client, error) {
	if cfg.Endpoint == "" {
		cfg.Endpoint = DefaultEndpoint
	}
	endpoint, err := parseEndpoint("endpoint", cfg.Endpoint)
	if err != nil {
		return nil, err
	}
	router, registry := endpoint, endpoint
	if cfg.RouterEndpoint != "" {
		if router, err = parseEndpoint("router_endpoint", cfg.RouterEndpoint); err != nil {
			return nil, err
		}
	}
	if cfg.RegistryEndpoint != "" {
		if registry, err = parseEndpoint("registry_endpoint", cfg.RegistryEndpoint); err != nil {
			return nil, err
		}
	}

	c := &Client{
		endpoint:         endpoint,
		routerEndpoint:   router,
		registryEndpoint: registry,
		apiKey:           cfg.APIKey,
		registryToken:    cfg.RegistryToken,
		maxRetries:       cfg.MaxRetries,
		retryWaitMin:     orDuration(cfg.RetryWaitMin, DefaultRetryWaitMin),
		retryWaitMax:     orDuration(cfg.RetryWaitMax, DefaultRetryWaitMax),
		maxRetryAfter:    orDuration(cfg.MaxRetryAfter, DefaultMaxRetryAfter),
		answerGrace:      cfg.AnswerGrace,
		userAgent:        cfg.UserAgent,
		log:              cfg.Logger,
	}
	if c.registryToken == "" {
		c.registryToken = c.apiKey
	}
	c.gate = newOutageGate(c.retryWaitMin, c.retryWaitMax)
	c.departures = newSpacedDepartures()
	if !cfg.MaxRetriesSet && c.maxRetries == 0 {
		c.maxRetries = DefaultMaxRetries
	}
	if c.maxRetries < 0 {
		return nil, fmt.Errorf("max_retries must not be negative, got %d", c.maxRetries)
	}
	if c.userAgent == "" {
		c.userAgent = "terraform-provider-svc"
	}
	if c.log == nil {
		c.log = nopLogger{}
	}

	base := cfg.HTTPClient
	if base == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		// A batch waits for, reads and submits hundreds of jobs at once: keep their
		// connections for the next request instead of opening one per request (net/http
		// keeps two per host by default, and closes every other when its request ends).
		t.MaxIdleConns, t.MaxIdleConnsPerHost = maxIdleConns, maxIdleConns
		base = &http.Client{Transport: t}
	}
	c.short = &http.Client{
		Transport:     base.Transport,
		Timeout:       orDuration(cfg.Timeout, DefaultTimeout),
		CheckRedirect: policeRedirect,
	}
	c.stream = &http.Client{
		Transport:     base.Transport,
		CheckRedirect: policeRedirect,
	}
	c.once = &http.Client{
		Transport:     noReplay{next: shortIdle(base.Transport)},
		Timeout:       c.short.Timeout,
		CheckRedirect: policeRedirect,
	}
	return c, nil
}

// Endpoint returns the workflow service's base URL as configured.
func (c *Client) Endpoint() string { return c.endpoint.String() }

// maxIdleConns is how many idle connections the client keeps per host: as many as a batch has
// requests under way at once (max_in_flight is at most 1,024, but a few hundred connections
// to one host serve any of it).
const maxIdleConns = 256

// onceIdleTimeout is how long a connection for writes that must not be resent stays idle
// before the client closes it. A server may close an idle connection just as the client sends
// on it; the request then may or may not have been read, and its outcome is unknown. Servers
// keep idle connections for seconds at least (5 s is the shortest common default), so a
// connection idle for less than this is reused safely: in a batch, where submissions follow
// each other closely, every submission after the first rides a warm connection.
const onceIdleTimeout = 2 * time.Second

// shortIdle is rt with its own pool of connections, each kept idle at most onceIdleTimeout.
func shortIdle(rt http.RoundTripper) http.RoundTripper {
	if rt == nil {
		rt = http.DefaultTransport
	}
	if t, ok := rt.(*http.Transport); ok {
		t = t.Clone()
		t.IdleConnTimeout = onceIdleTimeout
		return t
	}
	return rt // a custom transport owns its connection policy
}

// noReplay hands the next transport requests net/http never resends on its own: net/http
// resends a request that has a body only when it can get the body again (GetBody), so the
// request it is given has none. The caller's request keeps its GetBody, for redirects.
type noReplay struct{ next http.RoundTripper }

func (t noReplay) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.GetBody != nil {
		req = req.WithContext(req.Context()) // a shallow copy: the caller's request is not changed
		req.GetBody = nil
	}
	return t.next.RoundTrip(req)
}

func parseEndpoint(name, raw string) (*url.URL, error) {
	if lower := strings.ToLower(raw); !strings.HasPrefix(lower, "http://") && !strings.HasPrefix(lower, "https://") {
		return nil, schemeProblem(name, raw)
	}
	u, err := url.Parse(strings.TrimRight(raw, "/"))
	if err != nil {
		return nil, fmt.Errorf("%s %q is not a URL: %w", name, raw, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("%s %q must be an http or https URL", name, raw)
	}
	if u.Host == "" {
		return nil, fmt.Errorf("%s %q has no host", name, raw)
	}
	if u.User != nil {
		return nil, fmt.Errorf("%s must not carry credentials in the URL; use api_key", name)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("%s %q must not have a query or fragment", name, raw)
	}
	return u, nil
}

func orDuration(v, def time.Duration) time.Duration {
	if v > 0 {
		return v
	}
	return def
}

// credentialHeaders are the headers that carry a secret. They never cross to another origin.
var credentialHeaders = []string{"Authorization", "X-Api-Key", "Cookie", "Proxy-Authorization"}

// stripCredentialsOnRedirect follows redirects but drops every credential header when the
// redirect leaves the origin of the original request: a signed storage URL carries its own
// authorization, and our key must never reach that host. net/http already drops Authorization on
// a cross-domain redirect, but not X-API-Key, and not for a same-domain change of port or scheme.
func stripCredentialsOnRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= 10 {
		return errors.New("stopped after 10 redirects")
	}
	if origin(req.URL) != origin(via[0].URL) {
		for _, h := range credentialHeaders {
			req.Header.Del(h)
		}
	}
	return nil
}
