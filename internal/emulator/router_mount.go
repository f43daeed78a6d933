package emulator

import (
	"time"

	"github.com/svc-org/terraform-provider-svc/internal/emulator/router"
)

// The model router lives in package router; these names keep the server's one surface for
// tests (options, operation names for Inject and Requests, demo models, inspection).

// RouterOptions configure the model router (Options.Router).
type RouterOptions = router.Options

// Router operation names for request counting and fault injection.
const (
	OpListModels     = router.OpListModels
	OpGetModel       = router.OpGetModel
	OpModelSchema    = router.OpModelSchema
	OpInvokeModel    = router.OpInvokeModel
	OpSubmitRequest  = router.OpSubmitRequest
	OpRequestStatus  = router.OpRequestStatus
	OpCollectRequest = router.OpCollectRequest
	OpCancelRequest  = router.OpCancelRequest
)

// Demo models of the router.
const (
	ModelEcho     = router.ModelEcho
	ModelPixel    = router.ModelPixel
	ModelFreeform = router.ModelFreeform
	ModelSlow     = router.ModelSlow
)

// RouterRuns reports how many runs of model the router started (replays start none).
func (s *Server) RouterRuns(model string) int { return s.router.Runs(model) }

// RouterKeysSeen returns the Idempotency-Key of every request of op (OpInvokeModel or
// OpSubmitRequest) that reached the handler, in order ("" for none).
func (s *Server) RouterKeysSeen(op string) []string { return s.router.KeysSeen(op) }

// RouterSchemaNotModified reports how many schema reads were answered 304.
func (s *Server) RouterSchemaNotModified() int { return s.router.SchemaNotModified() }

// RouterRequest reports a queued request's status and error type.
func (s *Server) RouterRequest(id string) (status, errorType string, ok bool) {
	return s.router.Request(id)
}

// WaitRouterRequest blocks until the queued request completes (or d passes) and reports whether it did.
func (s *Server) WaitRouterRequest(id string, d time.Duration) bool {
	return s.router.WaitRequest(id, d)
}

// ForgetRouterRequests ages out every queued request: their routes answer 410 from now on, as
// after the 24-hour retention.
func (s *Server) ForgetRouterRequests() { s.router.ForgetRequests() }
