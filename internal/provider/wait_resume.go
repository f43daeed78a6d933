package provider

import (
	"context"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// The rules shared by the resumed waits of svc_job, svc_prompt and svc_router_request: an
// in-place update that follows, by its id, what an earlier apply left running.

// resumedWait is a wait resumed in an update: ctx carries the provider's log fields, and
// waitCtx, made from it, also ends once limit (timeouts.create) has passed.
type resumedWait struct {
	ctx, waitCtx context.Context
	cancel       context.CancelFunc
	limit        time.Duration
}

// startResumedWait reads timeouts.create (def when unset) and starts the wait's contexts; ok is
// false when the timeout could not be read (the diagnostic is in diags).
func (d *providerData) startResumedWait(ctx context.Context, t timeouts.Value, def time.Duration, diags *diag.Diagnostics) (resumedWait, bool) {
	limit, readDiags := t.Create(ctx, def)
	diags.Append(readDiags...)
	if diags.HasError() {
		return resumedWait{}, false
	}
	ctx = d.logContext(ctx)
	waitCtx, cancel := context.WithTimeout(ctx, limit)
	return resumedWait{ctx: ctx, waitCtx: waitCtx, cancel: cancel, limit: limit}, true
}

// stillInFlight reports whether state holds an id whose last known status is set and not final:
// the only kind of record a resumed wait can follow to its end (with no status read, there is
// nothing to say it has not ended).
func stillInFlight(id, status types.String, final func(string) bool) bool {
	s := status.ValueString()
	return id.ValueString() != "" && s != "" && !final(s)
}
