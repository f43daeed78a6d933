package workflow

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// sourceKind is what a link turns out to carry once editor-only nodes are seen through.
type sourceKind int

const (
	// sourceNone is nothing: a muted node, or a reroute or bypassed node with nothing before it.
	// The consumer loses the input, even a widget's: its stored value is not what the graph says.
	sourceNone   sourceKind = iota
	sourceOutput            // an output of a node that runs
	sourceValue             // a primitive node's value, or a subgraph node's widget value
	// sourceOwnWidget is a subgraph input left unconnected outside: the consumer inside keeps its
	// own widget value (if it has one).
	sourceOwnWidget
)

type source struct {
	kind  sourceKind
	node  string
	slot  int
	value json.RawMessage
}

// visit remembers the links followed for one input, to refuse a loop of reroutes, bypassed
// nodes or subgraph ports instead of following it for ever.
type visit map[string]bool

func newVisit() visit { return visit{} }

// follow records that link id of sc is being followed; false means it already was (a loop).
func (seen visit) follow(sc *scope, id uiID) bool {
	key := sc.prefix + "link " + string(id)
	if seen[key] {
		return false
	}
	seen[key] = true
	return true
}

// resolveLink follows the link feeding input slot of consumer (a node of sc) to what it carries.
func (c *converter) resolveLink(sc *scope, id uiID, consumer *uiNode, slot int, seen visit) (source, error) {
	if !seen.follow(sc, id) {
		return source{}, c.refuse(sc, consumer, fmt.Sprintf("input slot %d is fed through a loop of links (link %s comes back)", slot, id))
	}
	l := sc.links[id]
	if l == nil {
		return source{}, c.refuse(sc, consumer, fmt.Sprintf("input slot %d is wired to link %s, which the export does not have", slot, id))
	}
	if l.TargetID != consumer.ID || l.TargetSlot != slot {
		return source{}, c.refuse(sc, consumer, fmt.Sprintf("input slot %d is wired to link %s, but that link goes to node %s slot %d", slot, id, l.TargetID, l.TargetSlot))
	}
	return c.resolveOrigin(sc, l, nodeRef{sc, consumer}, seen)
}

// nodeRef is a node with the scope it belongs to, to name in an error.
type nodeRef struct {
	sc *scope
	n  *uiNode
}

// resolveOrigin is what link l of sc carries: its origin node's output, or, inside a subgraph, the
// subgraph's input, which is whatever feeds the instance's matching input outside.
func (c *converter) resolveOrigin(sc *scope, l *uiLink, consumer nodeRef, seen visit) (source, error) {
	if sc.sub != nil && l.OriginID == ioNodeID(sc.sub.InputNode, "-10") {
		if l.OriginSlot < 0 || l.OriginSlot >= len(sc.sub.Inputs) || l.OriginSlot >= len(sc.instance.Inputs) {
			return source{}, c.refuse(sc.parent, sc.instance, fmt.Sprintf("link %s inside the subgraph comes from its input %d, which the subgraph node lacks", l.ID, l.OriginSlot))
		}
		switch in := sc.instance.Inputs[l.OriginSlot]; {
		case in.Link != nil:
			return c.resolveLink(sc.parent, *in.Link, sc.instance, l.OriginSlot, seen)
		case in.Widget != nil:
			return c.promotedValue(sc.parent, sc.instance, l.OriginSlot)
		}
		return source{kind: sourceOwnWidget}, nil
	}
	origin := sc.nodes[l.OriginID]
	if origin == nil {
		return source{}, c.refuse(consumer.sc, consumer.n, fmt.Sprintf("link %s comes from node %s, which the export does not have", l.ID, l.OriginID))
	}
	return c.resolveOutput(sc, origin, l.OriginSlot, seen)
}

// resolveInput is what input slot of node n carries: nothing when unconnected.
func (c *converter) resolveInput(sc *scope, n *uiNode, slot int, seen visit) (source, error) {
	in := n.Inputs[slot]
	if in.Link == nil {
		return source{}, nil
	}
	return c.resolveLink(sc, *in.Link, n, slot, seen)
}

// resolveOutput is what output slot of node n carries, seeing through the nodes that do not run.
func (c *converter) resolveOutput(sc *scope, n *uiNode, slot int, seen visit) (source, error) {
	switch {
	case n.Type == classReroute:
		if len(n.Inputs) == 0 {
			return source{}, nil
		}
		return c.resolveInput(sc, n, 0, seen)
	case n.Type == classPrimitive:
		return c.primitiveValue(sc, n)
	case frontendOnlyClasses[n.Type]:
		return source{}, c.refuse(sc, n, "a note has no outputs, yet a link comes from it")
	case n.Mode == modeNever:
		return source{}, nil
	case n.Mode == modeBypass:
		return c.resolveBypass(sc, n, slot, seen)
	case n.Mode != modeAlways:
		return source{}, c.refuse(sc, n, fmt.Sprintf("mode %d is not one the editor uses (0 runs, 2 muted, 4 bypassed)", n.Mode))
	case c.subgraphs[n.Type] != nil:
		return c.resolveSubgraphOutput(sc, n, slot, seen)
	}
	def, err := c.classOf(sc, n)
	if err != nil {
		return source{}, err
	}
	if slot < 0 || slot >= len(def.Outputs) {
		return source{}, c.refuse(sc, n, fmt.Sprintf("a link comes from output slot %d, but %s has %d outputs", slot, def.Name, len(def.Outputs)))
	}
	return source{kind: sourceOutput, node: sc.apiID(n), slot: slot}, nil
}

