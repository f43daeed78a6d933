// Package registry is the node registry of the reference server, mounted by the emulator's
// Server under the same mount prefix and through its shared middleware (request id, request
// counting, fault injection):
//
//	POST   /publishers/{publisherId}/nodes/{nodeId}/claim-my-node   204; body {"REPO_TOKEN": "..."}
//	POST   /nodes/{nodeId}/translations                             201 with the node record; body {"data": {...}}
//	DELETE /publishers/{publisherId}/nodes/{nodeId}                 204
//
// Registry routes authenticate with "Authorization: Bearer <token>" against their own token
// table (AddToken), not the server's token: a registry token is a JWT of the identity provider
// or a prefixed API key, and tests register whichever they send. Errors use the registry's
// bodies: {error, message}; translations validation {details, message}; an unreadable body
// {message}.
package registry

import (
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/svc-org/terraform-provider-svc/internal/emulator/wire"
)

// Operation names of the registry routes.
const (
	OpClaim        = "registry.claim"
	OpTranslations = "registry.translations"
	OpDelete       = "registry.delete"
)

// Registry error codes. The registry's error bodies carry no fixed codes; these are the
// reference server's, one per error case the registry can answer, so that tests can tell them apart.
const (
	CodeUnauthorized     = "UNAUTHORIZED"                // 401: no or unknown bearer token
	CodePermissionDenied = "PUBLISHER_PERMISSION_DENIED" // 403: no such publisher, or the caller is not a member
	CodeNodeNotFound     = "NODE_NOT_FOUND"              // 404
	CodeAlreadyClaimed   = "NODE_ALREADY_CLAIMED"        // 409
	CodeInvalidRepoToken = "INVALID_REPO_TOKEN"          // 400: missing or unknown REPO_TOKEN, or not the repository owner's
)

type registryNode struct {
	repoOwner    string
	publisher    string // "" while unclaimed
	translations map[string]json.RawMessage
}

// Host mounts the registry's routes on the server.
type Host interface {
	// Route serves pattern (a ServeMux pattern without the mount prefix) as operation op through
	// the server's shared middleware, with auth as the credential check.
	Route(pattern, op string, h http.HandlerFunc, auth func(http.ResponseWriter, *http.Request) bool)
}

// Registry is the node registry's state: tokens, publishers, repositories and nodes.
type Registry struct {
	mu         sync.Mutex
	tokens     map[string]string          // bearer token -> user
	publishers map[string]map[string]bool // publisher -> members
	repoTokens map[string]string          // REPO_TOKEN -> code-hosting owner
	nodes      map[string]*registryNode
}

// New builds the registry and mounts its routes on host.
func New(host Host) *Registry {
	s := &Registry{
		tokens:     map[string]string{},
		publishers: map[string]map[string]bool{},
		repoTokens: map[string]string{},
		nodes:      map[string]*registryNode{},
	}
	s.register(host)
	return s
}

func (s *Registry) register(host Host) {
	host.Route("POST /publishers/{publisherId}/nodes/{nodeId}/claim-my-node", OpClaim, s.handleClaim, s.registryAuth)
	host.Route("POST /nodes/{nodeId}/translations", OpTranslations, s.handleTranslations, s.registryAuth)
	host.Route("DELETE /publishers/{publisherId}/nodes/{nodeId}", OpDelete, s.handleDeleteNode, s.registryAuth)
}

// AddToken lets bearer token act as user on the registry routes.
func (s *Registry) AddToken(token, user string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tokens[token] = user
}

// AddPublisher creates publisherID (if needed) and makes member one of its members.
func (s *Registry) AddPublisher(publisherID, member string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.publishers[publisherID] == nil {
		s.publishers[publisherID] = map[string]bool{}
	}
	s.publishers[publisherID][member] = true
}

// SetRepoOwner records that the code-hosting token repoToken belongs to owner.
func (s *Registry) SetRepoOwner(repoToken, owner string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.repoTokens[repoToken] = owner
}

// AddNode creates an unclaimed node whose repository belongs to repoOwner.
func (s *Registry) AddNode(nodeID, repoOwner string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nodes[nodeID] = &registryNode{repoOwner: repoOwner, translations: map[string]json.RawMessage{}}
}

// SetNodePublisher makes publisherID the node's owner, as if it had claimed it ("" unclaims it).
func (s *Registry) SetNodePublisher(nodeID, publisherID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n := s.nodes[nodeID]; n != nil {
		n.publisher = publisherID
	}
}

// NodeExists reports whether the node exists (it was added and not deleted).
func (s *Registry) NodeExists(nodeID string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.nodes[nodeID] != nil
}

// NodePublisher returns the publisher that claimed the node, or "" (unclaimed or absent).
func (s *Registry) NodePublisher(nodeID string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n := s.nodes[nodeID]; n != nil {
		return n.publisher
	}
	return ""
}

// NodeTranslations returns the node's translations as a JSON object (language code to object),
// or nil when the node does not exist.
func (s *Registry) NodeTranslations(nodeID string) json.RawMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.nodes[nodeID]
	if n == nil {
		return nil
	}
	b, _ := json.Marshal(n.translations)
	return b
}

