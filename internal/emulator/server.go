// Package emulator is the local reference server for the workflow execution service: one
// Server, one listener, one mount prefix (Options.MountPrefix), serving four API families.
// The first two share its execution engine (engine.go, workflow.go) and node classes
// (nodes*.go), so they stay in this package:
//
//	v2 jobs (jobs.go, events.go, assets.go)
//	  POST /api/v2/jobs, GET /api/v2/jobs/{id}, POST /api/v2/jobs/{id}/cancel,
//	  GET /api/v2/jobs/{id}/events (Server-Sent Events), GET /api/v2/jobs/{id}/logs (LogsLink),
//	  GET /api/v2/assets/{id}, GET /api/v2/assets/{id}/content (signed, no credential)
//	v1 cloud interface (cloudv1.go, socket.go; Token checked as X-API-Key)
//	  GET /api/object_info, POST /api/upload/image, POST /api/upload/mask, POST /api/prompt,
//	  GET /api/job/{id}/status, GET /api/view (redirects to a separate storage host serving
//	  GET /blob/{id}), GET /ws (the prompt socket)
//	node registry: package registry, mounted here (registry_mount.go); its own bearer tokens
//	  POST /publishers/{p}/nodes/{n}/claim-my-node, POST /nodes/{n}/translations,
//	  DELETE /publishers/{p}/nodes/{n}
//	model router: package router, mounted here (router_mount.go); /v2/models...
//
// Everything else answers 404 not_found in the v2 error envelope.
//
// Every route, those of the subpackages included (they mount through apiHost, api_host.go), is
// registered through Server.route, which wraps the handler with the request id, request
// counting (Requests), faults of the whole service (Outage, Restart: outage.go), fault injection
// (Inject, Chaos) and the family's credential check.
// Options.Now is the server's clock: tests move it to get past expiries without sleeping. A new
// API family goes in its own subpackage when it shares nothing with the engine (as router and
// registry do, taking a Host), otherwise in its own files here, with its own Op constants.
package emulator

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"errors"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/svc-org/terraform-provider-svc/internal/emulator/registry"
	"github.com/svc-org/terraform-provider-svc/internal/emulator/router"
	"github.com/svc-org/terraform-provider-svc/internal/emulator/wire"
)

