package client

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// constantSchedule waits the same time before every read.
type constantSchedule time.Duration

func (s constantSchedule) Next(*Job, bool) time.Duration { return time.Duration(s) }

const notImplementedBody = `{"error":{"code":"not_implemented","message":"no events"}}`

// A stream refused before it said anything tells nothing about the job: the wait keeps to its
// schedule instead of reading the job at once.
func TestWaitJobRefusedStreamDoesNotPromptARead(t *testing.T) {
	t.Parallel()
	id := "77777777-7777-7777-7777-777777777777"
	var reads atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/events") {
			status(http.StatusNotImplemented, nil, notImplementedBody)(w, r)
			return
		}
		reads.Add(1)
		status(http.StatusOK, nil, jobJSON(id, JobSucceeded))(w, r)
	}))
	defer srv.Close()
	c := testClient(t, srv.URL)
	job := &Job{ID: id, Status: JobRunning, URLs: JobURLs{Self: srv.URL + "/api/v2/jobs/" + id, Events: srv.URL + "/api/v2/jobs/" + id + "/events"}}
	// The deadline ends a wait whose first scheduled read is an hour away; the 501 comes long
	// before it.
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err := c.WaitJob(ctx, job, WaitOptions{schedule: constantSchedule(time.Hour)})
	if !errors.Is(err, context.DeadlineExceeded) || reads.Load() != 0 {
		t.Fatalf("WaitJob = %v after %d reads; want the deadline and no read (the 501 is no news of the job)", err, reads.Load())
	}
	if !c.eventsNotImplemented.Load() {
		t.Fatal("the 501 is not remembered")
	}
}

// Waits that start together on a service that has not yet answered an event stream ask for one
// stream, not one each: the others wait for its answer, a 501 here.
func TestConcurrentWaitsAskForOneEventStream(t *testing.T) {
	t.Parallel()
	const waits = 5
	var streams, firstReads atomic.Int32
	allRead := make(chan struct{})
	var c *Client
	var mu sync.Mutex
	readOnce := map[string]bool{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := strings.Split(strings.TrimPrefix(r.URL.Path, "/api/v2/jobs/"), "/")[0]
		if strings.HasSuffix(r.URL.Path, "/events") {
			streams.Add(1)
			<-allRead // every wait has started (and, before the fix, asked for its stream)
			status(http.StatusNotImplemented, nil, notImplementedBody)(w, r)
			return
		}
		mu.Lock()
		first := !readOnce[id]
		readOnce[id] = true
		mu.Unlock()
		if first && firstReads.Add(1) == waits {
			close(allRead)
		}
		// The jobs end once the client has the 501, so no wait ends while the stream is asked for.
		if c.eventsNotImplemented.Load() {
			status(http.StatusOK, nil, jobJSON(id, JobSucceeded))(w, r)
			return
		}
		status(http.StatusOK, nil, jobJSON(id, JobRunning))(w, r)
	}))
	defer srv.Close()
	c = testClient(t, srv.URL)
	var wg sync.WaitGroup
	for i := range waits {
		id := strings.Repeat(string(rune('a'+i)), 8) + "-0000-0000-0000-000000000000"
		job := &Job{ID: id, Status: JobRunning, URLs: JobURLs{Self: srv.URL + "/api/v2/jobs/" + id, Events: srv.URL + "/api/v2/jobs/" + id + "/events"}}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := c.WaitJob(context.Background(), job, WaitOptions{schedule: constantSchedule(time.Millisecond)}); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if n := streams.Load(); n != 1 {
		t.Fatalf("%d event stream requests from %d waits started together; want 1", n, waits)
	}
}

func TestEventsProbe(t *testing.T) {
	t.Parallel()
	never := func() bool { return false }
	ctx := context.Background()
	tests := []struct {
		name        string
		served      bool
		wantProbing bool
	}{
		{name: "a probe that failed lets the next wait probe", served: false, wantProbing: true},
		{name: "a served stream lets every wait open its own", served: true, wantProbing: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var p eventsProbe
			if probing, ok := p.begin(ctx, never); !probing || !ok {
				t.Fatalf("first begin = %v, %v; want the probe", probing, ok)
			}
			// A second wait is held until the probe settles.
			held, cancel := context.WithCancel(ctx)
			cancel()
			if _, ok := p.begin(held, never); ok {
				t.Fatal("a wait went ahead while the probe was in flight")
			}
			p.settle(tt.served)
			if probing, ok := p.begin(ctx, never); probing != tt.wantProbing || !ok {
				t.Fatalf("begin after settle(%v) = %v, %v; want %v, true", tt.served, probing, ok, tt.wantProbing)
			}
		})
	}
	var p eventsProbe
	if _, ok := p.begin(ctx, func() bool { return true }); ok {
		t.Fatal("a service known to serve no streams was asked again")
	}
}
