package provider

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/svc-org/terraform-provider-svc/internal/client"
)

// describeRouterCallError explains a failed submission or synchronous call, and what to do.
func describeRouterCallError(err error, in client.InvokeInput) string {
	var unknown *client.UnknownOutcomeError
	var apiErr *client.APIError
	errors.As(err, &apiErr)
	errorType, unknownType := client.UnknownServerErrorType(err)
	cause := err
	if errors.As(err, &unknown) {
		cause = unknown.Cause
	}
	switch {
	case client.RouterStillRunning(err):
		// The router said the run under the key goes on: a new key now would start a second,
		// billable run.
		return fmt.Sprintf("The router was still running the call to %s when the provider stopped waiting (the create "+
			"timeout ran out, or the router asked for a longer wait than this provider makes). The run goes on and is "+
			"billed.\n\nIdempotency-Key: %s\nCause: %v\n\n"+
			"To collect its result rather than start a second, billable run, set idempotency_key = %q in the "+
			"configuration and apply again: the same key and input collect the original run (the router keeps it for 24 "+
			"hours). To wait longer, raise timeouts.create; for long runs, mode = %q does not hold a connection.",
			in.Model, in.IdempotencyKey, cause, in.IdempotencyKey, modeQueued)
	case errors.As(err, &unknown):
		return fmt.Sprintf("The call to %s was sent, retried with the same key, and still got no definitive answer, so the "+
			"model may be running or have run.\n\nIdempotency-Key: %s\nCause: %v\n\n"+
			"The provider does not try a new key: that could run (and bill) the model twice. The router keeps the key's "+
			"outcome for 24 hours, so set idempotency_key = %q in the configuration and apply again: the same key and input "+
			"collect the original run.", in.Model, in.IdempotencyKey, unknown.Cause, in.IdempotencyKey)
	case client.InputRejected(err):
		return fmt.Sprintf("The router rejected the input against the schema of %s (not billed):\n\n%v", in.Model, err)
	case client.IdempotencyKeyConflict(err):
		return fmt.Sprintf("Idempotency-Key %s was used before with a different request, or its record cannot be replayed, "+
			"so the router refused to run it. Restore the original model and input to collect that run; choose a new "+
			"idempotency_key only if you mean a new, billable call.\n\n%v", in.IdempotencyKey, err)
	case client.RateLimited(err):
		msg := fmt.Sprintf("The router kept refusing the call for now (%s) after the provider's retries. Apply again later; "+
			"the same key is reused, so nothing runs twice.", apiErr.Code)
		if spend := apiErr.Spend(); spend.Remaining != "" {
			msg += fmt.Sprintf(" Committed spend: limit %s, current %s, remaining %s.", spend.Limit, spend.Current, spend.Remaining)
		}
		return msg + "\n\n" + err.Error()
	case unknownType:
		return fmt.Sprintf("%v\n\n(error type %q is not one this provider knows; it was handled as internal_error)", err, errorType)
	}
	return err.Error()
}

// describeRouterWaitError explains a wait that ended before the request completed.
func describeRouterWaitError(ctx context.Context, err error, last *client.QueueRequest, limit time.Duration) string {
	if last.Completed() {
		// The run is over (and billed): only collecting its result failed, and that can be
		// repeated without running the model again.
		why := whyWaitEnded(ctx, err, limit, "Collecting the result failed")
		return fmt.Sprintf("%s after request %s completed. The request id is saved in state and the resource is "+
			"tainted. To keep the run, run `terraform untaint <address>`: a later refresh collects the result again "+
			"(a replay, not a new run). Otherwise the next apply calls the model again.", why, last.RequestID)
	}
	why := whyWaitEnded(ctx, err, limit, "Reading the request failed")
	return fmt.Sprintf("%s while request %s was %s. The router keeps running it; its id is saved in state and the "+
		"resource is tainted, so nothing that uses its result goes on.\n\n"+
		"- To keep this run: `terraform untaint <address>`, then `terraform apply`. That apply starts no new run: it "+
		"updates the resource in place, waiting for request %[2]s and collecting its result.\n"+
		"- Left tainted, the next `terraform apply` cancels request %[2]s and calls the model again (a new, billed run).",
		why, last.RequestID, last.Status)
}

// describeFailedRun explains COMPLETED with an error_type, naming the type verbatim.
func describeFailedRun(q *client.QueueRequest) string {
	msg := fmt.Sprintf("Request %s completed with error_type %q.", q.RequestID, q.ErrorType)
	if class := client.RouterErrorClass(q.ErrorType); class != q.ErrorType {
		msg += fmt.Sprintf(" This provider does not know that type and handles it as %s.", class)
	}
	return msg + " The request id is saved in state and the resource is tainted: the next apply calls the model again " +
		"under a new idempotency key (a new, billable run)."
}
