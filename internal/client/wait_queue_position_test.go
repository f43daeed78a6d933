package client

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"
)

// A job moving up the queue is reported to OnUpdate at each new position, so the provider can
// log it while the status stays queued.
func TestWaitJobReportsQueuePositionChanges(t *testing.T) {
	t.Parallel()
	id := "66666666-6666-6666-6666-666666666666"
	queuedAt := func(pos string) http.HandlerFunc {
		return status(200, nil, strings.Replace(jobJSON(id, JobQueued), `"queue_position":0`, `"queue_position":`+pos, 1))
	}
	s, c := scriptedClient(t, []http.HandlerFunc{queuedAt("3"), queuedAt("2"), queuedAt("1"), status(200, nil, jobJSON(id, JobSucceeded))})
	three := int64(3)
	start := &Job{ID: id, Status: JobQueued, QueuePosition: &three, URLs: JobURLs{Self: s.url + "/api/v2/jobs/" + id}}
	var seen []int64
	_, err := c.WaitJob(context.Background(), start, WaitOptions{NoEvents: true, PollMin: time.Millisecond, PollMax: 5 * time.Millisecond,
		OnUpdate: func(j *Job) {
			if j.Status == JobQueued && j.QueuePosition != nil {
				seen = append(seen, *j.QueuePosition)
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	if len(seen) != 2 || seen[0] != 2 || seen[1] != 1 {
		t.Fatalf("OnUpdate saw queue positions %v, want [2 1]", seen)
	}
}
