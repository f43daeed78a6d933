// Package workflow understands API-format workflow graphs: the JSON object of node id to
// {class_type, inputs} that the service runs. It tells that format apart from the UI export
// (which the service rejects) so the provider can refuse it at plan time, before anything is sent,
// sets nodes' inputs, and (Template) patches one workflow for many rows straight to canonical
// bytes.
package workflow

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"

	"github.com/svc-org/terraform-provider-svc/internal/canonicaljson"
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

// Template is a workflow that many rows patch, each in a few inputs: PatchCanonical returns
// what canonicaljson.Canonical(SetInputs(data, patches)) returns, byte for byte, from pieces
// of the workflow parsed and made canonical once, so that a row costs the encoding of its own
// values instead of three passes over the whole workflow.
type Template struct {
	ids   []string // node ids, sorted as canonical JSON sorts keys
	nodes map[string]*templateNode
	size  int // bytes of the canonical workflow
}

// templateNode is one node of a Template: its canonical encoding whole (for rows that leave it
// alone), and, for rows that patch it, its fields and inputs one by one.
type templateNode struct {
	key    []byte            // the node id as a canonical JSON string
	whole  []byte            // the node, canonical
	fields map[string][]byte // canonical value of every field but inputs
	inputs map[string][]byte // canonical value of every input (none when inputs is null or absent)
	names  map[string][]byte // every field and input name as a canonical JSON string
}

// NewTemplate parses an API-format workflow (see Parse) for PatchCanonical.
func NewTemplate(data []byte) (*Template, error) {
	if _, err := Parse(data); err != nil {
		return nil, err
	}
	var nodes map[string]map[string]json.RawMessage
	if err := json.Unmarshal(data, &nodes); err != nil {
		return nil, err
	}
	t := &Template{ids: slices.Sorted(maps.Keys(nodes)), nodes: make(map[string]*templateNode, len(nodes))}
	for _, id := range t.ids {
		n, err := newTemplateNode(id, nodes[id])
		if err != nil {
			return nil, fmt.Errorf("node %q: %w", id, err)
		}
		t.nodes[id] = n
		t.size += len(n.key) + len(n.whole) + 2
	}
	return t, nil
}

func newTemplateNode(id string, fields map[string]json.RawMessage) (*templateNode, error) {
	key, err := canonicalOf(id)
	if err != nil {
		return nil, err
	}
	n := &templateNode{key: key, fields: make(map[string][]byte, len(fields)), inputs: map[string][]byte{}, names: map[string][]byte{"inputs": []byte(`"inputs"`)}}
	if n.whole, err = canonicalOf(fields); err != nil {
		return nil, err
	}
	for name, raw := range fields {
		if name == "inputs" {
			continue
		}
		if n.fields[name], err = canonicaljson.Canonical(raw); err != nil {
			return nil, err
		}
		n.names[name] = canonicalString(name)
	}
	if raw, ok := fields["inputs"]; ok && string(raw) != "null" {
		var inputs map[string]json.RawMessage
		if err := json.Unmarshal(raw, &inputs); err != nil {
			return nil, fmt.Errorf("inputs: %w", err)
		}
		for name, v := range inputs {
			if n.inputs[name], err = canonicaljson.Canonical(v); err != nil {
				return nil, err
			}
			n.names[name] = canonicalString(name)
		}
	}
	return n, nil
}

// canonicalOf is the canonical JSON of v as encoding/json encodes it: strings, booleans, null
// and integers directly, anything else encoded, then made canonical.
func canonicalOf(v any) ([]byte, error) {
	switch v := v.(type) {
	case string:
		return canonicalString(v), nil
	case bool:
		return strconv.AppendBool(nil, v), nil
	case nil:
		return []byte("null"), nil
	case int64:
		return []byte(canonicaljson.Number(strconv.FormatInt(v, 10))), nil
	case int:
		return []byte(canonicaljson.Number(strconv.Itoa(v))), nil
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return canonicaljson.Canonical(raw)
}

// PatchCanonical returns the canonical JSON of the workflow with workflow[node].inputs[name] =
// value for every patch (values as encoding/json encodes them). A patch naming a node the
// workflow lacks is an error, as for SetInputs.
func (t *Template) PatchCanonical(patches map[string]map[string]any) ([]byte, error) {
	for _, id := range slices.Sorted(maps.Keys(patches)) {
		if t.nodes[id] == nil {
			return nil, fmt.Errorf("the workflow has no node %q (its nodes: %v)", id, t.ids)
		}
	}
	var b bytes.Buffer
	b.Grow(t.size + 64)
	b.WriteByte('{')
	for i, id := range t.ids {
		if i > 0 {
			b.WriteByte(',')
		}
		n := t.nodes[id]
		b.Write(n.key)
		b.WriteByte(':')
		patch, ok := patches[id]
		if !ok {
			b.Write(n.whole)
			continue
		}
		if err := n.writePatched(&b, patch); err != nil {
			return nil, fmt.Errorf("node %q: %w", id, err)
		}
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// writePatched writes the node with its inputs patched: every field as it was, and inputs (an
// object even where the template had none) with the patched values in place.
func (n *templateNode) writePatched(b *bytes.Buffer, patch map[string]any) error {
	inputs := maps.Clone(n.inputs)
	for name, value := range patch {
		v, err := canonicalOf(value)
		if err != nil {
			return fmt.Errorf("input %q: %w", name, err)
		}
		inputs[name] = v
	}
	fields := maps.Clone(n.fields)
	fields["inputs"] = n.writeObject(inputs)
	b.Write(n.writeObject(fields))
	return nil
}

// canonicalString is s as canonical JSON writes a string: encoding/json's encoding without
// HTML escapes.
func canonicalString(s string) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a Go string always encodes
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// writeObject is the canonical object of the given canonical values; names holds names
// already encoded.
func (n *templateNode) writeObject(values map[string][]byte) []byte {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, name := range slices.Sorted(maps.Keys(values)) {
		if i > 0 {
			b.WriteByte(',')
		}
		key, ok := n.names[name]
		if !ok {
			key = canonicalString(name)
		}
		b.Write(key)
		b.WriteByte(':')
		b.Write(values[name])
	}
	b.WriteByte('}')
	return b.Bytes()
}
