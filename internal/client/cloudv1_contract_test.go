package client

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"
)

// The v1 interface has the socket at wss://{base_url_host}/ws and a prompt body of prompt and
// extra_data only; a server may know nothing else, so the client sends nothing else.
func TestV1RequestsFollowTheDocument(t *testing.T) {
	var mu sync.Mutex
	var paths []string
	var bodyKeys []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		paths = append(paths, r.URL.Path)
		if r.Method == http.MethodPost {
			var body map[string]json.RawMessage
			b, _ := io.ReadAll(r.Body)
			_ = json.Unmarshal(b, &body)
			for k := range body {
				bodyKeys = append(bodyKeys, k)
			}
			_, _ = w.Write([]byte(`{"prompt_id":"p-1"}`))
			return
		}
		http.NotFound(w, r)
	}))
	defer srv.Close()
	c := testClient(t, srv.URL+"/mount/prefix")

	if _, err := c.DialSocket(context.Background(), "client-1"); err == nil {
		t.Fatal("dialing a server without a socket must fail")
	}
	if _, err := c.SubmitPrompt(context.Background(), SubmitPromptInput{Workflow: json.RawMessage(`{"1":{"class_type":"A"}}`), ExtraData: map[string]string{"api_key_svc_org": "k"}}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(paths) != 2 || paths[0] != "/ws" || paths[1] != "/mount/prefix/api/prompt" {
		t.Fatalf("paths = %v, want the socket at /ws on the host and the prompt under the endpoint", paths)
	}
	sort.Strings(bodyKeys)
	if strings.Join(bodyKeys, ",") != "extra_data,prompt" {
		t.Fatalf("prompt body keys = %v, want only extra_data and prompt", bodyKeys)
	}
}
