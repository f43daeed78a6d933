package emulator

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"
)

// Binary frame types of the socket: a 4-byte big-endian type, then the payload.
const (
	framePreviewImage             = 1
	frameText                     = 3
	framePreviewImageWithMetadata = 4
	imageFormatPNG                = 2
)

// socketMessage is one frame queued for a socket: JSON text, or binary when bin is set.
type socketMessage struct {
	text []byte
	bin  []byte
}

// socketSub is one connected socket. Every connection gets every prompt's messages (the
// service ignores clientId); clients filter on data.prompt_id.
type socketSub struct {
	mu     sync.Mutex
	queue  []socketMessage
	notify chan struct{} // one pending wake-up
	kick   chan struct{} // closed to drop the connection (DropSockets)
}

func (sub *socketSub) push(m socketMessage) {
	sub.mu.Lock()
	sub.queue = append(sub.queue, m)
	sub.mu.Unlock()
	select {
	case sub.notify <- struct{}{}:
	default:
	}
}

func (sub *socketSub) drain() []socketMessage {
	sub.mu.Lock()
	defer sub.mu.Unlock()
	q := sub.queue
	sub.queue = nil
	return q
}

// handleSocket serves /ws: a status message first, then the messages of every v1 prompt as the
// engine runs it. Nothing is replayed: a client connects before it submits.
func (s *Server) handleSocket(w http.ResponseWriter, r *http.Request) {
	if s.opts.V1NoSocket {
		writeError(w, http.StatusNotFound, "not_found", "no route for GET /ws", nil)
		return
	}
	conn, err := websocket.Accept(w, r, nil)
	if err != nil {
		return
	}
	defer func() { _ = conn.CloseNow() }()
	if d := s.opts.V1SocketSubscribeDelay; d > 0 {
		select {
		case <-time.After(d):
		case <-r.Context().Done():
			return
		}
	}
	sub := &socketSub{notify: make(chan struct{}, 1), kick: make(chan struct{})}
	s.mu.Lock()
	s.v1.subs[sub] = true
	remaining := len(s.queue)
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.v1.subs, sub)
		s.mu.Unlock()
	}()

	ctx := conn.CloseRead(r.Context())
	hello := textMessage("status", map[string]any{
		"status": map[string]any{"exec_info": map[string]any{"queue_remaining": remaining}},
		"sid":    r.URL.Query().Get("clientId"),
	})
	if conn.Write(ctx, websocket.MessageText, hello.text) != nil {
		return
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.done:
			_ = conn.Close(websocket.StatusGoingAway, "server closing")
			return
		case <-sub.kick:
			_ = conn.Close(websocket.StatusGoingAway, "connection dropped")
			return
		case <-sub.notify:
		}
		for _, m := range sub.drain() {
			typ, data := websocket.MessageText, m.text
			if m.bin != nil {
				typ, data = websocket.MessageBinary, m.bin
			}
			if conn.Write(ctx, typ, data) != nil {
				return
			}
		}
	}
}

// DropSockets closes every connected socket, as a restart or a network fault mid-run would.
// Messages published afterwards reach only sockets connected later.
func (s *Server) DropSockets() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for sub := range s.v1.subs {
		delete(s.v1.subs, sub)
		close(sub.kick)
	}
}

// SocketClients reports how many sockets are connected.
func (s *Server) SocketClients() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.v1.subs)
}

func textMessage(typ string, data any) socketMessage {
	b, _ := json.Marshal(map[string]any{"type": typ, "data": data})
	return socketMessage{text: b}
}

// publishV1Locked turns an engine event of a v1 prompt into the socket's messages; s.mu is held.
func (s *Server) publishV1Locked(j *job, e event) {
	if len(s.v1.subs) == 0 {
		return
	}
	var out []socketMessage
	switch e.name {
	case "status":
		out = s.v1StatusMessagesLocked(j)
	case "progress":
		p, _ := e.data.(progressJSON)
		out = v1ProgressMessages(j, p)
	case "output":
		out = s.v1OutputMessagesLocked(j, e.output)
	}
	for sub := range s.v1.subs {
		for _, m := range out {
			sub.push(m)
		}
	}
}

// executedFlood builds n executed messages for a prompt: half name the same file, half a new
// file each.
func executedFlood(promptID string, n int) []socketMessage {
	out := make([]socketMessage, 0, n)
	for i := range n {
		name := "flood_repeat.png"
		if i%2 == 1 {
			name = fmt.Sprintf("flood_%06d.png", i)
		}
		out = append(out, textMessage("executed", map[string]any{"node": "9", "display_node": "9", "prompt_id": promptID,
			"output": map[string]any{"images": []any{map[string]any{"filename": name, "subfolder": "", "type": "output"}}}}))
	}
	return out
}

