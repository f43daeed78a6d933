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
	// kept, so a socket that floods executed messages cannot grow the result without bound. Repeats
	// are told apart for the first maxRememberedOutputs files; past that, a repeat counts again.
	OutputsDropped int
	Previews       int // binary preview images received for the prompt (TEXT frames are not counted)
	Redials        int // attempts to reconnect the socket after it closed mid-run (failed ones included)
}

// Succeeded reports whether the prompt finished successfully.
func (r *PromptResult) Succeeded() bool { return promptSucceeded(r.Status) }

// PromptWaitOptions tune WaitPrompt. Zero values take the defaults.
type PromptWaitOptions struct {
	// PollInterval is the status poll interval without a socket (default 2 s).
	// PollIntervalSocket applies while the socket is connected (default 10 s): its messages
	// wake the loop, so polling only guards against a silent socket.
	PollInterval, PollIntervalSocket time.Duration
	// SocketGrace is how long to wait, once the status is terminal, for the socket's terminal
	// message, which comes after the outputs (default 5 s).
	SocketGrace time.Duration
	// RedialWait is the wait before reconnecting a socket that closed mid-run (default 1 s). An
	// attempt that fails for a transient reason is followed by another after the client's
	// backoff (as Retry-After asks, else growing with jitter up to its largest wait), held while
	// the client's waits are held, until the wait's deadline.
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

// maxRememberedOutputs bounds the files a prompt wait remembers to tell a repeat from a new
// one (kept and dropped alike): a few MiB at most, whatever the socket sends.
const maxRememberedOutputs = 100_000

// maxSocketDrops bounds how often a socket that closes before the prompt ends is reconnected: a
// server that keeps closing it is left, and the status route alone goes on. A reconnection that
// fails for a transient reason (refused, reset, timed out, 408, 429, 5xx on the upgrade) is no
// drop: it is tried again, backing off, until the wait's deadline; one that fails for good (401,
// 403, 404, ...) ends the reconnections.
const maxSocketDrops = 3

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
// A socket that closes before the prompt ends is reconnected (after each of maxSocketDrops
// closes, retrying a transiently failing dial with backoff until ctx's deadline) with the same
// client id: it does not replay what it sent meanwhile, so the outputs are then marked
// incomplete, but later outputs and, when the status route is missing, the outcome still arrive.
// WaitPrompt closes the sockets it opened; sock stays the caller's to close.
//
// It runs on the wait engine of WaitJob: the status route is the record read, and the socket's
// frames, its redials and the grace period after the status ended are side work the engine
// hands back to this wait on its own goroutine.
func (c *Client) WaitPrompt(ctx context.Context, promptID string, sock *Socket, opts PromptWaitOptions) (*PromptResult, error) {
	w := &promptWait{
		c: c, id: promptID, opts: opts,
		poll:       orDuration(opts.PollInterval, defaultPromptPoll),
		pollSocket: orDuration(opts.PollIntervalSocket, defaultPromptPollSocket),
		grace:      orDuration(opts.SocketGrace, defaultSocketGrace),
		res:        &PromptResult{PromptID: promptID},
		began:      time.Now(),
		sock:       newSocketFollower(c, promptID, sock, orDuration(opts.RedialWait, defaultRedialWait)),
		share:      waitShare{c},
		side:       make(chan sideHandler),
		stopped:    make(chan struct{}),
	}
	defer w.stop()
	if sock != nil {
		w.follow(sock.Events())
	}
	loop := waitLoop[*promptWait]{
		read:     func(ctx context.Context, w *promptWait) (*promptWait, error) { return w.readStatus(ctx) },
		done:     (*promptWait).finished,
		schedule: w,
		side:     w.side,
		share:    w.share,
	}
	if _, err := loop.run(ctx, w); err != nil {
		return w.res, err
	}
	return w.res, w.unfollowable
}

// promptWait is the state of one WaitPrompt: the status route's answers, the socket's messages,
// and the timers that pace them. The wait engine treats it as the record it reads.
type promptWait struct {
	c                       *Client
	id                      string
	opts                    PromptWaitOptions
	poll, pollSocket, grace time.Duration
	began                   time.Time // when the wait began
	res                     *PromptResult
	sock                    *socketFollower
	statusRead              bool // the status route was asked at least once
	statusReads             int  // how many times (the blind plan's budget counts them)
	statusDone              bool
	graceStarted, graceOver bool
	missingReads            int                   // consecutive 404s from the status route
	unfollowable            error                 // why the wait ended without an outcome
	seen                    map[PromptOutput]bool // outputs collected, to drop repeats
	share                   readShare             // what the client's waits share: its reads and redials are held by it

	side    chan sideHandler // socket frames and timers, handled on the engine's goroutine
	stopped chan struct{}    // closed when the wait returns: senders give up
	timers  []*time.Timer    // redial and grace timers, stopped when the wait returns
}

// stop ends the goroutines and timers that feed the side channel, and closes the sockets the
// wait opened.
func (w *promptWait) stop() {
	close(w.stopped)
	for _, t := range w.timers {
		t.Stop()
	}
	w.sock.close()
}

// post hands work to the engine's goroutine, unless the wait is over.
func (w *promptWait) post(handle sideHandler) bool {
	select {
	case w.side <- handle:
		return true
	case <-w.stopped:
		return false
	}
}

// after posts handle once d has passed.
func (w *promptWait) after(d time.Duration, handle sideHandler) {
	w.timers = append(w.timers, time.AfterFunc(d, func() { w.post(handle) }))
}

// afterOrChange posts handle once d has passed, or sooner when changed closes (nil: never).
func (w *promptWait) afterOrChange(d time.Duration, changed <-chan struct{}, handle sideHandler) {
	if changed == nil {
		w.after(d, handle)
		return
	}
	go func() {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
		case <-changed:
		case <-w.stopped:
			return
		}
		w.post(handle)
	}()
}