// registryUser returns the user the request's bearer token stands for, or "".
func (s *Registry) registryUser(r *http.Request) string {
	token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || token == "" {
		return ""
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	user := ""
	for t, u := range s.tokens {
		if subtle.ConstantTimeCompare([]byte(t), []byte(token)) == 1 {
			user = u
		}
	}
	return user
}

// registryAuth is the registry routes' credential check (see authWith).
func (s *Registry) registryAuth(w http.ResponseWriter, r *http.Request) bool {
	if s.registryUser(r) != "" {
		return true
	}
	w.Header().Set("WWW-Authenticate", `Bearer realm="registry"`)
	writeRegistryError(w, http.StatusUnauthorized, CodeUnauthorized, "a valid bearer token (a JWT or a prefixed API key) is required")
	return false
}

func (s *Registry) handleClaim(w http.ResponseWriter, r *http.Request) {
	user := s.registryUser(r)
	publisherID, nodeID := r.PathValue("publisherId"), r.PathValue("nodeId")
	var body struct {
		RepoToken string `json:"REPO_TOKEN"`
	}
	if !readRegistryBody(w, r, &body) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.publishers[publisherID][user] {
		writeRegistryError(w, http.StatusForbidden, CodePermissionDenied,
			fmt.Sprintf("publisher %q does not exist or you are not one of its members", publisherID))
		return
	}
	n := s.nodes[nodeID]
	if n == nil {
		writeRegistryError(w, http.StatusNotFound, CodeNodeNotFound, fmt.Sprintf("node %q does not exist", nodeID))
		return
	}
	if n.publisher != "" {
		writeRegistryError(w, http.StatusConflict, CodeAlreadyClaimed,
			fmt.Sprintf("node %q is already claimed by publisher %q", nodeID, n.publisher))
		return
	}
	owner, known := s.repoTokens[body.RepoToken]
	switch {
	case body.RepoToken == "" || !known:
		writeRegistryError(w, http.StatusBadRequest, CodeInvalidRepoToken, "REPO_TOKEN is missing or not a valid repository token")
		return
	case owner != n.repoOwner:
		writeRegistryError(w, http.StatusBadRequest, CodeInvalidRepoToken,
			fmt.Sprintf("REPO_TOKEN does not belong to the owner of node %q's repository", nodeID))
		return
	}
	n.publisher = publisherID
	w.WriteHeader(http.StatusNoContent)
}

func (s *Registry) handleTranslations(w http.ResponseWriter, r *http.Request) {
	user := s.registryUser(r)
	nodeID := r.PathValue("nodeId")
	var body struct {
		Data json.RawMessage `json:"data"`
	}
	if !readRegistryBody(w, r, &body) {
		return
	}
	var data map[string]json.RawMessage
	if err := json.Unmarshal(body.Data, &data); err != nil || data == nil {
		wire.WriteJSON(w, http.StatusBadRequest, map[string]any{"details": []string{"data: must be an object of language code to object"}, "message": "invalid request body"})
		return
	}
	var details []string
	for _, lang := range slices.Sorted(maps.Keys(data)) {
		var obj map[string]any
		if json.Unmarshal(data[lang], &obj) != nil || obj == nil {
			details = append(details, fmt.Sprintf("data.%s: must be an object", lang))
		}
	}
	if len(details) > 0 {
		wire.WriteJSON(w, http.StatusBadRequest, map[string]any{"details": details, "message": "invalid translations"})
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.nodes[nodeID]
	if n == nil {
		writeRegistryError(w, http.StatusNotFound, CodeNodeNotFound, fmt.Sprintf("node %q does not exist", nodeID))
		return
	}
	if n.publisher == "" || !s.publishers[n.publisher][user] {
		writeRegistryError(w, http.StatusForbidden, CodePermissionDenied,
			fmt.Sprintf("you are not a member of the publisher of node %q", nodeID))
		return
	}
	// Translations are merged per language: posting a language replaces it, and languages not
	// posted are kept (the registry only creates translations; nothing removes one).
	for lang, v := range data {
		n.translations[lang] = v
	}
	wire.WriteJSON(w, http.StatusCreated, map[string]any{"id": nodeID, "publisher_id": n.publisher, "translations": n.translations})
}

func (s *Registry) handleDeleteNode(w http.ResponseWriter, r *http.Request) {
	user := s.registryUser(r)
	publisherID, nodeID := r.PathValue("publisherId"), r.PathValue("nodeId")
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.publishers[publisherID][user] {
		writeRegistryError(w, http.StatusForbidden, CodePermissionDenied,
			fmt.Sprintf("publisher %q does not exist or you are not one of its members", publisherID))
		return
	}
	n := s.nodes[nodeID]
	if n == nil || n.publisher != publisherID {
		writeRegistryError(w, http.StatusNotFound, CodeNodeNotFound, fmt.Sprintf("publisher %q has no node %q", publisherID, nodeID))
		return
	}
	delete(s.nodes, nodeID)
	w.WriteHeader(http.StatusNoContent)
}

// readRegistryBody decodes a bounded JSON body; an unreadable one gets the bare {message} body.
func readRegistryBody(w http.ResponseWriter, r *http.Request, out any) bool {
	b, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err == nil {
		err = json.Unmarshal(b, out)
	}
	if err != nil {
		wire.WriteJSON(w, http.StatusBadRequest, map[string]string{"message": "request body is not valid JSON"})
		return false
	}
	return true
}

func writeRegistryError(w http.ResponseWriter, status int, code, message string) {
	wire.WriteJSON(w, status, map[string]string{"error": code, "message": message})
}
