package workflow

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/svc-org/terraform-provider-svc/internal/canonicaljson"
)

// ConvertError is a conversion refused because a node does not fit: the converter never guesses.
// It names the node (an id "outer:inner" inside a subgraph), its class and its title.
type ConvertError struct {
	NodeID  string
	Class   string
	Title   string
	Problem string
}

func (e *ConvertError) Error() string {
	who := fmt.Sprintf("node %s (%s", e.NodeID, e.Class)
	if e.Title != "" && e.Title != e.Class {
		who += fmt.Sprintf(", titled %q", e.Title)
	}
	return who + "): " + e.Problem
}

// maxSubgraphDepth bounds nesting, and maxExpandedNodes the nodes all subgraph instances expand
// to: larger exports are refused rather than expanded without end (a subgraph holding two
// instances of another, 32 deep, would be billions of nodes).
const (
	maxSubgraphDepth = 32
	maxExpandedNodes = 100_000
)

// apiNode is one node of the API format the converter writes.
type apiNode struct {
	ClassType string         `json:"class_type"`
	Inputs    map[string]any `json:"inputs"`
	Meta      apiMeta        `json:"_meta"`
}

type apiMeta struct {
	Title string `json:"title"`
}

// converter holds one conversion: the class definitions, the subgraph definitions and the nodes
// written so far.
type converter struct {
	defs      ClassDefs
	subgraphs map[string]*uiSubgraph
	out       map[string]*apiNode
	// scopes are the subgraph instances expanded so far, by id prefix; expanded counts their nodes.
	scopes   map[string]*scope
	expanded int
}

// FromUI converts an editor (UI-format) export to an API-format workflow, with these class
// definitions (ParseClassDefs reads them from the document GET /api/object_info returns). The
// result is canonical JSON (see canonicaljson.Canonical). Whatever does not fit the definitions
// is refused with a *ConvertError naming the node: an unknown class, a widget value count or type
// that does not match, a link to a missing node or slot, a cycle.
func (defs ClassDefs) FromUI(uiExport []byte) ([]byte, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(uiExport, &top); err != nil {
		return nil, fmt.Errorf("the UI workflow is not a JSON object: %w", err)
	}
	if !IsUIFormat(top) {
		if _, err := Parse(uiExport); err == nil {
			return nil, errors.New("this is already an API-format workflow (node id to class_type and inputs): use it as it is, without converting")
		}
		return nil, errors.New(`this is not a UI-format export: it has no "nodes" and "links" arrays`)
	}
	var doc uiDocument
	if err := json.Unmarshal(uiExport, &doc); err != nil {
		return nil, fmt.Errorf("the UI workflow cannot be read: %w", err)
	}
	c := &converter{defs: defs, subgraphs: map[string]*uiSubgraph{}, out: map[string]*apiNode{}, scopes: map[string]*scope{}}
	if err := c.collectSubgraphs(doc.Definitions, 0); err != nil {
		return nil, err
	}
	root, err := newScope(&doc.uiGraphBody, "", nil, nil)
	if err != nil {
		return nil, err
	}
	if err := c.emitScope(root); err != nil {
		return nil, err
	}
	if len(c.out) == 0 {
		return nil, errors.New("the UI workflow has no node that runs (every node is a note, muted, bypassed or editor-only)")
	}
	if err := c.checkAcyclic(); err != nil {
		return nil, err
	}
	raw, err := json.Marshal(c.out)
	if err != nil {
		return nil, err
	}
	return canonicaljson.Canonical(raw)
}

// collectSubgraphs indexes every subgraph definition by id, including definitions nested in
// subgraphs.
func (c *converter) collectSubgraphs(defs uiDefinitions, depth int) error {
	if depth > maxSubgraphDepth {
		return fmt.Errorf("subgraph definitions are nested more than %d deep", maxSubgraphDepth)
	}
	for _, sg := range defs.Subgraphs {
		if sg == nil || sg.ID == "" {
			return errors.New("a subgraph definition has no id")
		}
		if prev, dup := c.subgraphs[sg.ID]; dup && prev != sg {
			return fmt.Errorf("subgraph %s is defined twice", sg.ID)
		}
		c.subgraphs[sg.ID] = sg
		if err := c.collectSubgraphs(sg.Definitions, depth+1); err != nil {
			return err
		}
	}
	return nil
}

