package provider

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// whyWaitEnded says why waiting for a job, prompt or request stopped before it was terminal:
// the create timeout, an interrupt, or failing reads (what failed is named by failure).
func whyWaitEnded(ctx context.Context, err error, limit time.Duration, failure string) string {
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Sprintf("The create timeout (%s) passed", limit)
	case errors.Is(err, context.Canceled) || ctx.Err() != nil:
		return "Terraform was interrupted"
	}
	return fmt.Sprintf("%s (%v)", failure, err)
}
