package client

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"time"
)

// PromptOutput is one file a node reported in an executed message.
type PromptOutput struct {
	NodeID    string
	Filename  string
	Subfolder string
	Type      string // "output" (final) or "temp" (preview)
	Kind      string // "image", "video", "audio", or the list's own name for other kinds
}

// ExecutionError is the payload of an execution_error message.
type ExecutionError struct {
	NodeID           string
	NodeType         string
	ExceptionType    string
	ExceptionMessage string
	Traceback        string
}

// Socket outcomes: the terminal message the socket delivered for the prompt.
const (
	SocketSuccess     = "execution_success"
	SocketError       = "execution_error"
	SocketInterrupted = "execution_interrupted"
)

// PromptResult is what waiting for a prompt learned.
type PromptResult struct {
	PromptID string
	// Status is the last status read; when the status route is missing it is derived from the
	// socket's terminal message (success, error or cancelled) and StatusFromSocket is set.
	Status             string
	StatusFromSocket   bool
	StatusRouteMissing bool
	SocketOutcome      string // SocketSuccess, SocketError, SocketInterrupted or ""
	Outputs            []PromptOutput
	Error              *ExecutionError
	// OutputsComplete is false when the socket was not connected for the whole run (or did not
	// deliver its terminal message): outputs come only from the socket and some may be missing.
	OutputsComplete bool
	// OutputsDropped counts the distinct outputs reported beyond MaxPromptOutputs: they are not
	// kept, so a socket that floods executed messages cannot grow the result without bound.
	OutputsDropped int
	Previews       int // binary preview images received for the prompt (TEXT frames are not counted)
	Redials        int // attempts to reconnect the socket after it closed mid-run
}

// Succeeded reports whether the prompt finished successfully.
func (r *PromptResult) Succeeded() bool { return PromptSucceeded(r.Status) }

// PromptWaitOptions tune WaitPrompt. Zero values take the defaults.
type PromptWaitOptions struct {
	// PollInterval is the status poll interval without a socket (default 2 s, the contract's
	// example). PollIntervalSocket applies while the socket is connected (default 10 s): its
	// messages wake the loop, so polling only guards against a silent socket.
	PollInterval, PollIntervalSocket time.Duration
	// SocketGrace is how long to wait, once the status is terminal, for the socket's terminal
	// message, which comes after the outputs (default 5 s).
	SocketGrace time.Duration
	// RedialWait is the wait before reconnecting a socket that closed mid-run (default 1 s),
	// doubled after each failed attempt.
	RedialWait time.Duration
	// OnStatus is called with every new status; OnMessage with every message for the prompt.
	OnStatus  func(status string)
	OnMessage func(m *SocketMessage)
}

// promptStatusMissingReads is how many 404s in a row from the status route, with no socket to
// decide instead, end the wait: one or two may only mean the record is not readable yet.
const promptStatusMissingReads = 3

// MaxPromptOutputs bounds the outputs a prompt wait keeps; further distinct outputs are counted
// in PromptResult.OutputsDropped.
const MaxPromptOutputs = 1000

// maxSocketRedials bounds the reconnections of a socket that closes before the prompt ends.
const maxSocketRedials = 3

const (
	defaultPromptPoll       = 2 * time.Second
	defaultPromptPollSocket = 10 * time.Second
	defaultSocketGrace      = 5 * time.Second
	defaultRedialWait       = time.Second
)

