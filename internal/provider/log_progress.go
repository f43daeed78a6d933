package provider

import (
	"context"

	"github.com/svc-org/terraform-provider-svc/internal/client"
)

// logRouterProgress logs, at INFO, a model request's new status or place in the queue.
func logRouterProgress(ctx context.Context, q *client.QueueRequest) {
	fields := map[string]any{"request_id": q.RequestID, "status": q.Status}
	if q.QueuePosition != nil {
		fields["queue_position"] = *q.QueuePosition // the value, not the pointer
	}
	logInfo(ctx, "model request status", fields)
}
