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
	Previews        int // binary preview images received for the prompt (TEXT frames are not counted)
	Redials         int // attempts to reconnect the socket after it closed mid-run
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
	poll := orDuration(opts.PollInterval, defaultPromptPoll)
	pollSocket := orDuration(opts.PollIntervalSocket, defaultPromptPollSocket)
	grace := orDuration(opts.SocketGrace, defaultSocketGrace)
	redialWait := orDuration(opts.RedialWait, defaultRedialWait)

	res := &PromptResult{PromptID: promptID}
	var events <-chan SocketEvent
	socketWhole := sock.Connected()
	if sock != nil {
		events = sock.Events()
	}
	callerSock := sock
	defer func() {
		if sock != callerSock {
			sock.Close()
		}
	}()
	var redialC <-chan time.Time // set while a closed socket waits to be reconnected
	interval := func() time.Duration {
		if sock.Connected() && res.SocketOutcome == "" {
			return pollSocket
		}
		return poll
	}
	timer := time.NewTimer(min(poll, interval()))
	defer timer.Stop()
	var graceC <-chan time.Time
	statusDone := false
	missingReads := 0 // consecutive 404s from the status route
	failedReads := 0  // consecutive other failures, each already retried

	readStatus := func() error {
		st, err := c.GetPromptStatus(ctx, promptID)
		if StatusOf(err) == http.StatusNotFound {
			if !res.StatusRouteMissing {
				c.log.Debug(ctx, "prompt status route answered 404; the socket's terminal message decides", map[string]any{"prompt_id": promptID})
			}
			res.StatusRouteMissing = true
			missingReads++
			return nil
		}
		if err != nil {
			// The prompt runs on during an outage: a few failed reads in a row are waited out.
			if failedReads++; failedReads >= maxReadFailures || !transientReadError(err) {
				return err
			}
			c.log.Warn(ctx, "reading the prompt status failed; still waiting", map[string]any{"prompt_id": promptID, "error": err.Error()})
			return nil
		}
		res.StatusRouteMissing, missingReads, failedReads = false, 0, 0
		if st.Status != res.Status && opts.OnStatus != nil {
			opts.OnStatus(st.Status)
		}
		res.Status = st.Status
		statusDone = PromptTerminal(st.Status)
		return nil
	}

	// Done once the status is terminal and the socket has said its last word (or is gone).
	for !statusDone || (res.SocketOutcome == "" && events != nil) {
		if res.StatusRouteMissing {
			if res.SocketOutcome != "" {
				res.Status, res.StatusFromSocket = socketStatus(res.SocketOutcome), true
				break
			}
			if events == nil && redialC == nil && missingReads >= promptStatusMissingReads {
				return res, fmt.Errorf("prompt %s: the status route answered 404 %d times and the socket is not connected, so the prompt cannot be followed", promptID, missingReads)
			}
		}
		if statusDone && graceC == nil {
			graceC = time.After(grace)
		}
		select {
		case <-ctx.Done():
			return res, ctx.Err()
		case <-graceC:
			res.OutputsComplete = false
			return res, nil
		case ev, ok := <-events:
			if !ok {
				events, socketWhole = nil, false
				// Reconnect only while something is still to come: not once the status or the
				// socket itself said the prompt ended.
				if !statusDone && res.SocketOutcome == "" && res.Redials < maxSocketRedials {
					redialC = time.After(redialWait << res.Redials)
				}
				resetTimer(timer, 0)
				continue
			}
			if f := ev.Frame; f != nil {
				// A TEXT frame is no preview; a bare PREVIEW_IMAGE names no prompt, so it counts.
				if f.Type != FrameText && (f.Metadata == nil || f.Metadata.PromptID == promptID) {
					res.Previews++
				}
				continue
			}
			m := ev.Message
			if m.PromptID != promptID {
				continue
			}
			if opts.OnMessage != nil {
				opts.OnMessage(m)
			}
			if applySocketMessage(res, m) && !res.StatusRouteMissing && !statusDone {
				resetTimer(timer, 0) // confirm with the status route at once
			}
		case <-redialC:
			redialC = nil
			if statusDone {
				continue // the prompt ended meanwhile; its terminal message is not resent
			}
			res.Redials++
			next, err := c.DialSocket(ctx, sock.clientID)
			if err != nil {
				c.log.Warn(ctx, "reconnecting the socket failed", map[string]any{"prompt_id": promptID, "attempt": res.Redials, "error": err.Error()})
				if res.Redials < maxSocketRedials {
					redialC = time.After(redialWait << res.Redials)
				}
				continue
			}
			c.log.Debug(ctx, "socket reconnected; messages sent while it was closed are lost", map[string]any{"prompt_id": promptID, "attempt": res.Redials})
			if sock != callerSock {
				sock.Close()
			}
			sock, events = next, next.Events()
		case <-timer.C:
			if err := readStatus(); err != nil {
				if ctx.Err() != nil {
					return res, ctx.Err()
				}
				return res, err
			}
			timer.Reset(interval())
		}
	}
	res.OutputsComplete = socketWhole && res.SocketOutcome != ""
	return res, nil
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

// applySocketMessage records a message for the prompt and reports whether it was terminal.
func applySocketMessage(res *PromptResult, m *SocketMessage) bool {
	switch m.Type {
	case "executed":
		res.Outputs = append(res.Outputs, executedOutputs(m.Data)...)
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
