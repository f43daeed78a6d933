package provider

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
)

// releasingServer passes every per-resource and per-data-source call to the framework with a
// requestContext released when the call returns. Calls made once per provider (schema,
// configuration, stop) go through unchanged: they are few.
//
// It works around a defect of terraform-plugin-framework: the framework keeps one cancel
// function per call until the provider stops. It derives a cancellable context from each call's
// context and keeps that context's cancel function until Terraform stops the provider, so that
// stopping cancels every call (proto6server's registerContext appends to contextCancels, which
// only StopProvider empties). Each kept function holds its context and, through it, the call's
// whole context chain (the gRPC stream, the loggers and their fields): about 20 KiB per call that
// no collection can free while the provider runs, so memory grew with every resource of a batch
// (60 MiB more live heap per 1,000 resources planned, and the collector re-marked all of it each
// cycle; live heap 35 MiB for 500 jobs). What the framework keeps now is a released
// requestContext: a few hundred bytes (4 MiB for 500 jobs).
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