// Options configure one server instance. Zero values give sensible defaults.
type Options struct {
	// Mode is a preset of the knobs below (mode.go): ModeStrict makes the server as little
	// generous as the contract allows; the zero value is ModeGenerous.
	Mode Mode

	Token         string // when set, every /api/v2 route (except signed asset content) needs "Authorization: Bearer <Token>", else 401 unauthorized
	MountPrefix   string // e.g. "/deployment/demo": every route served under it; links include it
	AbsoluteLinks bool   // urls.* and outputs[].url absolute ("http://127.0.0.1:port/prefix/...") instead of host-relative ("/prefix/...")
	// LinkHost, with AbsoluteLinks, is the host name absolute links use instead of the one the
	// request named (the port is kept), as a service that builds links from a public base URL:
	// "localhost" while the client talks to 127.0.0.1.
	LinkHost       string
	LogsLink       bool // include urls.logs on every job and serve GET .../logs (text/plain; 204 when nothing printed)
	EventsDisabled bool // events route answers 501 {"error":{"code":"not_implemented",...}}
	// FlatProgress keeps progress as it was when the job started (value 0) until the job ends,
	// as a server that reports no progress while running: nothing tells how long is left.
	FlatProgress bool
	NodeDuration time.Duration // time each node takes to execute (default 0)
	StepDuration time.Duration // time of each sampler step (default 0)
	QueueDelay   time.Duration // extra wait before a queued job starts running (default 0)
	Retention    time.Duration // expires_at = completed_at (or created_at) + Retention (default 24h)
	Workers      int           // jobs running at once (default 1)
	QueueLimit   int           // jobs waiting (queued) beyond which submit answers 429 queue_full (default 1000)
	RetryAfter   int           // seconds sent in Retry-After on 429 (default 1)
	URLTTL       time.Duration // lifetime of signed output urls (default 1h)
	ResignOnRead bool          // sign outputs[].url anew on every job read (as presigned storage does), instead of at half its life
	// IgnoreRange serves an asset's content whole (200) to a range request, as a server the
	// contract does not oblige to honour ranges; otherwise a single range is answered 206.
	IgnoreRange bool
	// LazyHashes makes the hash of a job's output null, in the job record and in the asset
	// record, until ComputeHashes is called or, when HashDelay is set, until HashDelay after the
	// job ended (on the server's clock): a service that computes hashes lazily, or never.
	LazyHashes bool
	HashDelay  time.Duration
	// ReadRetryAfter, when set, is the Retry-After (seconds) of every 200 answer to a read of a
	// job that has not ended: a service telling pollers how often to come back.
	ReadRetryAfter int
	// ReadMinInterval, when set, answers a read of a job that comes sooner than this after the
	// last one answered (on the server's clock) with 429 rate_limited and a Retry-After saying
	// when to come back: a service that rate-limits polling. It is not part of ModeStrict.
	ReadMinInterval time.Duration
	MaxStreams      int // concurrent events streams per server; beyond -> 429 too_many_streams with Retry-After (0 = unlimited)
	// EventsTerminalFlood, when set, makes every events stream of a job that is not terminal
	// repeat a status event saying "succeeded" at this interval, while the job record goes on
	// as before: a hostile or broken stream that must not turn into a read per event.
	EventsTerminalFlood time.Duration

	IdempotencyTTL time.Duration // how long an Idempotency-Key stays claimed (default 24h)
	// Latency holds every request of the v2, v1 and asset routes this long before the server
	// sees it (an outage's answer included): a service far away, or a machine slow to answer.
	Latency time.Duration

	// Now is the server's clock (default time.Now): every timestamp it writes and every expiry
	// it checks (expires_at and retention, signed URL lifetimes, Idempotency-Key claims) reads
	// it. A test passes a clock it can move forward to get past an expiry without sleeping;
	// execution times (NodeDuration, StepDuration, QueueDelay) still elapse in real time.
	Now func() time.Time

	Router RouterOptions // the model router (package router)
	// v1 cloud interface (cloudv1.go, socket.go); Token is checked as X-API-Key there.
	V1LegacyStatuses bool // GET /api/job/{id}/status answers the older set: pending, in_progress, completed, failed, cancelled
	V1NoStatusRoute  bool // GET /api/job/{id}/status answers 404, as an engine without the route
	V1NoSocket       bool // GET /ws answers 404: clients must poll
	// V1SocketSubscribeDelay is how long a new socket connection stays unsubscribed after the
	// handshake, as on a busy server: messages broadcast meanwhile never reach it.
	V1SocketSubscribeDelay time.Duration
	// V1ExecutedFlood, when set, makes the socket send this many executed messages for a prompt
	// as it starts running, as a flooding server would: half repeat one file, half name a new
	// file each. The files do not exist.
	V1ExecutedFlood int
	StorageAddr     string // listen address of the storage host behind /api/view (default 127.0.0.2:0, else 127.0.0.1:0)
}

func (o Options) withDefaults() Options {
	o = o.withMode()
	if o.Retention <= 0 {
		o.Retention = 24 * time.Hour
	}
	if o.Workers <= 0 {
		o.Workers = 1
	}
	if o.QueueLimit <= 0 {
		o.QueueLimit = 1000
	}
	if o.RetryAfter <= 0 {
		o.RetryAfter = 1
	}
	if o.URLTTL <= 0 {
		o.URLTTL = time.Hour
	}
	if o.IdempotencyTTL <= 0 {
		o.IdempotencyTTL = 24 * time.Hour
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	o.MountPrefix = "/" + strings.Trim(o.MountPrefix, "/")
	if o.MountPrefix == "/" {
		o.MountPrefix = ""
	}
	return o
}

// Server is one emulator instance. Create it with New.
type Server struct {
	opts    Options
	mux     *http.ServeMux
	handler http.Handler
	secret  []byte // signs asset content urls

	faults faultState
	chaos  chaosState
	whole  wholeServiceFaults // outages and restarts (outage.go)
	// submissions under way, which a restart answers before it goes down (outage.go)
	submissions submissionDrain
	registry    *registry.Registry // node registry: its own lock, independent of the job state

	// mu guards the job and asset state below.
	mu             sync.Mutex
	jobs           map[string]*job
	jobOrder       []string
	queue          []*job // queued jobs, in order
	idemKeys       map[string]time.Time
	assets         map[string]*asset
	nodeFail       map[string]jobError
	hashesComputed bool // with LazyHashes: ComputeHashes was called
	router         *router.Router
	streams        int
	workCond       *sync.Cond
	closed         bool
	fastOnce       sync.Once
	fast           chan struct{} // closed by CompleteJobs: durations are ignored from then on
	done           chan struct{} // closed by Close
	wg             sync.WaitGroup
	closeOnce      sync.Once
	httpSrv        *http.Server
	listenerURL    atomic.Value // string: "http://127.0.0.1:PORT" once started

	v1 v1State
}

// New builds a server and starts its workers. Serve it with Handler (e.g. with
// httptest) or with Start / StartOn; call Close when done.
func New(opts Options) *Server {
	s := &Server{
		opts:     opts.withDefaults(),
		mux:      http.NewServeMux(),
		secret:   make([]byte, 32),
		jobs:     map[string]*job{},
		idemKeys: map[string]time.Time{},
		assets:   map[string]*asset{},
		nodeFail: map[string]jobError{},
		fast:     make(chan struct{}),
		done:     make(chan struct{}),
	}
	if _, err := rand.Read(s.secret); err != nil {
		panic(err)
	}
	s.workCond = sync.NewCond(&s.mu)
	s.faults.init()

	s.registerJobRoutes()
	s.registerAssetRoutes()
	s.registerEventRoutes()
	s.router = router.New(apiHost{s}, s.opts.Router, s.opts.Token, s.opts.MountPrefix)
	s.registry = registry.New(apiHost{s})
	s.registerV1Routes()
	s.v1.subs = map[*socketSub]bool{}
	s.startStorage()
	s.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		setRequestID(w)
		if s.answeredByAnOutage(w, "") {
			return
		}
		writeError(w, http.StatusNotFound, "not_found", "no route for "+r.Method+" "+r.URL.Path, nil)
	})
	s.handler = s.mux

	s.startEngine()
	return s
}