// follow posts every frame of a socket connection, then its end, in order.
func (w *promptWait) follow(events <-chan SocketEvent) {
	go func() {
		for {
			var ev SocketEvent
			var ok bool
			select {
			case ev, ok = <-events:
			case <-w.stopped:
				return
			}
			if !w.post(func(context.Context) bool { return w.onSocketEvent(ev, ok) }) || !ok {
				return
			}
		}
	}()
}

// Next is the wait's schedule: long while a connected socket still has to deliver the outcome
// (its messages wake the loop); otherwise the blind plan of a job's wait (blindPlan, with the
// poll interval as its fixed-poll period, its marks counted from the wait's start: the status
// route tells no start time), since without the socket nothing foretells the end. The first
// read comes on the blind plan.
func (w *promptWait) Next(*promptWait, bool) time.Duration {
	d := blindPlan{period: w.poll, floor: min(defaultPollMin, w.poll), began: w.began, origin: w.began,
		reads: w.statusReads}.wait(time.Now())
	if w.sock.connected() && w.res.SocketOutcome == "" && w.statusRead {
		d = w.pollSocket
	}
	return d
}

// finished reports whether the wait is over, and records in the result how it ended: the grace
// for the socket's last word ran out; the status is terminal and the socket said its last word
// (or is gone); or the status route answers 404 and the socket's terminal message decides (with
// no socket to decide, a few 404s in a row end the wait with an error).
func (w *promptWait) finished() bool {
	switch {
	case w.graceOver:
		w.res.OutputsComplete = false
	case w.statusDone && (w.res.SocketOutcome != "" || !w.sock.listening):
		w.res.OutputsComplete = w.sock.whole && w.res.SocketOutcome != ""
	case !w.res.StatusRouteMissing:
		return false
	case w.res.SocketOutcome != "":
		w.res.Status, w.res.StatusFromSocket = socketStatus(w.res.SocketOutcome), true
		w.res.OutputsComplete = w.sock.whole
	case !w.sock.listening && !w.sock.redialPending && w.missingReads >= promptStatusMissingReads:
		w.unfollowable = fmt.Errorf("prompt %s: the status route answered 404 %d times and the socket is not connected, so the prompt cannot be followed", w.id, w.missingReads)
	default:
		return false
	}
	return true
}

// onSocketEvent handles one frame from the socket, or its end (ok false), and reports whether
// the status route must be read at once.
func (w *promptWait) onSocketEvent(ev SocketEvent, ok bool) bool {
	if !ok {
		// Reconnect only while something is still to come: not once the status or the socket
		// itself said the prompt ended.
		if d, redial := w.sock.closed(!w.statusDone && w.res.SocketOutcome == ""); redial {
			w.after(d, w.onRedialDue)
		}
		return true
	}
	if f := ev.Frame; f != nil {
		// A TEXT frame is no preview; a bare PREVIEW_IMAGE names no prompt, so it counts.
		if f.Type != FrameText && (f.Metadata == nil || f.Metadata.PromptID == w.id) {
			w.res.Previews++
		}
		return false
	}
	m := ev.Message
	if m.PromptID != w.id {
		return false
	}
	if w.opts.OnMessage != nil {
		w.opts.OnMessage(m)
	}
	// A terminal message is confirmed with the status route at once.
	return w.apply(m) && !w.res.StatusRouteMissing && !w.statusDone
}

