package provider

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/hashicorp/terraform-plugin-log/tflogtest"

	"github.com/svc-org/terraform-provider-svc/internal/client"
)

// While queued, a job's and a model request's place in the queue is logged at INFO, as a number.
func TestQueuePositionLoggedAtInfo(t *testing.T) {
	t.Parallel()
	pos := int64(2)
	tests := []struct {
		name string
		log  func(ctx context.Context)
	}{
		{name: "job", log: func(ctx context.Context) {
			logJobProgress(ctx, &client.Job{ID: "j", Status: client.JobQueued, QueuePosition: &pos})
		}},
		{name: "model request", log: func(ctx context.Context) {
			logRouterProgress(ctx, &client.QueueRequest{RequestID: "r", Status: "IN_QUEUE", QueuePosition: &pos})
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var out bytes.Buffer
			tt.log(tflogtest.RootLogger(context.Background(), &out))
			var line map[string]any
			if err := json.Unmarshal(out.Bytes(), &line); err != nil {
				t.Fatalf("log line %q: %v", out.String(), err)
			}
			if line["@level"] != "info" || line["queue_position"] != float64(2) {
				t.Fatalf("log line %v: want level info and queue_position 2", line)
			}
		})
	}
}