// Handler serves every route of the server; usable with httptest.
func (s *Server) Handler() http.Handler { return s.handler }

// Start listens on 127.0.0.1 at a free port and serves in the background.
func (s *Server) Start() error { return s.StartOn("127.0.0.1:0") }

// StartOn listens on addr and serves in the background.
func (s *Server) StartOn(addr string) error {
	if u, _ := s.listenerURL.Load().(string); u != "" {
		return errors.New("emulator: already started")
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	if err := s.serve(ln); err != nil {
		return err
	}
	s.listenerURL.Store("http://" + ln.Addr().String())
	return nil
}

// serve serves on ln in the background, unless the server is closed or already serving.
func (s *Server) serve(ln net.Listener) error {
	srv := &http.Server{Handler: s.handler, ReadHeaderTimeout: 10 * time.Second}
	s.mu.Lock()
	if s.httpSrv != nil || s.closed {
		s.mu.Unlock()
		ln.Close()
		return errors.New("emulator: already serving, or closed")
	}
	s.httpSrv = srv
	s.mu.Unlock()
	go func() { _ = srv.Serve(ln) }()
	return nil
}

// URL is what a client configures as its endpoint: "http://127.0.0.1:PORT" plus
// the mount prefix. It is empty until Start or StartOn succeeded.
func (s *Server) URL() string {
	u, _ := s.listenerURL.Load().(string)
	if u == "" {
		return ""
	}
	return u + s.opts.MountPrefix
}

// Close stops serving, ends open event streams and stops the workers.
func (s *Server) Close() {
	s.closeOnce.Do(func() {
		s.mu.Lock()
		s.closed = true
		srv := s.httpSrv
		for _, j := range s.jobs {
			j.cancel()
		}
		s.workCond.Broadcast()
		s.mu.Unlock()
		close(s.done)
		if srv != nil {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			_ = srv.Shutdown(ctx)
			cancel()
			_ = srv.Close()
		}
		s.stopStorage()
		s.wg.Wait()
	})
}

// ---- routing helpers shared by every API family ----

// routeOption adjusts how route wraps a handler.
type routeOption func(*routeConfig)

type routeConfig struct {
	auth func(w http.ResponseWriter, r *http.Request) bool // reports whether the request may proceed; writes the rejection itself
}

// noAuth makes a route public (e.g. signed asset content).
func noAuth() routeOption { return func(c *routeConfig) { c.auth = nil } }

// authWith replaces the bearer Token check with check (e.g. the registry's token table). check
// reports whether the request may proceed and writes the rejection itself.
func authWith(check func(w http.ResponseWriter, r *http.Request) bool) routeOption {
	return func(c *routeConfig) { c.auth = check }
}

// route registers pattern (a Go 1.22 ServeMux pattern such as "POST /api/v2/jobs",
// without the mount prefix) for operation op. The handler is wrapped with, in
// order: a fresh X-Svc-Request-Id, request counting, an outage of the whole service, fault
// injection and authentication (bearer Token by default).
func (s *Server) route(pattern, op string, h http.HandlerFunc, options ...routeOption) {
	method, path, ok := strings.Cut(pattern, " ")
	if !ok {
		method, path = "", pattern
	}
	full := s.opts.MountPrefix + path
	if method != "" {
		full = method + " " + full
	}
	cfg := routeConfig{auth: s.bearerAuth}
	for _, o := range options {
		o(&cfg)
	}
	s.mux.HandleFunc(full, func(w http.ResponseWriter, r *http.Request) {
		if !s.travel(r) {
			return
		}
		setRequestID(w)
		f := s.faults.record(op, r)
		if s.answeredByAnOutage(w, op) {
			return
		}
		if submitOps[op] {
			if !s.submissions.enter() {
				panic(http.ErrAbortHandler) // going down: the connection closes, nothing done
			}
			defer s.submissions.leave(w)
		}
		inner := func(w http.ResponseWriter, r *http.Request) {
			if cfg.auth != nil && !cfg.auth(w, r) {
				return
			}
			h(w, r)
		}
		switch {
		case f != nil:
			s.applyFault(*f, w, r, inner)
		default:
			if cf, ok := s.chaos.draw(op); ok {
				s.applyChaos(cf, w, r, inner)
				return
			}
			inner(w, r)
		}
	})
}

// travel holds a request for Options.Latency; it reports false when the client went meanwhile
// (or the server closed).
func (s *Server) travel(r *http.Request) bool {
	if s.opts.Latency <= 0 {
		return true
	}
	t := time.NewTimer(s.opts.Latency)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.Context().Done():
	case <-s.done:
	}
	return false
}