// onRedialDue reconnects the socket, or schedules the next attempt. While the client's waits
// are held (the service's rate limit, its outage gate), the attempt waits with them.
func (w *promptWait) onRedialDue(ctx context.Context) bool {
	if w.statusDone {
		w.sock.redialPending = false // the prompt ended meanwhile: its terminal message is not resent
		return false
	}
	d, changed, ticket := w.share.readTurn(ctx)
	if d > 0 {
		w.afterOrChange(d, changed, w.onRedialDue)
		return false
	}
	events, retryIn, retry := w.sock.redial(ctx, w.share, ticket, &w.res.Redials)
	switch {
	case events != nil:
		w.follow(events)
	case retry:
		w.after(retryIn, w.onRedialDue)
	}
	return false
}

// readStatus reads the status route once. A 404 is counted, not an error (the socket may
// decide), and like any answer it ends an outage; other failures go to the engine's outage
// policy. Once the status is terminal, the
// socket has SocketGrace to deliver its terminal message.
func (w *promptWait) readStatus(ctx context.Context) (*promptWait, error) {
	w.statusRead = true
	w.statusReads++
	st, err := w.c.GetPromptStatus(ctx, w.id)
	if statusOf(err) == http.StatusNotFound {
		if !w.res.StatusRouteMissing {
			w.c.log.Debug(ctx, "prompt status route answered 404; the socket's terminal message decides", map[string]any{"prompt_id": w.id})
		}
		w.res.StatusRouteMissing = true
		w.missingReads++
		return w, nil
	}
	if err != nil {
		return w, err
	}
	w.res.StatusRouteMissing, w.missingReads = false, 0
	if st.Status != w.res.Status && w.opts.OnStatus != nil {
		w.opts.OnStatus(st.Status)
	}
	w.res.Status = st.Status
	w.statusDone = PromptTerminal(st.Status)
	if w.statusDone && !w.graceStarted {
		w.graceStarted = true
		w.after(w.grace, func(context.Context) bool { w.graceOver = true; return false })
	}
	return w, nil
}

// socketFollower keeps a socket for one prompt: it decides when to reconnect one that closes
// mid-run (see maxSocketDrops), dials, and closes the connections it opened itself.
type socketFollower struct {
	c             *Client
	promptID      string
	caller        *Socket // the caller's socket: never closed here
	sock          *Socket
	listening     bool // a connection's frames are being followed
	whole         bool // connected for the whole run so far
	redialPending bool // a closed socket waits to be reconnected
	redialWait    time.Duration
	drops         int // connections that closed mid-run
	dialFailures  int // transient dial failures in a row
}

func newSocketFollower(c *Client, promptID string, sock *Socket, redialWait time.Duration) *socketFollower {
	return &socketFollower{c: c, promptID: promptID, caller: sock, sock: sock, listening: sock != nil, whole: sock.isConnected(), redialWait: redialWait}
}

func (f *socketFollower) connected() bool { return f.sock.isConnected() }

// closed records the end of the connection and, when wanted, returns the wait before
// reconnecting.
func (f *socketFollower) closed(wanted bool) (time.Duration, bool) {
	f.listening, f.whole = false, false
	if wanted && f.drops < maxSocketDrops {
		f.drops++
		f.redialPending = true
		return f.redialWait, true
	}
	return 0, false
}

// redial reconnects with the same client id, the share's ticket in hand; redials counts the
// attempts. It returns the new connection's events or, after an attempt that failed for a
// transient reason, the wait before the next one (the share's backoff); after one that failed
// for good, neither.
func (f *socketFollower) redial(ctx context.Context, share readShare, ticket gateTicket, redials *int) (events <-chan SocketEvent, retryIn time.Duration, retry bool) {
	f.redialPending = false
	*redials++
	next, err := f.c.DialSocket(ctx, f.sock.clientID)
	share.readDone(ticket, err)
	if err != nil {
		transient := transientFailure(err)
		f.c.log.Warn(ctx, "reconnecting the socket failed", map[string]any{"prompt_id": f.promptID, "attempt": *redials,
			"error": err.Error(), "trying_again": transient})
		if !transient || ctx.Err() != nil {
			return nil, 0, false
		}
		f.dialFailures++
		f.redialPending = true
		return nil, share.rideOut(f.dialFailures, err), true
	}
	f.dialFailures = 0
	f.c.log.Debug(ctx, "socket reconnected; messages sent while it was closed are lost", map[string]any{"prompt_id": f.promptID, "attempt": *redials})
	f.close()
	f.sock, f.listening = next, true
	return next.Events(), 0, false
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
		if len(w.seen) < maxRememberedOutputs {
			w.seen[key] = true
		}
		if len(w.res.Outputs) >= MaxPromptOutputs {
			w.res.OutputsDropped++
			continue
		}
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
