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
	case errors.As(err, &unknown) && unknown.FirstArrived:
		return fmt.Sprintf("The submission reached the service, but its answer was lost: a resend under the same "+
			"Idempotency-Key was refused as a reuse of that key, so a job may exist that the provider cannot name (the "+
			"service has no job listing to look it up in), and nothing ran twice.\n\n"+
			"Idempotency-Key: %s\nCause: %v\n\n"+
			"The provider does not resend it under a new key: that could run the workflow twice. If you learn the job's "+
			"id, `terraform import <address> <job id>` brings it under management; to run the workflow again on purpose, "+
			"set an idempotency_key other than %s.",
			key, unknown.Cause, key)
	case errors.As(err, &unknown):
		return fmt.Sprintf("The submission may have reached the service, but no definitive answer came back, so a job may "+
			"exist that the provider cannot name (the service has no job listing to look it up in).\n\n"+
			"Idempotency-Key: %s\nCause: %v\n\n"+
			"The provider does not resend it under a new key: that could run the workflow twice. To run it at most once, "+
			"set idempotency_key = %q in the configuration and apply again: if the first submission never arrived, this "+
			"one runs the workflow; if it did, the service refuses the used key (idempotency_key_reuse) and nothing runs "+
			"twice. If you learn the job's id, `terraform import <address> <job id>` brings it under management.",
			key, unknown.Cause, key)
	case client.HasCode(err, "idempotency_key_reuse"):
		return fmt.Sprintf("The service has already seen Idempotency-Key %s (keys are single-use for 24 hours), so it "+
			"did not run the workflow again. If a job was created with this key, import it; otherwise unset "+
			"idempotency_key or choose a new one.\n\n%v", key, err)
	case client.HasCode(err, "workflow_format_ui"):
		return fmt.Sprintf("The service rejected the workflow as a UI-format export; submit the API format.\n\n%s\n\n%v", uiConversionHint, err)
	}
	return err.Error()
}

// describeWaitError explains a wait that ended before the job was terminal (a timeout, or a
// read that kept failing) and exactly what the next apply does. The job keeps running on the
// service. In a create the resource is tainted, so nothing that uses its outputs goes on.
func describeWaitError(ctx context.Context, err error, last *client.Job, limit time.Duration, inCreate bool) string {
	why := whyWaitEnded(ctx, err, limit, "Reading the job failed")
	if !inCreate {
		return fmt.Sprintf("%s while job %s was %s. The job keeps running on the service and stays in state with that "+
			"status. The next `terraform apply` submits nothing: it waits for this same job again (raise timeouts.create "+
			"to wait longer).", why, last.ID, last.Status)
	}
	return fmt.Sprintf("%s while job %s was %s. The job keeps running on the service; its id is saved in state and the "+
		"resource is tainted, so nothing that uses its outputs goes on.\n\n"+
		"- To wait for this same job: run `terraform untaint <address>`, then `terraform apply`. That apply submits "+
		"nothing: it updates the resource in place, waiting for job %[2]s and filling in its outputs.\n"+
		"- Left tainted, the next `terraform apply` cancels job %[2]s and submits the workflow again (a second, "+
		"billed run).", why, last.ID, last.Status)
}

// describeUnsuccessfulJob explains a job that ended failed, canceled or expired.
func describeUnsuccessfulJob(job *client.Job, inCreate bool) string {
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
			fmt.Fprintf(&b, "Node %q (%s) raised ", derefOrUnknown(e.NodeID), derefOrUnknown(e.ClassType))
		}
		fmt.Fprintf(&b, "%s: %s", e.Code, e.Message)
		if e.Traceback != nil && *e.Traceback != "" {
			fmt.Fprintf(&b, "\n\nTraceback (last lines):\n%s", lastLines(*e.Traceback, 6))
		}
	}
	if inCreate {
		b.WriteString("\n\nThe job id is saved in state and the resource is tainted: the next apply submits the workflow again under a new idempotency key.")
	} else {
		b.WriteString("\n\nThe job is saved in state with this status. To run the workflow again, run `terraform apply -replace=<address>`.")
	}
	return b.String()
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = append([]string{"  ..."}, lines[len(lines)-n:]...)
	}
	return strings.Join(lines, "\n")
}
