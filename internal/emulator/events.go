package emulator

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"
)

// heartbeat is how often an idle events stream sends an SSE comment.
const heartbeat = 15 * time.Second

func (s *Server) registerEventRoutes() {
	s.route("GET /api/v2/jobs/{id}/events", OpJobEvents, s.handleEvents)
}

// handleEvents serves a job's live stream as Server-Sent Events: the current
// status (and progress, when running) first, then status, progress, output and
// log events as they happen; the stream ends after the terminal status.
func (s *Server) handleEvents(w http.ResponseWriter, r *http.Request) {
	if s.opts.EventsDisabled {
		writeError(w, http.StatusNotImplemented, "not_implemented", "this surface has no event stream; poll the job", nil)
		return
	}
	flusher, ok := w.(http.Flusher)
	if !ok {
		writeError(w, http.StatusNotImplemented, "not_implemented", "streaming is not supported on this connection", nil)
		return
	}
	now := s.now()
	j := s.lockJobOr404(w, r, now)
	if j == nil {
		return
	}
	if s.opts.MaxStreams > 0 && s.streams >= s.opts.MaxStreams {
		s.mu.Unlock()
		w.Header().Set("Retry-After", strconv.Itoa(s.opts.RetryAfter))
		writeError(w, http.StatusTooManyRequests, "too_many_streams", "too many open event streams; poll or retry later", nil)
		return
	}
	s.streams++
	defer func() {
		s.mu.Lock()
		s.streams--
		s.mu.Unlock()
	}()
	first := s.currentEventsLocked(j)
	next, changed := len(j.events), j.changed
	s.mu.Unlock()

	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)

	if writeEvents(w, flusher, first) {
		return
	}
	if s.opts.EventsTerminalFlood > 0 {
		floodTerminalStatus(w, flusher, r, s.opts.EventsTerminalFlood)
		return
	}
	tick := time.NewTicker(heartbeat)
	defer tick.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-s.done:
			return
		case <-tick.C:
			fmt.Fprint(w, ": keepalive\n\n")
			flusher.Flush()
			continue
		case <-changed:
		}
		s.mu.Lock()
		evs := s.eventsSinceLocked(r, j, next)
		next, changed = len(j.events), j.changed
		s.mu.Unlock()
		if writeEvents(w, flusher, evs) {
			return
		}
	}
}

// floodTerminalStatus repeats a terminal status event every interval until the client leaves.
func floodTerminalStatus(w http.ResponseWriter, flusher http.Flusher, r *http.Request, interval time.Duration) {
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-tick.C:
		}
		if _, err := fmt.Fprint(w, "event: status\ndata: {\"status\":\"succeeded\"}\n\n"); err != nil {
			return
		}
		flusher.Flush()
	}
}

// currentEventsLocked is what a new stream starts with: the job's status (with its queue
// position), and its progress while it runs.
func (s *Server) currentEventsLocked(j *job) []event {
	var pos any
	if p := s.queuePositionLocked(j); p > 0 {
		pos = p
	}
	first := []event{{name: "status", data: map[string]any{"status": j.status, "queue_position": pos}, terminal: isTerminal(j.status)}}
	if j.progress != nil && !isTerminal(j.status) {
		first = append(first, event{name: "progress", data: *j.progress})
	}
	return first
}

// eventsSinceLocked is the job's events from index next on, outputs rendered for this request.
func (s *Server) eventsSinceLocked(r *http.Request, j *job, next int) []event {
	now := s.now()
	evs := append([]event(nil), j.events[next:]...)
	for i, e := range evs {
		if e.output != nil {
			evs[i].data = s.renderOutputLocked(r, j, e.output, now)
		}
	}
	return evs
}

// writeEvents writes evs as Server-Sent Events up to the terminal one, flushes, and reports
// whether the stream has ended.
func writeEvents(w io.Writer, flusher http.Flusher, evs []event) (ended bool) {
	for _, e := range evs {
		b, err := json.Marshal(e.data)
		if err != nil {
			continue
		}
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", e.name, b)
		if e.terminal {
			ended = true
			break
		}
	}
	flusher.Flush()
	return ended
}