// WaitPrompt follows a prompt until it is terminal. The status route is the truth about whether
// the prompt ended and how; the socket (when sock is connected) supplies the outputs, the failure
// detail and early wake-ups. When the status route answers 404 (an engine without it), the
// socket's terminal message decides; the route is still polled, since a 404 right after
// submission may only mean the record is not readable yet. On a context error it returns what it
// learned so far.
//
// A socket that closes before the prompt ends is reconnected (a few times, with backoff) with
// the same client id: it does not replay what it sent meanwhile, so the outputs are then marked
// incomplete, but later outputs and, when the status route is missing, the outcome still arrive.
// WaitPrompt closes the sockets it opened; sock stays the caller's to close.
func (c *Client) WaitPrompt(ctx context.Context, promptID string, sock *Socket, opts PromptWaitOptions) (*PromptResult, error) {
	w := &promptWait{
		c: c, id: promptID, opts: opts,
		poll:       orDuration(opts.PollInterval, defaultPromptPoll),
		pollSocket: orDuration(opts.PollIntervalSocket, defaultPromptPollSocket),
		grace:      orDuration(opts.SocketGrace, defaultSocketGrace),
		res:        &PromptResult{PromptID: promptID},
		sock:       newSocketFollower(c, promptID, sock, orDuration(opts.RedialWait, defaultRedialWait)),
	}
	defer w.sock.close()
	return w.run(ctx)
}

// promptWait is the state of one WaitPrompt: the status route's answers, the socket's messages,
// and the timers that pace them.
type promptWait struct {
	c                       *Client
	id                      string
	opts                    PromptWaitOptions
	poll, pollSocket, grace time.Duration
	res                     *PromptResult
	sock                    *socketFollower
	timer                   *time.Timer
	graceC                  <-chan time.Time // set once the status is terminal
	statusDone              bool
	missingReads            int // consecutive 404s from the status route
	outage                  outagePolicy
	seen                    map[PromptOutput]bool // outputs collected, to drop repeats
}

func (w *promptWait) run(ctx context.Context) (*PromptResult, error) {
	w.timer = time.NewTimer(min(w.poll, w.interval()))
	defer w.timer.Stop()
	// Done once the status is terminal and the socket has said its last word (or is gone).
	for !w.statusDone || (w.res.SocketOutcome == "" && w.sock.events != nil) {
		if over, err := w.decidedWithoutStatusRoute(); over {
			return w.res, err
		}
		if w.statusDone && w.graceC == nil {
			w.graceC = time.After(w.grace)
		}
		// A socket that floods messages keeps its channel always ready: the deadline is checked
		// before every message, not left to the select's random choice.
		if err := ctx.Err(); err != nil {
			return w.res, err
		}
		select {
		case <-ctx.Done():
			return w.res, ctx.Err()
		case <-w.graceC:
			w.res.OutputsComplete = false
			return w.res, nil
		case ev, ok := <-w.sock.events:
			w.onSocketEvent(ev, ok)
		case <-w.sock.redialC:
			w.sock.redial(ctx, w.statusDone, &w.res.Redials)
		case <-w.timer.C:
			if err := w.readStatus(ctx); err != nil {
				if ctx.Err() != nil {
					return w.res, ctx.Err()
				}
				return w.res, err
			}
			w.timer.Reset(w.interval())
		}
	}
	w.res.OutputsComplete = w.sock.whole && w.res.SocketOutcome != ""
	return w.res, nil
}

// interval is the status poll interval: long while a connected socket still has to deliver the
// outcome (its messages wake the loop), short otherwise.
func (w *promptWait) interval() time.Duration {
	if w.sock.connected() && w.res.SocketOutcome == "" {
		return w.pollSocket
	}
	return w.poll
}

// decidedWithoutStatusRoute applies the rule for a status route that answers 404: the socket's
// terminal message decides; with no socket to decide, a few 404s in a row end the wait.
func (w *promptWait) decidedWithoutStatusRoute() (bool, error) {
	if !w.res.StatusRouteMissing {
		return false, nil
	}
	if w.res.SocketOutcome != "" {
		w.res.Status, w.res.StatusFromSocket = socketStatus(w.res.SocketOutcome), true
		w.res.OutputsComplete = w.sock.whole
		return true, nil
	}
	if w.sock.events == nil && w.sock.redialC == nil && w.missingReads >= promptStatusMissingReads {
		return true, fmt.Errorf("prompt %s: the status route answered 404 %d times and the socket is not connected, so the prompt cannot be followed", w.id, w.missingReads)
	}
	return false, nil
}

