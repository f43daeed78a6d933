package provider

import (
	"context"
	"time"

	"github.com/svc-org/terraform-provider-svc/internal/client"
)

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
