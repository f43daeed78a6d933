// Package workflow understands API-format workflow graphs: the JSON object of node id to
// {class_type, inputs} that the service runs. It tells that format apart from the UI export
// (which the service rejects) so the provider can refuse it at plan time, before anything is sent.
package workflow

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
)

// Node is one node of an API-format graph.
type Node struct {
	ClassType string                     `json:"class_type"`
	Inputs    map[string]json.RawMessage `json:"inputs"`
}

// Graph maps node id to node.
type Graph map[string]Node

// ErrUIFormat is returned for a UI-format export (top-level "nodes" and "links" arrays).
var ErrUIFormat = errors.New(`this is a UI-format workflow export (it has "nodes" and "links"); the service runs API-format workflows: export with "Export (API)" instead`)

// Parse checks that data is an API-format workflow and returns its nodes.
func Parse(data []byte) (Graph, error) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 || data[0] != '{' {
		return nil, errors.New("a workflow must be a JSON object of node id to node")
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return nil, fmt.Errorf("the workflow is not valid JSON: %w", err)
	}
	if IsUIFormat(top) {
		return nil, ErrUIFormat
	}
	if len(top) == 0 {
		return nil, errors.New("the workflow has no nodes")
	}
	g := make(Graph, len(top))
	for _, id := range slices.Sorted(maps.Keys(top)) {
		raw := bytes.TrimSpace(top[id])
		if len(raw) == 0 || raw[0] != '{' {
			return nil, fmt.Errorf("node %q must be an object with class_type and inputs", id)
		}
		var n Node
		if err := json.Unmarshal(raw, &n); err != nil {
			return nil, fmt.Errorf("node %q: %w", id, err)
		}
		if n.ClassType == "" {
			return nil, fmt.Errorf("node %q has no class_type", id)
		}
		if n.Inputs == nil {
			n.Inputs = map[string]json.RawMessage{}
		}
		g[id] = n
	}
	return g, nil
}

// IsUIFormat reports whether a decoded top-level object is the UI export, which carries arrays
// "nodes" and "links" (and usually "version", "last_node_id") instead of node ids.
func IsUIFormat(top map[string]json.RawMessage) bool {
	return isArray(top["nodes"]) && isArray(top["links"])
}

func isArray(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && raw[0] == '['
}

// NodeIDs returns the graph's node ids of the given class, sorted.
func (g Graph) NodeIDs(classType string) []string {
	var ids []string
	for id, n := range g {
		if n.ClassType == classType {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	return ids
}

// LinkSource reports whether an input value is a link ["node id", output index], and to which
// node: the engine runs a linked node before the node that uses it.
func LinkSource(raw json.RawMessage) (string, bool) {
	var link []any
	if json.Unmarshal(raw, &link) != nil || len(link) != 2 {
		return "", false
	}
	id, idOK := link[0].(string)
	if _, slotOK := link[1].(float64); !idOK || !slotOK {
		return "", false
	}
	return id, true
}

// SetInputs returns data with workflow[node].inputs[name] = value for every patch, keeping every
// other field of every node as it was. A patch naming a node the workflow lacks is an error: a
// misspelt node id would otherwise be silently ignored by the service.
func SetInputs(data []byte, patches map[string]map[string]any) ([]byte, error) {
	if _, err := Parse(data); err != nil {
		return nil, err
	}
	var nodes map[string]map[string]json.RawMessage
	if err := json.Unmarshal(data, &nodes); err != nil {
		return nil, err
	}
	for _, id := range slices.Sorted(maps.Keys(patches)) {
		node, ok := nodes[id]
		if !ok {
			return nil, fmt.Errorf("the workflow has no node %q (its nodes: %v)", id, slices.Sorted(maps.Keys(nodes)))
		}
		inputs := map[string]json.RawMessage{}
		if raw, ok := node["inputs"]; ok && string(raw) != "null" {
			if err := json.Unmarshal(raw, &inputs); err != nil {
				return nil, fmt.Errorf("node %q: inputs: %w", id, err)
			}
		}
		for name, value := range patches[id] {
			v, err := json.Marshal(value)
			if err != nil {
				return nil, fmt.Errorf("node %q input %q: %w", id, name, err)
			}
			inputs[name] = v
		}
		raw, err := json.Marshal(inputs)
		if err != nil {
			return nil, err
		}
		node["inputs"] = raw
	}
	return json.Marshal(nodes)
}

// AssetRef is the workflow input value that references an asset.
func AssetRef(id string) map[string]string {
	return map[string]string{"type": "core/ASSET", "id": id}
}
