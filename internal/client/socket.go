package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
)

// socketGreetingWait bounds how long DialSocket waits for the server's first message.
const socketGreetingWait = 3 * time.Second

// maxSocketMessage bounds one socket message: previews are small images, JSON messages smaller.
const maxSocketMessage = 16 << 20

// maxSocketText bounds one JSON message (the largest, executed, lists one node's files): a
// larger one is skipped whole, so a flooding server cannot hold much memory per message.
const maxSocketText = 1 << 20

// socketBacklog is how many frames wait for the consumer before the reader stops reading: with
// maxSocketMessage, it bounds the memory a fast server can fill.
const socketBacklog = 8

// SocketMessage is a JSON text frame of the v1 socket: {"type", "data"}. PromptID is
// data.prompt_id, empty for messages about the queue as a whole.
type SocketMessage struct {
	Type     string
	PromptID string
	Data     json.RawMessage
}

// SocketEvent is one frame: a JSON message, or a decoded binary frame.
type SocketEvent struct {
	Message *SocketMessage
	Frame   *Frame
}

// Socket is a connection to the v1 real-time socket. Every connection of a user receives every
// prompt's messages; consumers filter on PromptID.
type Socket struct {
	conn      *websocket.Conn
	events    chan SocketEvent
	cancel    context.CancelFunc
	connected atomic.Bool
	greeted   chan struct{} // closed at the first frame the server sends
	greetOnce sync.Once
	log       Logger
	redacted  string
	clientID  string // reused on a redial, as the same client reconnecting
}

// DialSocket connects to {endpoint}/ws?clientId=<clientID>&token=<api key>. The token is a
// secret: every log line and error names the URL with it redacted.
func (c *Client) DialSocket(ctx context.Context, clientID string) (*Socket, error) {
	u := *c.endpoint
	switch u.Scheme {
	case "https":
		u.Scheme = "wss"
	default:
		u.Scheme = "ws"
	}
	u.Path = "/ws" // wss://{base_url_host}/ws: on the endpoint's host, whatever its path
	u.RawPath = ""
	q := url.Values{"clientId": {clientID}}
	if c.apiKey != "" {
		q.Set("token", c.apiKey)
	}
	u.RawQuery = q.Encode()
	redacted := redactURL(&u)

	dialCtx, cancelDial := context.WithTimeout(ctx, c.short.Timeout)
	defer cancelDial()
	c.log.Debug(ctx, "connecting to the socket", map[string]any{"url": redacted})
	// coder/websocket owns the handshake response's body (on success it is the connection).
	conn, resp, err := websocket.Dial(dialCtx, u.String(), &websocket.DialOptions{ //nolint:bodyclose // owned by the library
		HTTPClient: &http.Client{Transport: c.stream.Transport, CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse // a redirect would carry the token in the URL elsewhere
		}},
		HTTPHeader: http.Header{"User-Agent": {c.userAgent}},
	})
	if err != nil {
		return nil, c.socketDialError(ctx, redacted, resp, err)
	}
	conn.SetReadLimit(maxSocketMessage)
	readCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	s := &Socket{conn: conn, events: make(chan SocketEvent, socketBacklog), cancel: cancel, greeted: make(chan struct{}), log: c.log, redacted: redacted, clientID: clientID}
	s.connected.Store(true)
	c.log.Debug(ctx, "socket connected", map[string]any{"url": redacted})
	go s.read(readCtx)
	// The server greets a new connection with a status message once it has subscribed it.
	// Until then, messages of a prompt submitted now could be broadcast before this
	// connection is listening, and the socket does not replay them. So wait for the greeting
	// (bounded: a server that sends none only costs this wait).
	select {
	case <-s.greeted:
	case <-time.After(socketGreetingWait):
		c.log.Debug(ctx, "the socket sent no greeting; going on", map[string]any{"url": redacted})
	case <-ctx.Done():
	}
	return s, nil
}

