package provider

import (
	"time"

	"github.com/svc-org/terraform-provider-svc/internal/client"
)

// settledRecord is what decides whether a refresh of svc_job can keep state without asking the
// service: read from state's values (settledRecordOf) by jobResource.Read and by
// settledJobServer (from the bytes Terraform sent), so both apply one rule.
type settledRecord struct {
	rerunOnExpiry bool
	status        string
	expiresAt     string
	outputsKnown  bool // the outputs list is neither null nor unknown
	outputs       []settledOutput
}

type settledOutput struct {
	hash         string // "" when null
	urlExpiresAt string
}

// settledAt reports whether a refresh at now can keep state without asking the service. A job
// that ended is fixed until its expires_at, except for what the service fills in or renews later:
// an output's hash (computed lazily) and its signed URL. So the record is settled when the job
// ended (succeeded, failed or canceled), expires_at is still ahead, every output has its hash, and
// every signed URL in state stays valid for urlKeepMargin. A batch of finished jobs then costs no
// request to plan or destroy; a job still running, near its expiry or missing a hash is read as
// before. With rerun_on_expiry set, every refresh reads, to see the service expire the job.
func (r settledRecord) settledAt(now time.Time) bool {
	switch r.status {
	case client.JobSucceeded, client.JobFailed, client.JobCanceled:
	default:
		return false
	}
	if r.rerunOnExpiry || !r.outputsKnown || !validUntil(r.expiresAt, now) {
		return false
	}
	for _, o := range r.outputs {
		if o.hash == "" || !validUntil(o.urlExpiresAt, now.Add(urlKeepMargin)) {
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
