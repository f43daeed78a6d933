package provider

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
)

// NewProtocol6Server returns the provider's plugin server: the framework's, with every
// per-resource call given a request context that lets go of the call's own context when the
// call returns, behind three layers that answer the commonest svc_job calls of a batch
// themselves where the framework is known to give the same answer: settledJobServer (finished
// jobs that change nothing, their states and their destruction), jobCreatePlanServer (the plan
// of a new job) and jobValidateServer (a configuration with nothing wrong).
//
// The framework derives a cancellable context from each call's context and keeps its cancel
// function until Terraform stops the provider, so that stopping cancels every call. Each kept
// function holds its context and, through it, the call's whole context chain (the gRPC stream,
// the loggers and their fields): about 20 KiB per call that no collection can free while the
// provider runs, so memory grew with every resource of a batch (60 MiB more live heap per
// 1,000 resources planned, and the collector re-marked all of it each cycle). What the framework
// keeps now is a released requestContext: a few hundred bytes.
func NewProtocol6Server(version string) func() tfprotov6.ProviderServer {
	return protocol6Server(version, time.Now)
}

// protocol6Server is NewProtocol6Server with the clock the provider compares expiry times with.
func protocol6Server(version string, now func() time.Time) func() tfprotov6.ProviderServer {
	return func() tfprotov6.ProviderServer { return serverStack(newSvcProvider(version, now)) }
}

// serverStack is the framework's server of provider p under the plugin's own layers: each layer
// answers some calls itself and passes the others on, down to the framework. Layers that judge a
// call by the provider's settings or clock read them from p.
func serverStack(p *svcProvider) tfprotov6.ProviderServer {
	var s tfprotov6.ProviderServer = releasingServer{providerserver.NewProtocol6(p)()}
	s = newSettledJobServer(s, p.now, p.configuredData)
	s = newJobCreatePlanServer(s, p.configuredData)
	s = newJobValidateServer(s)
	s = newJobBatchServer(s)
	return s
}

// releasingServer passes every per-resource and per-data-source call to the framework with a
// requestContext released when the call returns. Calls made once per provider (schema,
// configuration, stop) go through unchanged: they are few.
type releasingServer struct {
	tfprotov6.ProviderServer
}

func (s releasingServer) ValidateResourceConfig(ctx context.Context, req *tfprotov6.ValidateResourceConfigRequest) (*tfprotov6.ValidateResourceConfigResponse, error) {
	return withRequestContext(ctx, req, s.ProviderServer.ValidateResourceConfig)
}

func (s releasingServer) UpgradeResourceState(ctx context.Context, req *tfprotov6.UpgradeResourceStateRequest) (*tfprotov6.UpgradeResourceStateResponse, error) {
	return withRequestContext(ctx, req, s.ProviderServer.UpgradeResourceState)
}

func (s releasingServer) ReadResource(ctx context.Context, req *tfprotov6.ReadResourceRequest) (*tfprotov6.ReadResourceResponse, error) {
	return withRequestContext(ctx, req, s.ProviderServer.ReadResource)
}

func (s releasingServer) PlanResourceChange(ctx context.Context, req *tfprotov6.PlanResourceChangeRequest) (*tfprotov6.PlanResourceChangeResponse, error) {
	return withRequestContext(ctx, req, s.ProviderServer.PlanResourceChange)
}

func (s releasingServer) ApplyResourceChange(ctx context.Context, req *tfprotov6.ApplyResourceChangeRequest) (*tfprotov6.ApplyResourceChangeResponse, error) {
	return withRequestContext(ctx, req, s.ProviderServer.ApplyResourceChange)
}

func (s releasingServer) ImportResourceState(ctx context.Context, req *tfprotov6.ImportResourceStateRequest) (*tfprotov6.ImportResourceStateResponse, error) {
	return withRequestContext(ctx, req, s.ProviderServer.ImportResourceState)
}

func (s releasingServer) ValidateDataResourceConfig(ctx context.Context, req *tfprotov6.ValidateDataResourceConfigRequest) (*tfprotov6.ValidateDataResourceConfigResponse, error) {
	return withRequestContext(ctx, req, s.ProviderServer.ValidateDataResourceConfig)
}

func (s releasingServer) ReadDataSource(ctx context.Context, req *tfprotov6.ReadDataSourceRequest) (*tfprotov6.ReadDataSourceResponse, error) {
	return withRequestContext(ctx, req, s.ProviderServer.ReadDataSource)
}

func (s releasingServer) CallFunction(ctx context.Context, req *tfprotov6.CallFunctionRequest) (*tfprotov6.CallFunctionResponse, error) {
	return withRequestContext(ctx, req, s.ProviderServer.CallFunction)
}

// withRequestContext runs call with a requestContext over ctx, released when call returns.
func withRequestContext[Req, Resp any](ctx context.Context, req Req, call func(context.Context, Req) (Resp, error)) (Resp, error) {
	rc := newRequestContext(ctx)
	defer rc.release()
	return call(rc, req)
}

// A requestContext answers as its parent (values, deadline, cancellation) while the call runs,
// and once released holds nothing of it: Done is closed, Err is the parent's error or
// context.Canceled, Value is nil. Nothing may use a call's context after the call returns, so
// whoever still holds one only keeps this small struct alive.
type requestContext struct {
	parent     atomic.Pointer[context.Context]
	done       chan struct{}
	finishOnce sync.Once
	err        atomic.Pointer[error]
	stopWatch  func() bool
}

func newRequestContext(parent context.Context) *requestContext {
	rc := &requestContext{done: make(chan struct{})}
	rc.parent.Store(&parent)
	rc.stopWatch = context.AfterFunc(parent, func() { rc.finish(parent.Err()) })
	return rc
}

// release ends the context and drops the parent and everything reachable from it (the
// watch's stop function holds the parent too). Only the goroutine that made rc calls it.
func (rc *requestContext) release() {
	rc.stopWatch()
	rc.stopWatch = nil
	rc.finish(context.Canceled)
	rc.parent.Store(nil)
}

func (rc *requestContext) finish(err error) {
	rc.finishOnce.Do(func() {
		rc.err.Store(&err)
		close(rc.done)
	})
}

func (rc *requestContext) Deadline() (time.Time, bool) {
	if p := rc.parent.Load(); p != nil {
		return (*p).Deadline()
	}
	return time.Time{}, false
}

func (rc *requestContext) Done() <-chan struct{} { return rc.done }

func (rc *requestContext) Err() error {
	if err := rc.err.Load(); err != nil {
		return *err
	}
	return nil
}

func (rc *requestContext) Value(key any) any {
	if p := rc.parent.Load(); p != nil {
		return (*p).Value(key)
	}
	return nil
}
