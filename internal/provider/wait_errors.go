package provider

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/svc-org/terraform-provider-svc/internal/client"
)

// whyWaitEnded says why waiting for a job, prompt or request stopped before it was terminal:
// the create timeout, an interrupt, or failing reads (what failed is named by failure).
func whyWaitEnded(ctx context.Context, err error, limit time.Duration, failure string) string {
	var rideOut *client.RideOutError
	switch {
	case errors.Is(err, context.DeadlineExceeded) && errors.As(err, &rideOut):
		// The service's failures, not the job, used up the wait: say so, with what failed.
		return fmt.Sprintf("The create timeout (%s) passed with the service failing (the last %d attempt(s) in a row failed, "+
			"over the last %s, since %s; the last: %v)", limit, rideOut.Failures, time.Since(rideOut.Since).Round(time.Second),
			rideOut.Since.UTC().Format(time.RFC3339), rideOut.Last)
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Sprintf("The create timeout (%s) passed", limit)
	case errors.Is(err, context.Canceled) || ctx.Err() != nil:
		return "Terraform was interrupted"
	}
	return fmt.Sprintf("%s (%v)", failure, err)
}
