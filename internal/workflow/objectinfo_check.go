package workflow

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// CheckNodeInputs reports what object_info says the engine would refuse in the inputs of node id
// of g, one sentence per input, naming the input, what was given and what was expected:
//
//   - a link to a node the workflow does not have;
//   - a link to an output index the linked node's class does not have (when its definition lists
//     its outputs);
//   - a link whose output type shares nothing with the input's type (neither is "*", a choice
//     list, or one of a comma-separated set of the other);
//   - a string that is no number where the class wants an INT or a FLOAT.
//
// Everything else is accepted, since the engine coerces or checks it later: literals of other
// types (a STRING takes any value), a value outside a choice list (an upload in the same apply
// adds to it), negative output indexes (the engine indexes from the end), inputs the class does
// not declare (ignored), and anything about a node whose class is unknown or unreadable (that
// node carries its own error).
func CheckNodeInputs(defs ClassDefs, g Graph, id string) []string {
	n, ok := g[id]
	def := defs[n.ClassType]
	if !ok || def == nil || def.Err != nil {
		return nil
	}
	var problems []string
	for _, name := range slices.Sorted(maps.Keys(n.Inputs)) {
		in, declared := def.Input(name)
		if !declared {
			continue
		}
		if p := checkInput(defs, g, in, n.Inputs[name]); p != "" {
			problems = append(problems, fmt.Sprintf("input %q %s", name, p))
		}
	}
	return problems
}

// checkInput checks one declared input's value: a link, or a literal.
func checkInput(defs ClassDefs, g Graph, in ClassInput, raw json.RawMessage) string {
	if from, slot, isLink := linkOf(raw); isLink {
		return checkLinkTo(defs, g, in, from, slot)
	}
	if in.Type != "INT" && in.Type != "FLOAT" {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) != nil || numeric(s) {
		return ""
	}
	return fmt.Sprintf("expects %s (a number), but is the string %s", in.Type, quoteShort(s))
}

// checkLinkTo checks a link to output slot of node from.
func checkLinkTo(defs ClassDefs, g Graph, in ClassInput, from string, slot int) string {
	src, exists := g[from]
	if !exists {
		return fmt.Sprintf("links to node %q, which the workflow does not have (its nodes: %s)", from, quotedIDs(g))
	}
	def := defs[src.ClassType]
	if def == nil || def.Err != nil || !def.OutputsListed || slot < 0 {
		return ""
	}
	if slot >= len(def.Outputs) {
		return fmt.Sprintf("links to output %d of node %q (%s), which has %s", slot, from, src.ClassType, outputsOf(def))
	}
	if got := def.Outputs[slot]; !typesMeet(got, in.Type) {
		return fmt.Sprintf("expects %s, but links to output %d of node %q (%s), which is %s", in.Type, slot, from, src.ClassType, got)
	}
	return ""
}

// linkOf reads a link ["node id", output index] with a whole index.
func linkOf(raw json.RawMessage) (from string, slot int, ok bool) {
	var link []json.RawMessage
	if json.Unmarshal(raw, &link) != nil || len(link) != 2 {
		return "", 0, false
	}
	if json.Unmarshal(link[0], &from) != nil || json.Unmarshal(link[1], &slot) != nil {
		return "", 0, false
	}
	return from, slot, true
}

// typesMeet reports whether an output of type got may feed an input of type want, as the engine
// matches them: the same name, "*" on either side, a choice list (COMBO) on either side, or
// comma-separated sets of names that share one.
func typesMeet(got, want string) bool {
	if got == want || got == "COMBO" || want == "COMBO" || got == "" || want == "" {
		return true
	}
	gotSet, wantSet := typeSet(got), typeSet(want)
	if gotSet["*"] || wantSet["*"] {
		return true
	}
	for t := range gotSet {
		if wantSet[t] {
			return true
		}
	}
	return false
}

func typeSet(t string) map[string]bool {
	set := map[string]bool{}
	for part := range strings.SplitSeq(t, ",") {
		set[strings.TrimSpace(part)] = true
	}
	return set
}

// numeric reports whether the engine could read s as a number: digits with spaces around,
// underscores between, a decimal point, an exponent, or inf/nan.
func numeric(s string) bool {
	_, err := strconv.ParseFloat(strings.ReplaceAll(strings.TrimSpace(s), "_", ""), 64)
	return err == nil
}

func outputsOf(def *ClassDef) string {
	switch len(def.Outputs) {
	case 0:
		return "no outputs"
	case 1:
		return "1 output (0: " + def.Outputs[0] + ")"
	}
	parts := make([]string, len(def.Outputs))
	for i, t := range def.Outputs {
		parts[i] = fmt.Sprintf("%d: %s", i, t)
	}
	return fmt.Sprintf("%d outputs (%s)", len(def.Outputs), strings.Join(parts, ", "))
}

// quotedIDs lists the graph's node ids, sorted, quoted, at most ten.
func quotedIDs(g Graph) string {
	ids := slices.Sorted(maps.Keys(g))
	more := ""
	if len(ids) > 10 {
		ids, more = ids[:10], fmt.Sprintf(" and %d more", len(ids)-10)
	}
	quoted := make([]string, len(ids))
	for i, id := range ids {
		quoted[i] = strconv.Quote(id)
	}
	return strings.Join(quoted, ", ") + more
}

// quoteShort quotes s, cut to 40 characters: a value is named, never reproduced at length.
func quoteShort(s string) string {
	if r := []rune(s); len(r) > 40 {
		return strconv.Quote(string(r[:40])) + "..."
	}
	return strconv.Quote(s)
}
