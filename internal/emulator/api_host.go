package emulator

import (
	"context"
	"net/http"
	"time"
)

// apiHost lends the APIs mounted from subpackages (router, registry) the server's shared
// middleware (request id, counting, fault injection), its pauses and its goroutine accounting.
type apiHost struct{ s *Server }

func (h apiHost) Route(pattern, op string, handler http.HandlerFunc, auth func(http.ResponseWriter, *http.Request) bool) {
	h.s.route(pattern, op, handler, authWith(auth))
}

func (h apiHost) Sleep(ctx context.Context, d time.Duration) error { return h.s.sleep(ctx, d) }

func (h apiHost) Done() <-chan struct{} { return h.s.done }

func (h apiHost) Go(f func()) {
	h.s.wg.Add(1)
	go func() {
		defer h.s.wg.Done()
		f()
	}()
}
