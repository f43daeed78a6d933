package emulator

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// registryHarness: user "alice" (token "jwt-alice") is a member of publisher "acme"; "bob"
// (token "jwt-bob") is not. Node "n1" and "n2" live in alice's repositories, "n3" in carol's.
// Repo token "ghp-alice" belongs to alice.
func registryHarness(t *testing.T) *harness {
	h := newHarness(t, Options{Token: "v2-key"})
	h.s.AddRegistryToken("jwt-alice", "alice")
	h.s.AddRegistryToken("jwt-bob", "bob")
	h.s.AddPublisher("acme", "alice")
	h.s.SetRepoOwner("ghp-alice", "alice")
	h.s.AddNode("n1", "alice")
	h.s.AddNode("n2", "alice")
	h.s.AddNode("n3", "carol")
	return h
}

func bearer(token string) map[string]string {
	if token == "" {
		return map[string]string{"Authorization": ""}
	}
	return map[string]string{"Authorization": "Bearer " + token}
}

func TestRegistryClaim(t *testing.T) {
	h := registryHarness(t)
	claim := func(token, publisher, node string, body any) (*http.Response, map[string]string) {
		resp, b := h.do("POST", "/publishers/"+publisher+"/nodes/"+node+"/claim-my-node", body, bearer(token))
		var out map[string]string
		if len(b) > 0 {
			_ = json.Unmarshal(b, &out)
		}
		return resp, out
	}
	good := map[string]string{"REPO_TOKEN": "ghp-alice"}

	if resp, body := claim("jwt-alice", "acme", "n1", good); resp.StatusCode != http.StatusNoContent {
		t.Fatalf("claim: %d %v", resp.StatusCode, body)
	}
	if got := h.s.NodePublisher("n1"); got != "acme" {
		t.Fatalf("NodePublisher(n1) = %q after the claim", got)
	}

	tests := []struct {
		name, token, publisher, node string
		body                         any
		status                       int
		code, inMessage              string
	}{
		{"no bearer token", "", "acme", "n2", good, 401, RegistryErrUnauthorized, "bearer token"},
		{"the v2 key is not a registry token", "v2-key", "acme", "n2", good, 401, RegistryErrUnauthorized, "bearer token"},
		{"publisher does not exist", "jwt-alice", "nope", "n2", good, 403, RegistryErrPermissionDenied, `publisher "nope"`},
		{"caller is not a member", "jwt-bob", "acme", "n2", good, 403, RegistryErrPermissionDenied, "not one of its members"},
		{"node does not exist", "jwt-alice", "acme", "ghost", good, 404, RegistryErrNodeNotFound, `node "ghost"`},
		{"node already claimed", "jwt-alice", "acme", "n1", good, 409, RegistryErrAlreadyClaimed, `already claimed by publisher "acme"`},
		{"repo token unknown", "jwt-alice", "acme", "n2", map[string]string{"REPO_TOKEN": "ghp-forged"}, 400, RegistryErrInvalidRepoToken, "not a valid repository token"},
		{"repo token missing", "jwt-alice", "acme", "n2", map[string]string{}, 400, RegistryErrInvalidRepoToken, "missing"},
		{"repo token of another owner", "jwt-alice", "acme", "n3", good, 400, RegistryErrInvalidRepoToken, "does not belong to the owner"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := claim(tt.token, tt.publisher, tt.node, tt.body)
			if resp.StatusCode != tt.status || body["error"] != tt.code || !strings.Contains(body["message"], tt.inMessage) {
				t.Fatalf("got %d %v; want %d %s with message containing %q", resp.StatusCode, body, tt.status, tt.code, tt.inMessage)
			}
			if resp.Header.Get(requestIDHeader) == "" {
				t.Fatal("no request id")
			}
		})
	}
	if h.s.NodePublisher("n2") != "" || h.s.NodePublisher("n3") != "" {
		t.Fatal("a refused claim changed ownership")
	}
	if resp, b := h.do("POST", "/publishers/acme/nodes/n2/claim-my-node", "{not json", bearer("jwt-alice")); resp.StatusCode != 400 || !strings.Contains(string(b), `"message"`) || strings.Contains(string(b), `"error"`) {
		t.Fatalf("unreadable body: %d %s; want 400 with a bare {message}", resp.StatusCode, b)
	}
}

