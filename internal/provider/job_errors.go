package provider

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/svc-org/terraform-provider-svc/internal/client"
)

// describeSubmitError explains a failed submission and what the user can do about it.
func describeSubmitError(err error, key string) string {
	var unknown *client.UnknownOutcomeError
	var refused *client.RefusedJobRecordError
	switch {
	case errors.As(err, &refused):
		return fmt.Sprintf("The service created job %s (Idempotency-Key %s), but the provider refused its answer and sent "+
			"nothing more: %v\n\n"+
			"A link the provider cannot follow safely (one carrying a user name or password, or a scheme other than "+
			"http or https) is never followed. Check that endpoint is the service itself (not a proxy that rewrites "+
			"links). The job id is saved in state "+
			"and the resource is tainted, so the workflow is not submitted again until this job is dealt with: once "+
			"the endpoint is right, apply again (the job is canceled and the workflow resubmitted), or run "+
			"`terraform state rm <address>` to forget it.",
			refused.JobID, key, refused.Cause)
	case client.DeclinedUntilDeadline(err):
		return fmt.Sprintf("The service kept refusing the submission for now until the create timeout ran out, so no "+
			"job was created. Apply again later (the queue may have room then), or raise timeouts.create to wait longer.\n\n%v", err)
	case errors.As(err, &unknown):
		return fmt.Sprintf("The submission was sent but no definitive answer came back, so a job may or may not exist.\n\n"+
			"Idempotency-Key: %s\nCause: %v\n\n"+
			"The provider does not resend it: the key is single-use, so a retry would be rejected, and a new key could run "+
			"the workflow twice. Look for the job on the service (submitted with the key above); if it exists, bring it "+
			"under management with `terraform import <address> <job id>`. If none exists, apply again to submit under a new key.",
			key, unknown.Cause)
	case client.HasCode(err, "idempotency_key_reuse"):
		return fmt.Sprintf("The service has already seen Idempotency-Key %s (keys are single-use for 24 hours), so it "+
			"did not run the workflow again. If a job was created with this key, import it; otherwise unset "+
			"idempotency_key or choose a new one.\n\n%v", key, err)
	case client.HasCode(err, "workflow_format_ui"):
		return fmt.Sprintf("The service rejected the workflow as a UI-format export; submit the API format.\n\n%s\n\n%v", uiConversionHint, err)
	}
	return err.Error()
}

// describeWaitError explains a wait that ended before the job was terminal: a timeout, an
// interrupt, or a read that kept failing. The job keeps running on the service.
func describeWaitError(ctx context.Context, err error, last *client.Job, limit time.Duration) string {
	why := whyWaitEnded(ctx, err, limit, "Reading the job failed")
	return fmt.Sprintf("%s while job %s was %s. The job keeps running on the service and its id is saved in state, "+
		"marked tainted. To keep this job instead of running the workflow again, run `terraform untaint <address>` "+
		"and refresh later; otherwise the next apply cancels it and submits the workflow anew.",
		why, last.ID, last.Status)
}

// describeUnsuccessfulJob explains a job that ended failed, canceled or expired.
func describeUnsuccessfulJob(job *client.Job) string {
	var b strings.Builder
	switch job.Status {
	case client.JobCanceled:
		fmt.Fprintf(&b, "Job %s was canceled on the service before it finished.", job.ID)
	case client.JobExpired:
		fmt.Fprintf(&b, "Job %s expired on the service before it finished.", job.ID)
	default:
		fmt.Fprintf(&b, "Job %s failed.", job.ID)
	}
	if e := job.Error; e != nil {
		b.WriteString("\n\n")
		if e.NodeID != nil || e.ClassType != nil {
			fmt.Fprintf(&b, "Node %q (%s) raised ", deref(e.NodeID), deref(e.ClassType))
		}
		fmt.Fprintf(&b, "%s: %s", e.Code, e.Message)
		if e.Traceback != nil && *e.Traceback != "" {
			fmt.Fprintf(&b, "\n\nTraceback (last lines):\n%s", lastLines(*e.Traceback, 6))
		}
	}
	b.WriteString("\n\nThe job id is saved in state and the resource is tainted: the next apply submits the workflow again under a new idempotency key.")
	return b.String()
}

func deref(s *string) string {
	if s == nil {
		return "unknown"
	}
	return *s
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = append([]string{"  ..."}, lines[len(lines)-n:]...)
	}
	return strings.Join(lines, "\n")
}
