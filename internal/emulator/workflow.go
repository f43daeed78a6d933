package emulator

import (
	"maps"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// nodeError is one entry of details.node_errors of an invalid_workflow error.
type nodeError struct {
	Field   string `json:"field"`
	Reason  string `json:"reason"`
	Message string `json:"message,omitempty"`
}

// Reasons used in node_errors.
const (
	reasonUnknownClass    = "unknown_class"
	reasonRequiredMissing = "required_input_missing"
	reasonBadLink         = "bad_link"
	reasonInvalidType     = "invalid_type"
	reasonOutOfRange      = "value_out_of_range"
	reasonUnknownFile     = "unknown_file"
	reasonInvalidNode     = "invalid_node"
	reasonCycle           = "cycle"
)

// assetRefType is the type of an asset reference object in a workflow input.
const assetRefType = "core/ASSET"

// isUIFormat reports whether v looks like the UI export (with nodes and links arrays).
func isUIFormat(v map[string]any) bool {
	_, nodes := v["nodes"].([]any)
	_, links := v["links"].([]any)
	return nodes && links
}

// link is an input wired to another node's output.
type link struct {
	node string
	slot int
}

// asLink recognises ["<node_id>", <output_index>].
func asLink(v any) (link, bool) {
	a, ok := v.([]any)
	if !ok || len(a) != 2 {
		return link{}, false
	}
	id, ok := a[0].(string)
	if !ok {
		return link{}, false
	}
	n, ok := a[1].(float64)
	if !ok || n != math.Trunc(n) {
		return link{}, false
	}
	return link{node: id, slot: int(n)}, true
}

// asAssetRef recognises {"type":"core/ASSET","id":...}; id is "" when not a string.
func asAssetRef(v any) (id string, ok bool) {
	m, isMap := v.(map[string]any)
	if !isMap || m["type"] != assetRefType {
		return "", false
	}
	id, _ = m["id"].(string)
	return id, true
}

// nodeOf returns the class_type and inputs of a workflow node, when well formed.
func nodeOf(v any) (class string, inputs map[string]any, ok bool) {
	m, isMap := v.(map[string]any)
	if !isMap {
		return "", nil, false
	}
	class, _ = m["class_type"].(string)
	inputs, _ = m["inputs"].(map[string]any)
	if inputs == nil {
		inputs = map[string]any{}
	}
	return class, inputs, class != ""
}

// validateWorkflowLocked checks a workflow synchronously: structure, classes,
// inputs, links and cycles. It returns per-node errors and, for a workflow-wide
// problem, a message. s.mu must be held (LoadImage names are looked up).
func (s *Server) validateWorkflowLocked(wf map[string]any) (map[string][]nodeError, string) {
	errs := map[string][]nodeError{}
	add := func(id, field, reason, msg string) {
		errs[id] = append(errs[id], nodeError{Field: field, Reason: reason, Message: msg})
	}
	outputs := 0
	for _, id := range sortedIDs(wf) {
		c, field, reason, msg := classOfNode(wf[id])
		if reason != "" {
			add(id, field, reason, msg)
			continue
		}
		if c.Output {
			outputs++
		}
		_, inputs, _ := nodeOf(wf[id])
		for _, spec := range c.Inputs {
			if reason, msg := s.checkInputLocked(wf, spec, inputs); reason != "" {
				add(id, spec.Name, reason, msg)
			}
		}
	}
	if len(errs) == 0 {
		for id, field := range findCycle(wf) {
			add(id, field, reasonCycle, "the workflow has a cycle through this input")
		}
	}
	if len(errs) == 0 && outputs == 0 {
		return errs, "the workflow has no output node"
	}
	return errs, ""
}

// classOfNode returns a node's class, or the field, reason and message that say why the node
// has none: not an object, no class_type, inputs not an object, or a class the engine lacks.
func classOfNode(raw any) (c *nodeClass, field, reason, msg string) {
	m, isMap := raw.(map[string]any)
	if !isMap {
		return nil, "", reasonInvalidNode, "a node must be an object with class_type and inputs"
	}
	class, isStr := m["class_type"].(string)
	if !isStr || class == "" {
		return nil, "class_type", reasonRequiredMissing, "class_type is required"
	}
	if in := m["inputs"]; in != nil {
		if _, ok := in.(map[string]any); !ok {
			return nil, "inputs", reasonInvalidType, "inputs must be an object"
		}
	}
	if c = nodeClasses[class]; c == nil {
		return nil, "class_type", reasonUnknownClass, "unknown node class " + strconv.Quote(class)
	}
	return c, "", "", ""
}

// checkInputLocked checks one declared input of a node: present when required, and either a
// link to an output of the right type or a literal its spec accepts.
func (s *Server) checkInputLocked(wf map[string]any, spec inputSpec, inputs map[string]any) (reason, msg string) {
	v, present := inputs[spec.Name]
	switch {
	case !present && spec.Required:
		return reasonRequiredMissing, "required input is missing"
	case !present:
		return "", ""
	}
	if l, isLink := asLink(v); isLink {
		return checkLink(wf, spec, l)
	}
	return s.checkLiteralLocked(spec, v)
}

// checkLink checks that a link names an existing node's output of the type the input expects.
// A link to a node without a known class is not reported here: that node carries its own error.
func checkLink(wf map[string]any, spec inputSpec, l link) (reason, msg string) {
	if _, exists := wf[l.node]; !exists {
		return reasonBadLink, "links to missing node " + strconv.Quote(l.node)
	}
	srcClass, _, ok := nodeOf(wf[l.node])
	src := nodeClasses[srcClass]
	switch {
	case !ok || src == nil:
		return "", ""
	case l.slot < 0 || l.slot >= len(src.Outputs):
		return reasonBadLink, "node " + strconv.Quote(l.node) + " has no output " + strconv.Itoa(l.slot)
	case src.Outputs[l.slot] != spec.Type:
		return reasonInvalidType, "expects " + spec.Type + ", linked output is " + src.Outputs[l.slot]
	}
	return "", ""
}

// checkLiteralLocked checks a literal input value against its spec.
func (s *Server) checkLiteralLocked(spec inputSpec, v any) (reason, msg string) {
	switch spec.Type {
	case typeInt, typeFloat:
		n, ok := v.(float64)
		if !ok || (spec.Type == typeInt && n != math.Trunc(n)) {
			return reasonInvalidType, "expects " + spec.Type
		}
		if spec.Max > spec.Min && (n < spec.Min || n > spec.Max) {
			return reasonOutOfRange, "must be between " + strconv.FormatFloat(spec.Min, 'g', -1, 64) + " and " + strconv.FormatFloat(spec.Max, 'g', -1, 64)
		}
	case typeString:
		if _, isRef := asAssetRef(v); isRef && spec.Asset {
			return "", "" // existence is checked as missing_asset
		}
		str, ok := v.(string)
		if !ok {
			return reasonInvalidType, "expects STRING"
		}
		if len(spec.Choices) > 0 && !slices.Contains(spec.Choices, str) {
			return reasonInvalidType, "must be one of " + strings.Join(spec.Choices, ", ")
		}
		if spec.Asset && s.assetByNameLocked(str) == nil {
			return reasonUnknownFile, "no uploaded file named " + strconv.Quote(str)
		}
	default:
		return reasonInvalidType, "expects a link to a " + spec.Type + " output"
	}
	return "", ""
}

// missingAssetsLocked lists the ids of core/ASSET references that name no asset.
func (s *Server) missingAssetsLocked(wf map[string]any) []string {
	var missing []string
	for _, id := range sortedIDs(wf) {
		_, inputs, _ := nodeOf(wf[id])
		for _, name := range slices.Sorted(maps.Keys(inputs)) {
			if ref, ok := asAssetRef(inputs[name]); ok && s.lookupAssetLocked(ref) == nil {
				missing = append(missing, ref)
			}
		}
	}
	return missing
}

// findCycle returns, for one cycle if any, the node and input closing it.
func findCycle(wf map[string]any) map[string]string {
	const (
		unseen = iota
		active
		finished
	)
	state := map[string]int{}
	var found map[string]string
	var visit func(id string) bool
	visit = func(id string) bool {
		state[id] = active
		_, inputs, _ := nodeOf(wf[id])
		for _, name := range slices.Sorted(maps.Keys(inputs)) {
			l, ok := asLink(inputs[name])
			if !ok {
				continue
			}
			if _, exists := wf[l.node]; !exists {
				continue
			}
			switch state[l.node] {
			case active:
				found = map[string]string{id: name}
				return true
			case unseen:
				if visit(l.node) {
					return true
				}
			}
		}
		state[id] = finished
		return false
	}
	for _, id := range sortedIDs(wf) {
		if state[id] == unseen && visit(id) {
			return found
		}
	}
	return nil
}

// executionOrder lists the nodes reachable backwards from output nodes, each
// after the nodes it links to. The workflow must have been validated.
func executionOrder(wf map[string]any) []string {
	var order []string
	seen := map[string]bool{}
	var visit func(id string)
	visit = func(id string) {
		if seen[id] {
			return
		}
		seen[id] = true
		class, inputs, _ := nodeOf(wf[id])
		for _, spec := range nodeClasses[class].Inputs {
			if l, ok := asLink(inputs[spec.Name]); ok {
				visit(l.node)
			}
		}
		order = append(order, id)
	}
	for _, id := range sortedIDs(wf) {
		class, _, _ := nodeOf(wf[id])
		if c := nodeClasses[class]; c != nil && c.Output {
			visit(id)
		}
	}
	return order
}

// sortedIDs orders node ids numerically when both are numbers, else as strings.
func sortedIDs(m map[string]any) []string {
	ids := slices.Sorted(maps.Keys(m))
	sort.SliceStable(ids, func(i, j int) bool {
		a, errA := strconv.Atoi(ids[i])
		b, errB := strconv.Atoi(ids[j])
		switch {
		case errA == nil && errB == nil:
			return a < b
		case errA == nil || errB == nil:
			return errA == nil // numeric ids first
		}
		return ids[i] < ids[j]
	})
	return ids
}
