package emulator

import (
	"encoding/json"

	"github.com/svc-org/terraform-provider-svc/internal/emulator/registry"
)

// The node registry lives in package registry; these names keep the server's one surface for
// tests (operation names for Inject and Requests, error codes, the registry's tables).

// Operation names of the registry routes.
const (
	OpRegistryClaim        = registry.OpClaim
	OpRegistryTranslations = registry.OpTranslations
	OpRegistryDelete       = registry.OpDelete
)

// Registry error codes, one per documented error case.
const (
	RegistryErrUnauthorized     = registry.CodeUnauthorized
	RegistryErrPermissionDenied = registry.CodePermissionDenied
	RegistryErrNodeNotFound     = registry.CodeNodeNotFound
	RegistryErrAlreadyClaimed   = registry.CodeAlreadyClaimed
	RegistryErrInvalidRepoToken = registry.CodeInvalidRepoToken
)

// AddRegistryToken lets bearer token act as user on the registry routes.
func (s *Server) AddRegistryToken(token, user string) { s.registry.AddToken(token, user) }

// AddPublisher creates publisherID (if needed) and makes member one of its members.
func (s *Server) AddPublisher(publisherID, member string) {
	s.registry.AddPublisher(publisherID, member)
}

// SetRepoOwner records that the code-hosting token repoToken belongs to owner.
func (s *Server) SetRepoOwner(repoToken, owner string) { s.registry.SetRepoOwner(repoToken, owner) }

// AddNode creates an unclaimed node whose repository belongs to repoOwner.
func (s *Server) AddNode(nodeID, repoOwner string) { s.registry.AddNode(nodeID, repoOwner) }

// SetNodePublisher makes publisherID the node's owner, as if it had claimed it ("" unclaims it).
func (s *Server) SetNodePublisher(nodeID, publisherID string) {
	s.registry.SetNodePublisher(nodeID, publisherID)
}

// NodeExists reports whether the node exists (it was added and not deleted).
func (s *Server) NodeExists(nodeID string) bool { return s.registry.NodeExists(nodeID) }

// NodePublisher returns the publisher that claimed the node, or "" (unclaimed or absent).
func (s *Server) NodePublisher(nodeID string) string { return s.registry.NodePublisher(nodeID) }

// NodeTranslations returns the node's translations as a JSON object (language code to object),
// or nil when the node does not exist.
func (s *Server) NodeTranslations(nodeID string) json.RawMessage {
	return s.registry.NodeTranslations(nodeID)
}