func TestRegistryTranslationsAndDelete(t *testing.T) {
	h := registryHarness(t)
	if resp, b := h.do("POST", "/publishers/acme/nodes/n1/claim-my-node", map[string]string{"REPO_TOKEN": "ghp-alice"}, bearer("jwt-alice")); resp.StatusCode != 204 {
		t.Fatalf("claim: %d %s", resp.StatusCode, b)
	}
	post := func(token, node, data string) (*http.Response, string) {
		resp, b := h.do("POST", "/nodes/"+node+"/translations", `{"data":`+data+`}`, bearer(token))
		return resp, string(b)
	}
	if resp, b := post("jwt-alice", "n1", `{"fr":{"title":"Bonjour"},"de":{"title":"Hallo"}}`); resp.StatusCode != 201 || !strings.Contains(b, `"id":"n1"`) {
		t.Fatalf("translations: %d %s", resp.StatusCode, b)
	}
	if resp, b := post("jwt-alice", "n1", `{"fr":{"title":"Salut"}}`); resp.StatusCode != 201 {
		t.Fatalf("second post: %d %s", resp.StatusCode, b)
	}
	if got := string(h.s.NodeTranslations("n1")); got != `{"de":{"title":"Hallo"},"fr":{"title":"Salut"}}` {
		t.Fatalf("NodeTranslations = %s; want fr replaced and de kept", got)
	}

	refusals := []struct {
		name, token, node, data string
		status                  int
		want                    string
	}{
		{"data not an object", "jwt-alice", "n1", `["fr"]`, 400, `"details":["data: must be an object`},
		{"a language not an object", "jwt-alice", "n1", `{"fr":"Bonjour"}`, 400, `"details":["data.fr: must be an object"]`},
		{"node missing", "jwt-alice", "ghost", `{}`, 404, RegistryErrNodeNotFound},
		{"not a member of the node's publisher", "jwt-bob", "n1", `{}`, 403, RegistryErrPermissionDenied},
		{"unclaimed node", "jwt-alice", "n2", `{}`, 403, RegistryErrPermissionDenied},
		{"no token", "", "n1", `{}`, 401, RegistryErrUnauthorized},
	}
	for _, tt := range refusals {
		if resp, b := post(tt.token, tt.node, tt.data); resp.StatusCode != tt.status || !strings.Contains(b, tt.want) {
			t.Errorf("%s: %d %s; want %d with %s", tt.name, resp.StatusCode, b, tt.status, tt.want)
		}
	}

	del := func(token, publisher, node string) (*http.Response, string) {
		resp, b := h.do("DELETE", "/publishers/"+publisher+"/nodes/"+node, nil, bearer(token))
		return resp, string(b)
	}
	if resp, b := del("jwt-bob", "acme", "n1"); resp.StatusCode != 403 || !strings.Contains(b, RegistryErrPermissionDenied) {
		t.Fatalf("delete by a non-member: %d %s", resp.StatusCode, b)
	}
	if resp, b := del("jwt-alice", "acme", "n2"); resp.StatusCode != 404 || !strings.Contains(b, RegistryErrNodeNotFound) {
		t.Fatalf("delete of a node of no publisher: %d %s", resp.StatusCode, b)
	}
	if resp, b := del("jwt-alice", "acme", "n1"); resp.StatusCode != 204 || h.s.NodeExists("n1") {
		t.Fatalf("delete: %d %s; exists afterwards: %v", resp.StatusCode, b, h.s.NodeExists("n1"))
	}
	if resp, _ := del("jwt-alice", "acme", "n1"); resp.StatusCode != 404 {
		t.Fatalf("second delete: %d, want 404", resp.StatusCode)
	}
	if h.s.Requests(OpRegistryDelete) != 4 || h.s.LastRequestHeader(OpRegistryDelete).Get("Authorization") != "Bearer jwt-alice" {
		t.Fatal("delete requests were not counted or their headers not kept")
	}
}
