package provider

import (
	"time"

	"github.com/svc-org/terraform-provider-svc/internal/client"
)

// settledRecord is what decides whether a refresh of svc_job keeps state without asking the
// service: read from state's values (settledRecordOf) by jobResource.Read and by
// settledJobServer (from the bytes Terraform sent), so both apply one rule.
type settledRecord struct {
	rerunOnExpiry bool
	status        string
	expiresAt     string
}

// settledRecordOf reads from svc_job's state what the refresh rule decides by.
func settledRecordOf(state *jobModel) settledRecord {
	return settledRecord{rerunOnExpiry: state.RerunOnExpiry.ValueBool(), status: state.Status.ValueString(), expiresAt: state.ExpiresAt.ValueString()}
}

// ended reports whether the job has ended (succeeded, failed or canceled). An ended job is
// settled for good: nothing in its record is read again, whatever the service does later with
// it (a hash computed lazily stays null in state, the content being verified where it is
// downloaded; signed URLs are not kept in state at all). A refresh, a plan or a destroy of a
// batch of finished jobs then sends no request, on any server the contract allows.
func (r settledRecord) ended() bool {
	switch r.status {
	case client.JobSucceeded, client.JobFailed, client.JobCanceled:
		return true
	}
	return false
}

// rerunDueAt reports whether an ended job is to leave state at now, so that the next apply runs
// it again: rerun_on_expiry is set and now is past its expires_at. Expiry is decided from
// expires_at alone, without asking the service.
func (r settledRecord) rerunDueAt(now time.Time) bool {
	return r.rerunOnExpiry && pastExpiry(r.expiresAt, now)
}

// settledAt reports whether a refresh at now keeps state as it is and sends nothing: the job
// has ended and is not due to run again.
func (r settledRecord) settledAt(now time.Time) bool {
	return r.ended() && !r.rerunDueAt(now)
}

// pastExpiry reports whether an RFC 3339 expiry is before now; false when it is not a time.
func pastExpiry(expiresAt string, now time.Time) bool {
	t, err := time.Parse(time.RFC3339Nano, expiresAt)
	return err == nil && now.After(t)
}
