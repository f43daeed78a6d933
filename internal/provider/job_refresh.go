package provider

import (
	"context"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/svc-org/terraform-provider-svc/internal/client"
)

// jobSettledInState reports whether a refresh at now can keep state without asking the service
// (rerun_on_expiry off and the record settled). It reads only the attributes that decide, so a
// batch of finished jobs is not converted whole into models at every refresh.
func jobSettledInState(ctx context.Context, state tfsdk.State, now time.Time) bool {
	var m jobRecordModel
	var rerunOnExpiry types.Bool
	for name, target := range map[string]any{
		"rerun_on_expiry": &rerunOnExpiry, "status": &m.Status, "expires_at": &m.ExpiresAt, "outputs": &m.Outputs,
	} {
		if state.GetAttribute(ctx, path.Root(name), target).HasError() {
			return false
		}
	}
	return !rerunOnExpiry.ValueBool() && m.settledAt(ctx, now)
}

// settledAt reports whether a refresh at now can keep state without asking the service. A job
// that ended is fixed until its expires_at, except for what the service fills in or renews later:
// an output's hash (computed lazily) and its signed URL. So the record is settled when the job
// ended (succeeded, failed or canceled), expires_at is still ahead, every output has its hash, and
// every signed URL in state stays valid for urlKeepMargin. A batch of finished jobs then costs no
// request to plan or destroy; a job still running, near its expiry or missing a hash is read as
// before.
func (m jobRecordModel) settledAt(ctx context.Context, now time.Time) bool {
	switch m.Status.ValueString() {
	case client.JobSucceeded, client.JobFailed, client.JobCanceled:
	default:
		return false
	}
	expires, err := time.Parse(time.RFC3339Nano, m.ExpiresAt.ValueString())
	if err != nil || !now.Before(expires) {
		return false
	}
	if m.Outputs.IsNull() || m.Outputs.IsUnknown() {
		return false
	}
	var outputs []outputModel
	if m.Outputs.ElementsAs(ctx, &outputs, false).HasError() {
		return false
	}
	for _, o := range outputs {
		if o.Hash.IsNull() || o.Hash.ValueString() == "" || !validUntil(o.URLExpiresAt.ValueString(), now.Add(urlKeepMargin)) {
			return false
		}
	}
	return true
}

// validUntil reports whether an RFC 3339 expiry is after t.
func validUntil(expiry string, t time.Time) bool {
	at, err := time.Parse(time.RFC3339Nano, expiry)
	return err == nil && at.After(t)
}