// bearerAuth is the v2 credential check.
func (s *Server) bearerAuth(w http.ResponseWriter, r *http.Request) bool {
	if s.opts.Token == "" {
		return true
	}
	got := r.Header.Get("Authorization")
	want := "Bearer " + s.opts.Token
	if subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1 {
		return true
	}
	w.Header().Set("WWW-Authenticate", `Bearer realm="svc"`)
	msg := "missing bearer credential"
	if got != "" {
		msg = "invalid bearer credential"
	}
	writeError(w, http.StatusUnauthorized, "unauthorized", msg, nil)
	return false
}

// link turns a server path (without prefix) into the link clients get:
// host-relative with the mount prefix, or absolute when AbsoluteLinks is set
// (on the request's host, else the listener's). It takes no lock.
func (s *Server) link(r *http.Request, path string) string {
	p := s.opts.MountPrefix + path
	if !s.opts.AbsoluteLinks {
		return p
	}
	scheme := "http"
	if r != nil && r.TLS != nil {
		scheme = "https"
	}
	host := ""
	if r != nil {
		host = r.Host
	}
	if host == "" { // no request to name the host: the listener's own
		host = "127.0.0.1"
		if raw, _ := s.listenerURL.Load().(string); raw != "" {
			if u, err := url.Parse(raw); err == nil {
				scheme, host = u.Scheme, u.Host
			}
		}
	}
	if s.opts.LinkHost != "" {
		if _, port, err := net.SplitHostPort(host); err == nil {
			host = net.JoinHostPort(s.opts.LinkHost, port)
		} else {
			host = s.opts.LinkHost
		}
	}
	return scheme + "://" + host + p
}

const requestIDHeader = wire.RequestIDHeader

func setRequestID(w http.ResponseWriter) {
	w.Header().Set(requestIDHeader, uuid.NewString())
}

// errorBody is the v2 error envelope.
type errorBody struct {
	Error errorDetail `json:"error"`
}

type errorDetail struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Details any    `json:"details,omitempty"`
}

func writeError(w http.ResponseWriter, status int, code, message string, details any) {
	writeJSON(w, status, errorBody{Error: errorDetail{Code: code, Message: message, Details: details}})
}

func writeJSON(w http.ResponseWriter, status int, v any) { wire.WriteJSON(w, status, v) }

// timeFormat is RFC 3339 in UTC with microseconds.
const timeFormat = "2006-01-02T15:04:05.000000Z07:00"

func formatTime(t time.Time) string { return t.UTC().Format(timeFormat) }

func formatTimePtr(t time.Time) *string {
	if t.IsZero() {
		return nil
	}
	v := formatTime(t)
	return &v
}

// sleep waits d, returning early (with ctx.Err()) when ctx ends. Once CompleteJobs
// was called, or when the server closes, it returns at once.
func (s *Server) sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-s.fast:
	case <-s.done:
	case <-ctx.Done():
	}
	return ctx.Err()
}