// v1StatusMessagesLocked is what the socket says when a prompt's status changes.
func (s *Server) v1StatusMessagesLocked(j *job) []socketMessage {
	now := s.now().UnixMilli()
	queueStatus := textMessage("status", map[string]any{"status": map[string]any{"exec_info": map[string]any{"queue_remaining": len(s.queue)}}})
	switch j.status {
	case statusQueued:
		return []socketMessage{queueStatus}
	case statusRunning:
		started := []socketMessage{queueStatus, textMessage("execution_start", map[string]any{"prompt_id": j.id, "timestamp": now})}
		return append(started, executedFlood(j.id, s.opts.V1ExecutedFlood)...)
	case statusSucceeded:
		return []socketMessage{
			textMessage("executing", map[string]any{"node": nil, "display_node": nil, "prompt_id": j.id}),
			textMessage("execution_success", map[string]any{"prompt_id": j.id, "timestamp": now}),
		}
	case statusFailed:
		data := map[string]any{"prompt_id": j.id, "executed": []string{}, "exception_type": "RuntimeError",
			"current_inputs": map[string]any{}, "current_outputs": map[string]any{}, "timestamp": now}
		if e := j.err; e != nil {
			data["node_id"], data["node_type"], data["exception_message"] = deref(e.NodeID), deref(e.ClassType), e.Message
			if e.Traceback != nil {
				data["traceback"] = strings.SplitAfter(*e.Traceback, "\n")
			}
		}
		return []socketMessage{textMessage("execution_error", data)}
	case statusCanceled:
		data := map[string]any{"prompt_id": j.id, "executed": []string{}, "timestamp": now}
		if p := j.progress; p != nil && p.CurrentNode != nil {
			data["node_id"], data["node_type"] = *p.CurrentNode, deref(p.CurrentNodeClass)
		}
		return []socketMessage{textMessage("execution_interrupted", data)}
	}
	return nil
}

// v1ProgressMessages is what the socket says on progress: "executing" and a TEXT frame when a
// node starts, "progress", "progress_state" and a preview frame on each sampler step.
func v1ProgressMessages(j *job, p progressJSON) []socketMessage {
	if p.CurrentNode == nil {
		return nil
	}
	node := *p.CurrentNode
	if p.Step == nil {
		return []socketMessage{
			textMessage("executing", map[string]any{"node": node, "display_node": node, "prompt_id": j.id}),
			{bin: textFrame(node, "executing "+deref(p.CurrentNodeClass))},
		}
	}
	return []socketMessage{
		textMessage("progress", map[string]any{"value": *p.Step, "max": *p.Steps, "prompt_id": j.id, "node": node}),
		textMessage("progress_state", map[string]any{"prompt_id": j.id, "nodes": map[string]any{node: map[string]any{
			"value": *p.Step, "max": *p.Steps, "state": "running", "node_id": node, "prompt_id": j.id,
			"display_node_id": node, "parent_node_id": nil, "real_node_id": node,
		}}}),
		{bin: previewFrame()},
	}
}

// v1OutputMessagesLocked is what the socket says when a node saves a file: "executed" with the
// file in the node's output list, and for an image a preview frame with its metadata.
func (s *Server) v1OutputMessagesLocked(j *job, o *jobOutput) []socketMessage {
	class, _, _ := nodeOf(j.workflow[o.nodeID])
	fileType := "output"
	if class == "PreviewImage" {
		fileType = "temp"
	}
	list := map[string]string{"image": "images", "video": "video", "audio": "audio"}[o.typ]
	if list == "" {
		list = o.typ
	}
	file := map[string]any{"filename": o.name, "subfolder": "", "type": fileType}
	out := []socketMessage{textMessage("executed", map[string]any{
		"node": o.nodeID, "display_node": o.nodeID, "prompt_id": j.id,
		"output": map[string]any{list: []any{file}},
	})}
	if a := s.assets[o.assetID]; a != nil && o.typ == "image" {
		meta, _ := json.Marshal(map[string]any{"node_id": o.nodeID, "display_node_id": o.nodeID,
			"real_node_id": o.nodeID, "prompt_id": j.id, "parent_node_id": nil})
		out = append(out, socketMessage{bin: metadataFrame(meta, a.data)})
	}
	return out
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// textFrame is a TEXT frame: type, node id length, node id, text.
func textFrame(nodeID, text string) []byte {
	b := binary.BigEndian.AppendUint32(nil, frameText)
	b = binary.BigEndian.AppendUint32(b, uint32(len(nodeID)))
	return append(append(b, nodeID...), text...)
}

// previewFrame is a PREVIEW_IMAGE frame holding a 1x1 PNG.
func previewFrame() []byte {
	var buf bytes.Buffer
	_ = png.Encode(&buf, image.NewGray(image.Rect(0, 0, 1, 1)))
	b := binary.BigEndian.AppendUint32(nil, framePreviewImage)
	b = binary.BigEndian.AppendUint32(b, imageFormatPNG)
	return append(b, buf.Bytes()...)
}

// metadataFrame is a PREVIEW_IMAGE_WITH_METADATA frame.
func metadataFrame(meta, img []byte) []byte {
	b := binary.BigEndian.AppendUint32(nil, framePreviewImageWithMetadata)
	b = binary.BigEndian.AppendUint32(b, uint32(len(meta)))
	return append(append(b, meta...), img...)
}