// scope is one graph being converted: the top level, or one instance of a subgraph, whose node
// ids are prefixed with the instance's id ("12:" and, nested, "12:5:").
type scope struct {
	prefix   string
	nodes    map[uiID]*uiNode
	order    []*uiNode
	links    map[uiID]*uiLink
	parent   *scope
	instance *uiNode     // the subgraph node in parent that this scope expands
	sub      *uiSubgraph // nil at the top level
	depth    int
}

func newScope(body *uiGraphBody, prefix string, parent *scope, instance *uiNode) (*scope, error) {
	sc := &scope{prefix: prefix, nodes: map[uiID]*uiNode{}, links: map[uiID]*uiLink{}, parent: parent, instance: instance}
	if parent != nil {
		sc.depth = parent.depth + 1
	}
	for _, n := range body.Nodes {
		if n == nil {
			return nil, errors.New("the UI workflow has a null node")
		}
		if _, dup := sc.nodes[n.ID]; dup {
			return nil, &ConvertError{NodeID: prefix + string(n.ID), Class: n.Type, Title: n.title(), Problem: "another node has the same id"}
		}
		sc.nodes[n.ID] = n
		sc.order = append(sc.order, n)
	}
	for _, l := range body.Links {
		if l != nil {
			sc.links[l.ID] = l
		}
	}
	return sc, nil
}

// enter returns the scope of the subgraph that instance (a node of sc) stands for.
func (c *converter) enter(sc *scope, instance *uiNode) (*scope, error) {
	prefix := sc.apiID(instance) + ":"
	if inner := c.scopes[prefix]; inner != nil {
		return inner, nil
	}
	sub := c.subgraphs[instance.Type]
	for s := sc; s != nil; s = s.parent {
		if s.sub == sub {
			return nil, c.refuse(sc, instance, "the subgraph contains itself")
		}
	}
	if sc.depth >= maxSubgraphDepth {
		return nil, c.refuse(sc, instance, fmt.Sprintf("subgraphs are nested more than %d deep", maxSubgraphDepth))
	}
	c.expanded += len(sub.Nodes)
	if c.expanded > maxExpandedNodes {
		return nil, c.refuse(sc, instance, fmt.Sprintf("its subgraphs expand to more than %d nodes", maxExpandedNodes))
	}
	inner, err := newScope(&sub.uiGraphBody, prefix, sc, instance)
	if err != nil {
		return nil, err
	}
	inner.sub = sub
	c.scopes[prefix] = inner
	return inner, nil
}

func (sc *scope) apiID(n *uiNode) string { return sc.prefix + string(n.ID) }

// ioNodeID is the id the subgraph's inner links use for its input (-10) or output (-20) node.
func ioNodeID(n *uiSubgraphNode, fallback uiID) uiID {
	if n == nil || n.ID == "" {
		return fallback
	}
	return n.ID
}

func (n *uiNode) title() string {
	if n.Title != nil {
		return *n.Title
	}
	return ""
}

// refuse builds the error for a node of sc.
func (c *converter) refuse(sc *scope, n *uiNode, problem string) error {
	title := n.title()
	if title == "" {
		if sub := c.subgraphs[n.Type]; sub != nil {
			title = sub.Name
		}
	}
	return &ConvertError{NodeID: sc.apiID(n), Class: n.Type, Title: title, Problem: problem}
}

// emitScope writes every node of sc that runs, descending into subgraphs.
func (c *converter) emitScope(sc *scope) error {
	for _, n := range sc.order {
		if err := c.emitNode(sc, n); err != nil {
			return err
		}
	}
	return nil
}

