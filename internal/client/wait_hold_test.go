package client

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// A 429 with Retry-After on one job's read holds the reads of every wait of the client (the
// rows of a batch): the jobs whose waits begin meanwhile are not read before the Retry-After
// has passed, though their schedule would read them at once.
func TestRetryAfterOnOneReadHoldsEveryWait(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	reads := map[string][]time.Time{}
	var limitedAt time.Time
	limited := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := strings.TrimPrefix(r.URL.Path, "/api/v2/jobs/")
		mu.Lock()
		reads[id] = append(reads[id], time.Now())
		n := len(reads[id])
		mu.Unlock()
		switch {
		case n == 1: // the record the wait starts from
			_, _ = w.Write([]byte(jobJSON(id, "running")))
		case id == "a" && n == 2:
			mu.Lock()
			limitedAt = time.Now()
			mu.Unlock()
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
			_, _ = w.Write([]byte(`{"error":{"code":"rate_limited","message":"slow down"}}`))
			close(limited)
		default:
			_, _ = w.Write([]byte(jobJSON(id, "succeeded")))
		}
	}))
	defer srv.Close()
	c := testClient(t, srv.URL)
	ctx := context.Background()
	opts := WaitOptions{PollMin: 10 * time.Millisecond, PollMax: 100 * time.Millisecond, NoEvents: true}
	wait := func(id string, wg *sync.WaitGroup) {
		defer wg.Done()
		job, err := c.GetJob(ctx, id)
		if err == nil {
			job, err = c.WaitJob(ctx, job, opts)
		}
		if err != nil || job.Status != JobSucceeded {
			t.Errorf("wait for %s: %v, %v", id, job, err)
		}
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go wait("a", &wg)
	<-limited
	for _, id := range []string{"b", "c"} {
		wg.Add(1)
		go wait(id, &wg)
	}
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	for id, from := range map[string]int{"a": 2, "b": 1, "c": 1} {
		if len(reads[id]) <= from {
			t.Fatalf("job %s was read %d times, want a read after the 429", id, len(reads[id]))
		}
		for _, at := range reads[id][from:] { // every read after the 429 (and the one each wait starts from)
			if early := limitedAt.Add(time.Second).Sub(at); early > 20*time.Millisecond {
				t.Errorf("job %s read %v before the Retry-After of another job's read allowed", id, early)
			}
		}
	}
}
