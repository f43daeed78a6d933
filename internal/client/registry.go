package client

import (
	"context"
	"encoding/json"
	"net/http"
)

// The node registry's three operations. Every call carries Authorization: Bearer <registry_token>
// (a JWT, or an API key with the product prefix: both are sent the same way).
//
// The registry fixes neither success bodies nor statuses; we assume claim answers 204,
// translations 201 with a node record, delete 204, and accept any 2xx as success so
// that a service answering 200 instead is not reported as a failure. Error bodies are
// {error, message}, {details, message} or {message}; APIError keeps each field.

// ClaimNodeInput is the path and body of POST /publishers/{publisherId}/nodes/{nodeId}/claim-my-node.
type ClaimNodeInput struct {
	PublisherID string
	NodeID      string
	// RepoToken is the code-hosting token proving the caller owns the node's repository, sent as
	// the body's REPO_TOKEN. It is a secret: it is never logged or put in an error by the client.
	RepoToken string
}

// ClaimNode moves an unclaimed node into a publisher. It is resent only when the request never
// reached the service or was answered 429/503 with Retry-After (retryNotApplied); a 5xx or a lost
// connection after sending is returned as *UnknownOutcomeError, since the node may be claimed. A
// 503 with Retry-After that is still the last answer is not: the service declined the request.
func (c *Client) ClaimNode(ctx context.Context, in ClaimNodeInput) error {
	const op = "claim node"
	pub, err := pathSegment("publisher id", in.PublisherID)
	if err != nil {
		return err
	}
	node, err := pathSegment("node id", in.NodeID)
	if err != nil {
		return err
	}
	_, err = c.doJSON(ctx, call{
		op:     op,
		method: http.MethodPost,
		url:    joinPath(c.registryEndpoint, "publishers", pub, "nodes", node, "claim-my-node"),
		cred:   credRegistry,
		body:   mustJSON(map[string]string{"REPO_TOKEN": in.RepoToken}),
		policy: retryNotApplied,
	}, nil)
	if err != nil && outcomeUnknown(err) && !notApplied(err) {
		return &UnknownOutcomeError{Operation: op, Cause: err}
	}
	return err
}

// CreateNodeTranslations posts data (a JSON object: language code to an object of translated
// fields) to POST /nodes/{nodeId}/translations. Retried like ClaimNode.
func (c *Client) CreateNodeTranslations(ctx context.Context, nodeID string, data json.RawMessage) error {
	const op = "create node translations"
	node, err := pathSegment("node id", nodeID)
	if err != nil {
		return err
	}
	_, err = c.doJSON(ctx, call{
		op:     op,
		method: http.MethodPost,
		url:    joinPath(c.registryEndpoint, "nodes", node, "translations"),
		cred:   credRegistry,
		body:   mustJSON(map[string]json.RawMessage{"data": data}),
		policy: retryNotApplied,
	}, nil)
	if err != nil && outcomeUnknown(err) && !notApplied(err) {
		return &UnknownOutcomeError{Operation: op, Cause: err}
	}
	return err
}

// DeleteNode deletes a node of a publisher: DELETE /publishers/{publisherId}/nodes/{nodeId}.
// Deleting is idempotent, so it is retried like a read, and a 404 (the node is already gone,
// possibly deleted by an earlier attempt whose answer was lost) is success: alreadyGone tells the
// caller, so it can say so rather than claim a deletion it did not see.
func (c *Client) DeleteNode(ctx context.Context, publisherID, nodeID string) (alreadyGone bool, err error) {
	pub, err := pathSegment("publisher id", publisherID)
	if err != nil {
		return false, err
	}
	node, err := pathSegment("node id", nodeID)
	if err != nil {
		return false, err
	}
	a, err := c.doJSON(ctx, call{
		op:     "delete node",
		method: http.MethodDelete,
		url:    joinPath(c.registryEndpoint, "publishers", pub, "nodes", node),
		cred:   credRegistry,
		policy: retryIdempotent,
		accept: []int{http.StatusNotFound},
	}, nil)
	if err != nil {
		return false, err
	}
	return a.status == http.StatusNotFound, nil
}