func (c *converter) emitNode(sc *scope, n *uiNode) error {
	switch {
	case n.Mode != modeAlways && n.Mode != modeNever && n.Mode != modeBypass:
		return c.refuse(sc, n, fmt.Sprintf("mode %d is not one the editor uses (0 runs, 2 muted, 4 bypassed)", n.Mode))
	case n.Type == classReroute || n.Type == classPrimitive || frontendOnlyClasses[n.Type]:
		return nil // editor-only: reroutes are followed and primitives read where they are used
	case n.Mode != modeAlways:
		return nil // muted and bypassed nodes never run; their consumers are rewired
	case c.subgraphs[n.Type] != nil:
		inner, err := c.enter(sc, n)
		if err != nil {
			return err
		}
		return c.emitScope(inner)
	}
	def, err := c.classOf(sc, n)
	if err != nil {
		return err
	}
	inputs, err := c.widgetInputs(sc, n, def)
	if err != nil {
		return err
	}
	if err := c.linkedInputs(sc, n, def, inputs); err != nil {
		return err
	}
	title := n.title()
	if title == "" {
		title = def.DisplayName
	}
	c.out[sc.apiID(n)] = &apiNode{ClassType: n.Type, Inputs: inputs, Meta: apiMeta{Title: title}}
	return nil
}

// classOf is the definition of a node that runs: its class must be one object_info lists.
func (c *converter) classOf(sc *scope, n *uiNode) (*ClassDef, error) {
	if n.Type == "" {
		return nil, c.refuse(sc, n, "the node has no type (class)")
	}
	def := c.defs[n.Type]
	if def == nil {
		return nil, c.refuse(sc, n, fmt.Sprintf("unknown class %q: the service's object_info does not list it "+
			"(install the node pack on the service, or remove, mute or bypass the node)", n.Type))
	}
	if def.Err != nil {
		return nil, c.refuse(sc, n, def.Err.Error())
	}
	return def, nil
}

// linkedInputs sets every input fed by a link: to the source node's output, or to a value (a
// primitive node's, or a subgraph node's widget). An input whose source does not run (muted, or nothing reaches it) keeps its widget
// value when it has one and is left out otherwise, as the editor does.
func (c *converter) linkedInputs(sc *scope, n *uiNode, def *ClassDef, inputs map[string]any) error {
	for slot, in := range n.Inputs {
		if in.Link == nil {
			continue
		}
		name := in.inputName()
		spec, ok := def.Input(name)
		if !ok {
			return c.refuse(sc, n, fmt.Sprintf("input slot %d (%q) is linked, but %s has no input %q", slot, in.Name, def.Name, name))
		}
		src, err := c.resolveLink(sc, *in.Link, n, slot, newVisit())
		if err != nil {
			return err
		}
		switch src.kind {
		case sourceOutput:
			inputs[name] = []any{src.node, src.slot}
		case sourceNone:
			delete(inputs, name)
		case sourceValue:
			if err := checkWidgetValue(spec, src.value); err != nil {
				return c.refuse(sc, n, fmt.Sprintf("input %q is fed a value (by a primitive node or a subgraph node's widget) that does not fit: %v", name, err))
			}
			inputs[name] = src.value
		}
	}
	return nil
}

// checkAcyclic refuses a converted graph in which a node depends on itself.
func (c *converter) checkAcyclic() error {
	const (
		active   = 1
		finished = 2
	)
	state := map[string]int{}
	var visit func(id string) error
	visit = func(id string) error {
		state[id] = active
		n := c.out[id]
		for _, name := range slices.Sorted(maps.Keys(n.Inputs)) {
			link, ok := n.Inputs[name].([]any)
			if !ok {
				continue
			}
			from := link[0].(string)
			switch state[from] {
			case active:
				return &ConvertError{NodeID: id, Class: n.ClassType, Title: n.Meta.Title,
					Problem: fmt.Sprintf("input %q closes a cycle through node %s", name, from)}
			case 0:
				if err := visit(from); err != nil {
					return err
				}
			}
		}
		state[id] = finished
		return nil
	}
	for _, id := range slices.Sorted(maps.Keys(c.out)) {
		if state[id] == 0 {
			if err := visit(id); err != nil {
				return err
			}
		}
	}
	return nil
}

// rawValue keeps a JSON value as the export wrote it (canonicaljson.Canonical normalises it afterwards).
func rawValue(b json.RawMessage) json.RawMessage { return bytes.TrimSpace(b) }