// onSocketEvent handles one frame from the socket, or its end (ok false).
func (w *promptWait) onSocketEvent(ev SocketEvent, ok bool) {
	if !ok {
		// Reconnect only while something is still to come: not once the status or the socket
		// itself said the prompt ended.
		w.sock.closed(!w.statusDone && w.res.SocketOutcome == "", w.res.Redials)
		resetTimer(w.timer, 0)
		return
	}
	if f := ev.Frame; f != nil {
		// A TEXT frame is no preview; a bare PREVIEW_IMAGE names no prompt, so it counts.
		if f.Type != FrameText && (f.Metadata == nil || f.Metadata.PromptID == w.id) {
			w.res.Previews++
		}
		return
	}
	m := ev.Message
	if m.PromptID != w.id {
		return
	}
	if w.opts.OnMessage != nil {
		w.opts.OnMessage(m)
	}
	if w.apply(m) && !w.res.StatusRouteMissing && !w.statusDone {
		resetTimer(w.timer, 0) // confirm with the status route at once
	}
}

// readStatus reads the status route once. A 404 is counted, not an error (the socket may
// decide); other failures follow the outage policy.
func (w *promptWait) readStatus(ctx context.Context) error {
	st, err := w.c.GetPromptStatus(ctx, w.id)
	if StatusOf(err) == http.StatusNotFound {
		if !w.res.StatusRouteMissing {
			w.c.log.Debug(ctx, "prompt status route answered 404; the socket's terminal message decides", map[string]any{"prompt_id": w.id})
		}
		w.res.StatusRouteMissing = true
		w.missingReads++
		return nil
	}
	if err != nil {
		if w.outage.giveUp(err) {
			return err
		}
		w.c.log.Warn(ctx, "reading the prompt status failed; still waiting", map[string]any{"prompt_id": w.id, "error": err.Error()})
		return nil
	}
	w.res.StatusRouteMissing, w.missingReads = false, 0
	w.outage.recovered()
	if st.Status != w.res.Status && w.opts.OnStatus != nil {
		w.opts.OnStatus(st.Status)
	}
	w.res.Status = st.Status
	w.statusDone = PromptTerminal(st.Status)
	return nil
}

// socketFollower keeps a socket for one prompt: it reconnects one that closes mid-run (a few
// times, with a doubling wait) and closes the connections it opened itself.
type socketFollower struct {
	c          *Client
	promptID   string
	caller     *Socket // the caller's socket: never closed here
	sock       *Socket
	events     <-chan SocketEvent // nil once closed and not reconnected
	whole      bool               // connected for the whole run so far
	redialC    <-chan time.Time   // set while a closed socket waits to be reconnected
	redialWait time.Duration
}

func newSocketFollower(c *Client, promptID string, sock *Socket, redialWait time.Duration) *socketFollower {
	f := &socketFollower{c: c, promptID: promptID, caller: sock, sock: sock, whole: sock.Connected(), redialWait: redialWait}
	if sock != nil {
		f.events = sock.Events()
	}
	return f
}

func (f *socketFollower) connected() bool { return f.sock.Connected() }

// closed records the end of the connection and, when wanted, schedules a reconnection.
func (f *socketFollower) closed(wanted bool, redials int) {
	f.events, f.whole = nil, false
	if wanted && redials < maxSocketRedials {
		f.redialC = time.After(f.redialWait << redials)
	}
}

// redial reconnects with the same client id, unless the prompt ended meanwhile (its terminal
// message is not resent). redials counts the attempts.
func (f *socketFollower) redial(ctx context.Context, ended bool, redials *int) {
	f.redialC = nil
	if ended {
		return
	}
	*redials++
	next, err := f.c.DialSocket(ctx, f.sock.clientID)
	if err != nil {
		f.c.log.Warn(ctx, "reconnecting the socket failed", map[string]any{"prompt_id": f.promptID, "attempt": *redials, "error": err.Error()})
		if *redials < maxSocketRedials {
			f.redialC = time.After(f.redialWait << *redials)
		}
		return
	}
	f.c.log.Debug(ctx, "socket reconnected; messages sent while it was closed are lost", map[string]any{"prompt_id": f.promptID, "attempt": *redials})
	f.close()
	f.sock, f.events = next, next.Events()
}

