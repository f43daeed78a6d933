package provider

import (
	"context"
	"errors"
	"runtime"
	"testing"
	"time"
	"weak"
)

type requestContextKey struct{}

// payload stands for what a call's context chain holds (loggers, the gRPC stream).
type payload struct{ name string }

func TestRequestContextAnswersAsItsParentWhileTheCallRuns(t *testing.T) {
	t.Parallel()
	deadline := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	parent, cancel := context.WithDeadline(context.WithValue(context.Background(), requestContextKey{}, "v"), deadline)
	defer cancel()
	rc := newRequestContext(parent)
	defer rc.release()
	if got := rc.Value(requestContextKey{}); got != "v" {
		t.Errorf("Value = %v, want the parent's", got)
	}
	if d, ok := rc.Deadline(); !ok || !d.Equal(deadline) {
		t.Errorf("Deadline = %v %v, want the parent's", d, ok)
	}
	select {
	case <-rc.Done():
		t.Fatal("done before the parent is cancelled or the call returns")
	default:
	}
	if rc.Err() != nil {
		t.Errorf("Err = %v while running", rc.Err())
	}
	cancel()
	<-rc.Done()
	if !errors.Is(rc.Err(), context.DeadlineExceeded) && !errors.Is(rc.Err(), context.Canceled) {
		t.Errorf("Err = %v after the parent was cancelled", rc.Err())
	}
}

// The framework keeps a cancel function derived from every call's context until the provider
// stops: once the call returns, that must not keep the call's context chain alive.
func TestRequestContextReleasesItsParent(t *testing.T) {
	t.Parallel()
	kept, weakHeld := callKeepingACancel(t)
	runtime.GC()
	if weakHeld.Value() != nil {
		t.Error("the call's context chain is still reachable through the kept cancel function")
	}
	runtime.KeepAlive(kept)
}

// callKeepingACancel runs a call as the framework does, keeping a cancel function derived from
// the call's context, and returns it with a weak pointer to a value of the call's context chain.
// The chain's own cancel function is called before returning, as gRPC does when a call ends.
func callKeepingACancel(t *testing.T) (context.CancelFunc, weak.Pointer[payload]) {
	held := &payload{name: "held by the call's context"}
	parent, cancelParent := context.WithCancel(context.WithValue(context.Background(), requestContextKey{}, held))
	defer cancelParent()
	var kept context.CancelFunc
	_, err := withRequestContext(parent, 1, func(ctx context.Context, _ int) (int, error) {
		_, kept = context.WithCancel(ctx)
		if ctx.Value(requestContextKey{}) != held {
			t.Error("the call does not see its context's values")
		}
		return 0, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return kept, weak.Make(held)
}

func TestRequestContextAfterRelease(t *testing.T) {
	t.Parallel()
	rc := newRequestContext(context.WithValue(context.Background(), requestContextKey{}, "v"))
	rc.release()
	select {
	case <-rc.Done():
	default:
		t.Fatal("not done after release")
	}
	if !errors.Is(rc.Err(), context.Canceled) {
		t.Errorf("Err = %v, want Canceled", rc.Err())
	}
	if rc.Value(requestContextKey{}) != nil {
		t.Error("Value still answers after release")
	}
}