// primitiveValue is a primitive node's value: the first of its widgets_values (a control value
// may follow it, as after any seed).
func (c *converter) primitiveValue(sc *scope, n *uiNode) (source, error) {
	var values []json.RawMessage
	if err := json.Unmarshal(n.WidgetsValues, &values); err != nil || len(values) == 0 {
		return source{}, c.refuse(sc, n, "a primitive node feeds an input but holds no value (widgets_values is empty)")
	}
	return source{kind: sourceValue, value: rawValue(values[0])}, nil
}

// resolveBypass is what a bypassed node passes on at output slot: the input in the same slot
// when its type is the output's, else its first input of that type, else nothing.
func (c *converter) resolveBypass(sc *scope, n *uiNode, slot int, seen visit) (source, error) {
	if slot < 0 || slot >= len(n.Outputs) {
		return source{}, c.refuse(sc, n, fmt.Sprintf("a link comes from output slot %d, but the node has %d outputs", slot, len(n.Outputs)))
	}
	want := n.Outputs[slot].Type
	if slot < len(n.Inputs) && typesFit(n.Inputs[slot].Type, want) {
		return c.resolveInput(sc, n, slot, seen)
	}
	for i, in := range n.Inputs {
		if strings.EqualFold(string(in.Type), string(want)) {
			return c.resolveInput(sc, n, i, seen)
		}
	}
	return source{}, nil
}

// resolveSubgraphOutput is what a subgraph node gives at output slot: whatever feeds the
// subgraph's matching output inside.
func (c *converter) resolveSubgraphOutput(sc *scope, n *uiNode, slot int, seen visit) (source, error) {
	inner, err := c.enter(sc, n)
	if err != nil {
		return source{}, err
	}
	sub := inner.sub
	if slot < 0 || slot >= len(sub.Outputs) {
		return source{}, c.refuse(sc, n, fmt.Sprintf("a link comes from output slot %d, but the subgraph has %d outputs", slot, len(sub.Outputs)))
	}
	outputNode := ioNodeID(sub.OutputNode, "-20")
	for _, id := range sub.Outputs[slot].LinkIDs {
		l := inner.links[id]
		if l == nil || l.TargetID != outputNode || l.TargetSlot != slot {
			continue
		}
		if !seen.follow(inner, id) {
			return source{}, c.refuse(sc, n, fmt.Sprintf("output slot %d is fed through a loop of links", slot))
		}
		return c.resolveOrigin(inner, l, nodeRef{sc, n}, seen)
	}
	return source{}, nil
}

// promotedValue is the value a subgraph node holds for an unlinked input drawn as a widget on it
// (a widget promoted from inside): each instance of a subgraph keeps its own value there, which
// the editor sends in place of the inner widget's. widgets_values holds one value per promoted
// input, in input order, or is keyed by input name; when the node stores none, the inner
// widget's own value stands.
func (c *converter) promotedValue(sc *scope, n *uiNode, slot int) (source, error) {
	raw := bytes.TrimSpace(n.WidgetsValues)
	name := n.Inputs[slot].Widget.Name
	if len(raw) > 0 && raw[0] == '{' {
		_, values, err := orderedObject(raw)
		if err != nil {
			return source{}, c.refuse(sc, n, fmt.Sprintf("widgets_values cannot be read: %v", err))
		}
		if v, ok := values[name]; ok {
			return source{kind: sourceValue, value: rawValue(v)}, nil
		}
		return source{kind: sourceOwnWidget}, nil
	}
	var values []json.RawMessage
	if len(raw) > 0 && json.Unmarshal(raw, &values) != nil {
		return source{}, c.refuse(sc, n, "widgets_values is neither an array nor an object")
	}
	if len(values) == 0 {
		return source{kind: sourceOwnWidget}, nil
	}
	var promoted []string
	pos := -1
	for i, in := range n.Inputs {
		if in.Widget != nil {
			if i == slot {
				pos = len(promoted)
			}
			promoted = append(promoted, in.Widget.Name)
		}
	}
	if len(values) != len(promoted) {
		return source{}, c.refuse(sc, n, fmt.Sprintf("widgets_values has %d values, but the subgraph node has %d inputs drawn as widgets: [%s]",
			len(values), len(promoted), strings.Join(promoted, ", ")))
	}
	return source{kind: sourceValue, value: rawValue(values[pos])}, nil
}

// typesFit reports whether a value of one slot type may go to the other, as the editor connects
// them: the same type (in any case), either one "*" (any), or a type listed in the other's
// comma-separated alternatives.
func typesFit(a, b uiType) bool {
	if a == "*" || b == "*" || strings.EqualFold(string(a), string(b)) {
		return true
	}
	for _, x := range strings.Split(string(a), ",") {
		for _, y := range strings.Split(string(b), ",") {
			if strings.EqualFold(strings.TrimSpace(x), strings.TrimSpace(y)) {
				return true
			}
		}
	}
	return false
}