// close closes the current connection unless it is the caller's.
func (f *socketFollower) close() {
	if f.sock != f.caller {
		f.sock.Close()
	}
}

func socketStatus(outcome string) string {
	switch outcome {
	case SocketSuccess:
		return PromptSuccess
	case SocketInterrupted:
		return PromptCancelled
	}
	return PromptError
}

// apply records a message for the prompt and reports whether it was terminal.
func (w *promptWait) apply(m *SocketMessage) bool {
	res := w.res
	switch m.Type {
	case "executed":
		w.addOutputs(executedOutputs(m.Data))
	case SocketSuccess:
		res.SocketOutcome = SocketSuccess
		return true
	case SocketError:
		res.SocketOutcome = SocketError
		res.Error = parseExecutionError(m.Data)
		return true
	case SocketInterrupted:
		res.SocketOutcome = SocketInterrupted
		return true
	}
	return false
}

// addOutputs keeps outputs not seen before (the same file, subfolder and type is one output,
// however often a node reports it), up to MaxPromptOutputs; the rest are only counted.
func (w *promptWait) addOutputs(outs []PromptOutput) {
	if w.seen == nil {
		w.seen = map[PromptOutput]bool{}
	}
	for _, o := range outs {
		key := PromptOutput{Filename: o.Filename, Subfolder: o.Subfolder, Type: o.Type}
		if w.seen[key] {
			continue
		}
		if len(w.res.Outputs) >= MaxPromptOutputs {
			w.res.OutputsDropped++
			continue
		}
		w.seen[key] = true
		w.res.Outputs = append(w.res.Outputs, o)
	}
}

// executedOutputs reads data.output of an executed message: lists of file infos by kind.
func executedOutputs(data json.RawMessage) []PromptOutput {
	var d struct {
		Node   string                     `json:"node"`
		Output map[string]json.RawMessage `json:"output"`
	}
	if json.Unmarshal(data, &d) != nil {
		return nil
	}
	var out []PromptOutput
	keys := make([]string, 0, len(d.Output))
	for k := range d.Output {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		var files []struct {
			Filename  string `json:"filename"`
			Subfolder string `json:"subfolder"`
			Type      string `json:"type"`
		}
		if json.Unmarshal(d.Output[k], &files) != nil {
			continue // not a list of file infos (text, numbers, ...)
		}
		for _, f := range files {
			if f.Filename == "" {
				continue
			}
			out = append(out, PromptOutput{NodeID: d.Node, Filename: f.Filename, Subfolder: f.Subfolder, Type: f.Type, Kind: mediaKind(k)})
		}
	}
	return out
}

func mediaKind(list string) string {
	switch list {
	case "images":
		return "image"
	case "gifs", "videos":
		return "video"
	case "audios":
		return "audio"
	}
	return list
}

func parseExecutionError(data json.RawMessage) *ExecutionError {
	var d struct {
		NodeID           json.RawMessage `json:"node_id"`
		NodeType         string          `json:"node_type"`
		ExceptionType    string          `json:"exception_type"`
		ExceptionMessage string          `json:"exception_message"`
		Traceback        json.RawMessage `json:"traceback"`
	}
	_ = json.Unmarshal(data, &d)
	e := &ExecutionError{NodeType: d.NodeType, ExceptionType: d.ExceptionType, ExceptionMessage: d.ExceptionMessage}
	var s string
	var lines []string
	switch {
	case json.Unmarshal(d.NodeID, &s) == nil:
		e.NodeID = s
	case len(d.NodeID) > 0 && string(d.NodeID) != "null":
		e.NodeID = string(d.NodeID)
	}
	switch {
	case json.Unmarshal(d.Traceback, &s) == nil:
		e.Traceback = s
	case json.Unmarshal(d.Traceback, &lines) == nil:
		e.Traceback = strings.Join(lines, "")
	}
	return e
}
