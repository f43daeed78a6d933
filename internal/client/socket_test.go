package client

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// A JSON message above maxSocketText is skipped whole; the connection stays up and the next
// message arrives.
func TestSocketSkipsOversizedTextMessages(t *testing.T) {
	t.Parallel()
	big := `{"type":"executed","data":{"prompt_id":"p","pad":"` + strings.Repeat("x", maxSocketText) + `"}}`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer func() { _ = conn.CloseNow() }()
		for _, m := range []string{`{"type":"status","data":{}}`, big, `{"type":"executing","data":{"prompt_id":"p"}}`} {
			if conn.Write(r.Context(), websocket.MessageText, []byte(m)) != nil {
				return
			}
		}
		<-r.Context().Done()
	}))
	defer srv.Close()
	c := testClient(t, srv.URL)
	sock, err := c.DialSocket(context.Background(), "c1")
	if err != nil {
		t.Fatal(err)
	}
	defer sock.Close()
	var types []string
	timeout := time.After(5 * time.Second)
	for len(types) < 2 {
		select {
		case ev, ok := <-sock.Events():
			if !ok {
				t.Fatalf("the socket closed after %v", types)
			}
			types = append(types, ev.Message.Type)
		case <-timeout:
			t.Fatalf("messages seen: %v; want status then executing", types)
		}
	}
	if types[0] != "status" || types[1] != "executing" || !sock.isConnected() {
		t.Fatalf("messages %v, connected %v; want status, executing and the socket still up", types, sock.isConnected())
	}
}
