package emulator

import (
	"context"
	"math/rand/v2"
	"net/http"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/svc-org/terraform-provider-svc/internal/emulator/router"
)

// Chaos injects random faults from a fixed seed: the faults of a flaky network and a loaded
// service that a correct client must survive without losing or repeating work.
// Submissions only ever get a 429 queue_full before anything is created (the key is released);
// reads get 503s, dropped connections and HTML 502 pages from a "proxy"; event streams are cut
// mid-way or refused with 429 too_many_streams.
type Chaos struct {
	Seed int64
	// Rate is the probability that one request gets a fault (0 to 1).
	Rate float64
	// RetryAfter is the Retry-After, in seconds, sent with 429s (0 by default, to keep soaks fast).
	RetryAfter int
	// Kinds overrides, per operation, the fault kinds drawn from (see chaosKinds).
	Kinds map[string][]string
}

// Fault kinds.
const (
	ChaosQueueFull      = "queue_full"       // 429 queue_full with Retry-After, before handling
	ChaosUnavailable    = "unavailable_503"  // 503 with a JSON envelope, before handling
	ChaosDrop           = "dropped"          // connection closed before any response
	ChaosHTML502        = "html_502"         // a proxy's HTML 502 page, before handling
	ChaosStreamCut      = "stream_cut"       // event stream ended early, without a terminal status
	ChaosTooManyStreams = "too_many_streams" // 429 too_many_streams on the event stream
	ChaosRateLimited    = "rate_limited"     // router 429 rate_limited with Retry-After, before handling
	ChaosLostAnswer     = "lost_answer"      // handled, then the connection is closed: the work is done, the answer lost
)

// chaosKinds are the faults each operation may get by default. Operations not listed get none.
var chaosKinds = map[string][]string{
	OpSubmitJob:    {ChaosQueueFull},
	OpGetJob:       {ChaosUnavailable, ChaosDrop, ChaosHTML502},
	OpCancelJob:    {ChaosUnavailable, ChaosDrop},
	OpGetAsset:     {ChaosUnavailable, ChaosDrop, ChaosHTML502},
	OpAssetContent: {ChaosUnavailable, ChaosDrop},
	OpJobEvents:    {ChaosStreamCut, ChaosTooManyStreams},
	// The router's key replays, so even a lost answer after the run was accepted is survivable:
	// the same key collects the same run.
	OpSubmitRequest:  {ChaosRateLimited, ChaosUnavailable, ChaosLostAnswer},
	OpInvokeModel:    {ChaosRateLimited, ChaosUnavailable, ChaosLostAnswer},
	OpRequestStatus:  {ChaosUnavailable, ChaosDrop, ChaosHTML502},
	OpCollectRequest: {ChaosUnavailable, ChaosDrop, ChaosHTML502},
}

type chaosState struct {
	mu     sync.Mutex
	cfg    *Chaos
	rng    *rand.Rand
	counts map[string]int // "op/kind" -> faults injected
}

// SetChaos turns random fault injection on (nil turns it off).
func (s *Server) SetChaos(c *Chaos) {
	s.chaos.mu.Lock()
	defer s.chaos.mu.Unlock()
	s.chaos.cfg = c
	s.chaos.counts = map[string]int{}
	if c != nil {
		s.chaos.rng = rand.New(rand.NewPCG(uint64(c.Seed), 0x5eed))
	}
}

// ChaosCounts reports the faults injected so far, keyed "op/kind".
func (s *Server) ChaosCounts() map[string]int {
	s.chaos.mu.Lock()
	defer s.chaos.mu.Unlock()
	out := make(map[string]int, len(s.chaos.counts))
	for k, v := range s.chaos.counts {
		out[k] = v
	}
	return out
}

// ChaosSummary renders ChaosCounts as "op/kind=n" pairs, sorted.
func (s *Server) ChaosSummary() string {
	counts := s.ChaosCounts()
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := ""
	for _, k := range keys {
		if out != "" {
			out += " "
		}
		out += k + "=" + strconv.Itoa(counts[k])
	}
	return out
}

// chaosFault is one drawn fault.
type chaosFault struct {
	kind       string
	retryAfter int
	cutAfter   time.Duration // for stream cuts
}

// draw decides whether the request for op gets a fault, and which.
func (c *chaosState) draw(op string) (chaosFault, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cfg == nil || c.cfg.Rate <= 0 {
		return chaosFault{}, false
	}
	kinds := chaosKinds[op]
	if k, ok := c.cfg.Kinds[op]; ok {
		kinds = k
	}
	if len(kinds) == 0 || c.rng.Float64() >= c.cfg.Rate {
		return chaosFault{}, false
	}
	f := chaosFault{
		kind:       kinds[c.rng.IntN(len(kinds))],
		retryAfter: c.cfg.RetryAfter,
		cutAfter:   time.Duration(10+c.rng.IntN(90)) * time.Millisecond,
	}
	c.counts[op+"/"+f.kind]++
	return f, true
}

// applyChaos handles a request that drew fault f; next is the real handler.
func (s *Server) applyChaos(f chaosFault, w http.ResponseWriter, r *http.Request, next http.HandlerFunc) {
	retryAfter := f.retryAfter
	switch f.kind {
	case ChaosQueueFull:
		w.Header().Set("Retry-After", strconv.Itoa(retryAfter))
		writeError(w, http.StatusTooManyRequests, "queue_full", "the queue is full; retry later", nil)
	case ChaosTooManyStreams:
		w.Header().Set("Retry-After", strconv.Itoa(retryAfter))
		writeError(w, http.StatusTooManyRequests, "too_many_streams", "too many open event streams; poll or retry later", nil)
	case ChaosRateLimited:
		router.WriteError(w, http.StatusTooManyRequests, "rate_limited", "allowance exhausted; retry later",
			map[string]string{"Retry-After": strconv.Itoa(retryAfter)})
	case ChaosLostAnswer:
		next(newRecorder(), r)
		dropConnection(w)
	case ChaosUnavailable:
		writeError(w, http.StatusServiceUnavailable, "service_unavailable", "temporarily unavailable", nil)
	case ChaosHTML502:
		writeFault(w, Fault{Status: http.StatusBadGateway, Body: "<html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad Gateway</h1></center></body></html>"})
	case ChaosDrop:
		dropConnection(w)
	case ChaosStreamCut:
		ctx, cancel := context.WithTimeout(r.Context(), f.cutAfter)
		defer cancel()
		next(w, r.WithContext(ctx))
	default:
		next(w, r)
	}
}
