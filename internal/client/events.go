package client

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"time"
)

// sseEvent is one Server-Sent Events frame.
type sseEvent struct {
	Event string
	Data  string
}

// maxSSELine bounds one line of an event stream.
const maxSSELine = 1 << 20

// readSSE parses a Server-Sent Events stream and calls fn for each dispatched event. It returns
// when the stream ends, fn returns an error, or a line exceeds the bound.
func readSSE(r io.Reader, fn func(sseEvent) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), maxSSELine)
	sc.Split(scanSSELines) // a lone CR ends a line too
	var ev sseEvent
	var data []string
	dispatch := func() error {
		if len(data) == 0 {
			ev = sseEvent{}
			return nil
		}
		ev.Data = strings.Join(data, "\n")
		if ev.Event == "" {
			ev.Event = "message"
		}
		err := fn(ev)
		ev, data = sseEvent{}, data[:0]
		return err
	}
	for sc.Scan() {
		line := strings.TrimSuffix(sc.Text(), "\r")
		if line == "" {
			if err := dispatch(); err != nil {
				return err
			}
			continue
		}
		if strings.HasPrefix(line, ":") {
			continue // comment / keep-alive
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "event":
			ev.Event = value
		case "data":
			data = append(data, value)
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	return nil // an unterminated last event is dropped, as the SSE rules say
}

// wakeup is a hint from the event stream that the job record changed.
type wakeup struct {
	urgent bool // the terminal status: re-read now
}

// followEvents opens one connection of the job's event stream and turns each of its events
// into a wake-up, in the background. The channel closes when the connection ends: refused (429
// too_many_streams, 501 not_implemented, or anything else unexpected: polling then carries on
// alone), cut, or after the terminal status. The wait loop decides whether to redial
// (eventStream).
func (c *Client) followEvents(ctx context.Context, eventsURL string) *eventConn {
	wake := make(chan wakeup, 1)
	conn := &eventConn{wake: wake}
	go func() {
		defer close(wake)
		ticket, ok := c.streamMayLeave(ctx)
		if !ok {
			c.log.Debug(ctx, "job event stream not asked for while requests fail; polling instead", nil)
			return
		}
		resp, err := c.openEventStream(ctx, eventsURL)
		outcome, retryAfter := readOutcome(err)
		c.report(ticket, outcome, retryAfter)
		if err != nil {
			c.log.Debug(ctx, "job event stream unavailable; polling instead", map[string]any{"error": err.Error()})
			return
		}
		conn.opened = true
		defer resp.Body.Close()
		err = readSSE(resp.Body, func(ev sseEvent) error {
			// Only the terminal status cannot wait; every other event is a hint that the loop
			// coalesces, so a chatty stream does not turn into a read per step.
			urgent := ev.Event == "status" && terminalStatusEvent(ev.Data)
			conn.sawTerminal = conn.sawTerminal || urgent
			offerWakeup(wake, urgent)
			return nil
		})
		if !conn.sawTerminal && ctx.Err() == nil {
			c.log.Debug(ctx, "job event stream ended early", map[string]any{"error": errString(err)})
		}
	}()
	return conn
}

// streamMayLeave waits for an event stream's turn among the client's requests due together, and
// reports whether it may be asked for, with the ticket it leaves with. While requests fail the
// service may be down: a stream asked for then would meet the outage, one per wait, past the
// gate that holds their reads (a restart cuts every stream at once), so the wait polls through
// the gate instead, and does not redial.
func (c *Client) streamMayLeave(ctx context.Context) (gateTicket, bool) {
	if c.gate.failing() {
		return gateTicket{}, false
	}
	wait, _, ticket := c.turn(ctx, c.gate.admit)
	if wait > 0 {
		return gateTicket{}, false
	}
	if ctx.Err() != nil { // the wait ended in the stream's turn: it never left
		c.report(ticket, gateNothing, 0)
		return gateTicket{}, false
	}
	return ticket, true
}

// offerWakeup hands a wake-up to the loop without blocking: one pending wake-up covers any
// number of events, but an urgent one replaces a pending hint.
func offerWakeup(wake chan wakeup, urgent bool) {
	select {
	case wake <- wakeup{urgent: urgent}:
		return
	default:
	}
	if !urgent {
		return
	}
	select {
	case <-wake:
	default:
	}
	select {
	case wake <- wakeup{urgent: true}:
	default:
	}
}

// eventSource is the job's event stream at eventsURL for a wait: one connection at a time,
// redialled after the client's backoff.
func (c *Client) eventSource(eventsURL string) *eventSource {
	return &eventSource{
		open:       func(ctx context.Context) *eventConn { return c.followEvents(ctx, eventsURL) },
		redialWait: func(redial int) time.Duration { return jitteredBackoff(c.retryWaitMin, c.retryWaitMax, redial) },
	}
}

// openEventStream asks for the job's event stream once the service is known to serve them, or
// when no other wait is asking first (eventsProbe). A 501 is remembered: the service serves none.
func (c *Client) openEventStream(ctx context.Context, eventsURL string) (*http.Response, error) {
	probing, ok := c.eventsProbe.begin(ctx, c.eventsNotImplemented.Load)
	if !ok {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		return nil, errEventsNotImplemented
	}
	resp, err := c.do(ctx, call{
		op: "follow job events", method: http.MethodGet, url: eventsURL,
		cred: credBearerKey, header: http.Header{"Accept": {"text/event-stream"}},
		policy: retryNever, stream: true,
	})
	if statusOf(err) == http.StatusNotImplemented {
		c.eventsNotImplemented.Store(true)
	}
	if probing {
		c.eventsProbe.settle(err == nil)
	}
	return resp, err
}

// errEventsNotImplemented ends a wait's stream when another wait learned that the service
// serves no event streams.
var errEventsNotImplemented = errors.New("the service serves no event streams (501)")

// terminalStatusEvent reports whether a status event's data, {"status": ...}, names a terminal
// status. It is only a hint to re-read the record: data that is not such an object is not one.
func terminalStatusEvent(data string) bool {
	var ev struct {
		Status string `json:"status"`
	}
	return json.Unmarshal([]byte(data), &ev) == nil && JobTerminal(ev.Status)
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
