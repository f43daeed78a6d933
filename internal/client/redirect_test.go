package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// billablePOSTs are the operations that send a body which creates or changes something, each as a
// function of a client whose endpoints all point at one server.
var billablePOSTs = []struct {
	name string
	run  func(context.Context, *Client) (adopted string, err error)
}{
	{"submit job", func(ctx context.Context, c *Client) (string, error) {
		job, err := c.SubmitJob(ctx, SubmitJobInput{Workflow: json.RawMessage(`{}`), ExtraData: map[string]string{"api_key_svc_org": "partner-secret"}, IdempotencyKey: "k1"})
		if job != nil {
			return job.ID, err
		}
		return "", err
	}},
	{"submit prompt", func(ctx context.Context, c *Client) (string, error) {
		p, err := c.SubmitPrompt(ctx, SubmitPromptInput{Workflow: json.RawMessage(`{}`), ExtraData: map[string]string{"api_key_svc_org": "partner-secret"}})
		if p != nil {
			return p.PromptID, err
		}
		return "", err
	}},
	{"claim node", func(ctx context.Context, c *Client) (string, error) {
		return "", c.ClaimNode(ctx, ClaimNodeInput{PublisherID: "pub", NodeID: "node", RepoToken: "repo-secret"})
	}},
	{"translations", func(ctx context.Context, c *Client) (string, error) {
		return "", c.CreateNodeTranslations(ctx, "node", json.RawMessage(`{"fr":{"title":"x"}}`))
	}},
	{"router submission", func(ctx context.Context, c *Client) (string, error) {
		q, err := c.SubmitModelRequest(ctx, InvokeInput{Model: "acme/m", Input: json.RawMessage(`{"prompt":"x"}`), IdempotencyKey: "k2"})
		if q != nil {
			return q.RequestID, err
		}
		return "", err
	}},
	{"router sync call", func(ctx context.Context, c *Client) (string, error) {
		_, err := c.InvokeModel(ctx, InvokeInput{Model: "acme/m", Input: json.RawMessage(`{"prompt":"x"}`), IdempotencyKey: "k3"})
		return "", err
	}},
	{"upload", func(ctx context.Context, c *Client) (string, error) {
		u, err := c.Upload(ctx, UploadInput{FileName: "a.png", Content: []byte("secret-bytes"), Type: "input"})
		if u != nil {
			return u.Name, err
		}
		return "", err
	}},
}

// A redirect in answer to a request with a body, to a host the configuration does not name, is
// not followed, whatever its status: the other host receives nothing at all (no body, no header,
// no connection), the error names that host, and nothing it would have answered is adopted.
func TestRedirectOfABodyToAnotherHostIsRefused(t *testing.T) {
	t.Parallel()
	const foreignID = "66666666-6666-6666-6666-666666666666"
	for _, status := range []int{http.StatusTemporaryRedirect, http.StatusPermanentRedirect, http.StatusFound, http.StatusSeeOther} {
		for _, op := range billablePOSTs {
			t.Run(fmt.Sprintf("%d %s", status, op.name), func(t *testing.T) {
				t.Parallel()
				var foreignRequests, foreignBytes atomic.Int64
				foreign := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					foreignRequests.Add(1)
					n, _ := io.Copy(io.Discard, r.Body)
					foreignBytes.Add(n)
					w.WriteHeader(http.StatusOK)
					fmt.Fprintf(w, `{"id":%q,"status":"queued","prompt_id":%[1]q,"request_id":%[1]q,"name":"x.png","urls":{"self":"/api/v2/jobs/%[1]s"}}`, foreignID)
				}))
				defer foreign.Close()
				var served atomic.Int64
				endpoint := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					served.Add(1)
					w.Header().Set("X-Svc-Request-Id", "req-redirect")
					http.Redirect(w, r, foreign.URL+r.URL.Path, status)
				}))
				defer endpoint.Close()

				adopted, err := op.run(context.Background(), testClient(t, endpoint.URL))
				if err == nil {
					t.Fatal("the redirected request succeeded")
				}
				var refused *RedirectRefusedError
				if !errors.As(err, &refused) {
					t.Fatalf("error is not a refused redirect: %v", err)
				}
				foreignHost := strings.TrimPrefix(foreign.URL, "http://")
				if !strings.Contains(err.Error(), foreignHost) || !strings.Contains(err.Error(), "req-redirect") {
					t.Errorf("the error does not name the Location host %s and the request id: %v", foreignHost, err)
				}
				if n := foreignRequests.Load(); n != 0 {
					t.Errorf("the other host received %d request(s), %d body bytes", n, foreignBytes.Load())
				}
				if adopted == foreignID {
					t.Error("the other host's answer was adopted")
				}
				if n := served.Load(); n != 1 {
					t.Errorf("the endpoint was asked %d times, want 1 (a refused redirect is not retried)", n)
				}
				var unknown *UnknownOutcomeError
				if status == http.StatusTemporaryRedirect && errors.As(err, &unknown) {
					t.Errorf("a 307 says the request was not processed, yet the outcome is called unknown: %v", err)
				}
			})
		}
	}
}

// A redirect that stays on the origin the request was sent to is followed, body and key included:
// that host is the one the configuration names.
func TestSameOriginRedirectOfASubmissionIsFollowed(t *testing.T) {
	t.Parallel()
	const id = "77777777-7777-7777-7777-777777777777"
	var gotBody, gotKey atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/v2/jobs" {
			http.Redirect(w, r, "/moved/api/v2/jobs", http.StatusTemporaryRedirect)
			return
		}
		b, _ := io.ReadAll(r.Body)
		gotBody.Store(string(b))
		gotKey.Store(r.Header.Get("Authorization"))
		w.WriteHeader(http.StatusCreated)
		_, _ = io.WriteString(w, jobJSON(id, "queued"))
	}))
	defer srv.Close()
	job, err := testClient(t, srv.URL).SubmitJob(context.Background(), SubmitJobInput{Workflow: json.RawMessage(`{"1":{}}`), IdempotencyKey: "k"})
	if err != nil || job.ID != id {
		t.Fatalf("SubmitJob: %+v, %v", job, err)
	}
	if b, _ := gotBody.Load().(string); !strings.Contains(b, `"1":{}`) {
		t.Errorf("the redirected body was %q", b)
	}
	if k, _ := gotKey.Load().(string); k != "Bearer k-secret" {
		t.Errorf("the same-origin target got Authorization %q", k)
	}
}
