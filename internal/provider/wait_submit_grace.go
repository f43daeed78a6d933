package provider

import (
	"context"
	"time"
)

// submitGrace is how long a submission already on the wire may take to finish once the apply
// is interrupted (Ctrl-C) or times out: long enough for the service's answer, and the id in it,
// to arrive, so that a job that was created is never lost.
const submitGrace = 15 * time.Second

// outlivingInterrupt is the context of a submission made under ctx: once sent, it is not
// abandoned when ctx ends, but given submitGrace more to be answered. Nothing new starts after
// ctx ended: a ctx already done is handed back as it is, so the client reports "not sent".
// stop releases it, and must be called once the submission has returned.
func outlivingInterrupt(ctx context.Context) (submitCtx context.Context, stop context.CancelFunc) {
	if ctx.Err() != nil {
		return ctx, func() {}
	}
	submitCtx, stop = context.WithCancel(context.WithoutCancel(ctx))
	go func() {
		select {
		case <-submitCtx.Done():
			return
		case <-ctx.Done():
		}
		t := time.NewTimer(submitGrace)
		defer t.Stop()
		select {
		case <-t.C:
			stop()
		case <-submitCtx.Done():
		}
	}()
	return submitCtx, stop
}