// socketDialError is a failed dial as the client's other errors are: an answer other than the
// upgrade is an *APIError (its status, error code, Retry-After and request id); a transport
// failure keeps its cause (a refused or reset connection) with the URL's token redacted; an attempt that ran out of time while ctx had time left is a timeout, not the
// end of ctx. So transientFailure tells a socket refused for now from one refused for good.
func (c *Client) socketDialError(ctx context.Context, redacted string, resp *http.Response, err error) error {
	if resp != nil && resp.StatusCode != http.StatusSwitchingProtocols {
		apiErr := newAPIError("", resp)
		apiErr.URL = redacted
		return fmt.Errorf("connect to the socket %s: %w", redacted, apiErr)
	}
	if ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("connect to the socket %s: %w", redacted, socketDialTimeout{after: c.short.Timeout})
	}
	// The library's wrappers quote the URL, token included: the error keeps only the
	// transport's cause (a refused or reset connection, which names no URL) under the redacted
	// URL.
	var urlErr *url.Error
	if errors.As(err, &urlErr) {
		return fmt.Errorf("connect to the socket %s: %w", redacted, &url.Error{Op: urlErr.Op, URL: redacted, Err: urlErr.Err})
	}
	return errors.New("connect to the socket " + redacted + ": " + c.scrub(err.Error()))
}

// socketDialTimeout is a dial that got no upgrade within the client's timeout.
type socketDialTimeout struct{ after time.Duration }

func (e socketDialTimeout) Error() string {
	return fmt.Sprintf("no answer to the upgrade within %s", e.after)
}
func (socketDialTimeout) Timeout() bool   { return true }
func (socketDialTimeout) Temporary() bool { return true }

// scrub removes the API key, raw or query-escaped, from a message that may quote the URL.
func (c *Client) scrub(msg string) string {
	if c.apiKey == "" {
		return msg
	}
	for _, v := range []string{c.apiKey, url.QueryEscape(c.apiKey), url.PathEscape(c.apiKey)} {
		msg = strings.ReplaceAll(msg, v, "REDACTED")
	}
	return msg
}

// Events delivers the socket's frames; it is closed when the connection ends.
func (s *Socket) Events() <-chan SocketEvent { return s.events }

// Connected reports whether the connection is still open.
func (s *Socket) isConnected() bool { return s != nil && s.connected.Load() }

// Close ends the connection.
func (s *Socket) Close() {
	if s == nil {
		return
	}
	s.cancel()
	_ = s.conn.Close(websocket.StatusNormalClosure, "")
}

func (s *Socket) read(ctx context.Context) {
	defer close(s.events)
	defer s.connected.Store(false)
	for {
		typ, data, err := s.readFrame(ctx)
		s.greetOnce.Do(func() { close(s.greeted) })
		if err != nil {
			if ctx.Err() == nil {
				s.log.Debug(ctx, "socket closed", map[string]any{"url": s.redacted, "reason": websocket.CloseStatus(err).String()})
			}
			return
		}
		if data == nil {
			s.log.Trace(ctx, "ignoring a socket message above the size bound", map[string]any{"bound_bytes": maxSocketText})
			continue
		}
		var ev SocketEvent
		switch typ {
		case websocket.MessageText:
			m, ok := parseSocketMessage(data)
			if !ok {
				s.log.Trace(ctx, "ignoring a socket message that is not {type, data} JSON", nil)
				continue
			}
			ev.Message = m
		case websocket.MessageBinary:
			f, err := decodeFrame(data)
			if err != nil {
				s.log.Trace(ctx, "ignoring a binary socket frame", map[string]any{"reason": err.Error()})
				continue
			}
			ev.Frame = &f
		}
		select {
		case s.events <- ev:
		case <-ctx.Done():
			return
		}
	}
}

// readFrame reads one message; a text message above maxSocketText is read to its end and
// returned as nil data.
func (s *Socket) readFrame(ctx context.Context) (websocket.MessageType, []byte, error) {
	typ, r, err := s.conn.Reader(ctx)
	if err != nil {
		return typ, nil, err
	}
	limit := int64(maxSocketMessage)
	if typ == websocket.MessageText {
		limit = maxSocketText
	}
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return typ, nil, err
	}
	if int64(len(data)) > limit {
		_, err = io.Copy(io.Discard, r) // the connection's read limit still bounds this
		return typ, nil, err
	}
	if data == nil {
		data = []byte{}
	}
	return typ, data, nil
}

func parseSocketMessage(data []byte) (*SocketMessage, bool) {
	var raw struct {
		Type string          `json:"type"`
		Data json.RawMessage `json:"data"`
	}
	if json.Unmarshal(data, &raw) != nil || raw.Type == "" {
		return nil, false
	}
	m := &SocketMessage{Type: raw.Type, Data: raw.Data}
	var ids struct {
		PromptID string `json:"prompt_id"`
	}
	if json.Unmarshal(raw.Data, &ids) == nil {
		m.PromptID = ids.PromptID
	}
	return m, true
}
