package workflow

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"strings"
)

// The editor's export (the UI format), as far as conversion reads it.

// Node modes of the editor: 0 runs, 2 is muted (never runs), 4 is bypassed (its inputs pass
// through to its outputs). 1 and 3 are event modes of the graph library the editor never uses.
const (
	modeAlways = 0
	modeNever  = 2
	modeBypass = 4
)

// Classes that exist only in the editor: they are never sent.
const (
	classReroute   = "Reroute"
	classPrimitive = "PrimitiveNode"
)

// frontendOnlyClasses are notes: they neither take nor give values.
var frontendOnlyClasses = map[string]bool{"Note": true, "MarkdownNote": true}

// uiID is a node or link id, written as a number or a string in exports; numbers are kept in
// their integer form (5, never 5.0) so ids derived from them are stable.
type uiID string

func (id *uiID) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		if s == "" {
			return errors.New("an id is an empty string")
		}
		*id = uiID(s)
		return nil
	}
	var n json.Number
	if err := json.Unmarshal(b, &n); err != nil {
		return fmt.Errorf("an id must be a number or a string, not %s", b)
	}
	i, ok := new(big.Int).SetString(n.String(), 10)
	if !ok {
		return fmt.Errorf("an id must be an integer, not %s", n)
	}
	*id = uiID(i.String())
	return nil
}

// uiType is a slot type: a name such as "IMAGE", or anything else in odd exports (read as "").
type uiType string

func (t *uiType) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		*t = uiType(s)
	}
	return nil
}

type uiDocument struct {
	uiGraphBody
	Definitions uiDefinitions `json:"definitions"`
}

type uiDefinitions struct {
	Subgraphs []*uiSubgraph `json:"subgraphs"`
}

// uiGraphBody is what the top level and a subgraph share.
type uiGraphBody struct {
	Nodes []*uiNode `json:"nodes"`
	Links []*uiLink `json:"links"`
}

type uiSubgraph struct {
	uiGraphBody
	ID          string          `json:"id"`
	Name        string          `json:"name"`
	Inputs      []uiSubgraphIO  `json:"inputs"`
	Outputs     []uiSubgraphIO  `json:"outputs"`
	InputNode   *uiSubgraphNode `json:"inputNode"`
	OutputNode  *uiSubgraphNode `json:"outputNode"`
	Definitions uiDefinitions   `json:"definitions"`
}

// uiSubgraphIO is one input or output of a subgraph, with the inner links that use it.
type uiSubgraphIO struct {
	Name    string `json:"name"`
	Type    uiType `json:"type"`
	LinkIDs []uiID `json:"linkIds"`
}

type uiSubgraphNode struct {
	ID uiID `json:"id"`
}

type uiNode struct {
	ID            uiID            `json:"id"`
	Type          string          `json:"type"`
	Mode          int             `json:"mode"`
	Inputs        []uiInput       `json:"inputs"`
	Outputs       []uiOutput      `json:"outputs"`
	WidgetsValues json.RawMessage `json:"widgets_values"`
	Title         *string         `json:"title"`
}

type uiInput struct {
	Name   string `json:"name"`
	Type   uiType `json:"type"`
	Link   *uiID  `json:"link"`
	Widget *struct {
		Name string `json:"name"`
	} `json:"widget"`
}

// inputName is the class input the slot stands for: a widget turned into a socket names its
// widget; the slot's own name is the input name otherwise (labels are kept apart as "label").
func (in uiInput) inputName() string {
	if in.Widget != nil && in.Widget.Name != "" {
		return in.Widget.Name
	}
	return in.Name
}

type uiOutput struct {
	Name string `json:"name"`
	Type uiType `json:"type"`
}

// uiLink is one link. The top level writes links as arrays
// [id, origin_id, origin_slot, target_id, target_slot, type]; subgraphs (and newer exports)
// write objects with those names.
type uiLink struct {
	ID         uiID   `json:"id"`
	OriginID   uiID   `json:"origin_id"`
	OriginSlot int    `json:"origin_slot"`
	TargetID   uiID   `json:"target_id"`
	TargetSlot int    `json:"target_slot"`
	Type       uiType `json:"type"`
}

func (l *uiLink) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '{' {
		type plain uiLink // without this method
		return json.Unmarshal(b, (*plain)(l))
	}
	var parts []json.RawMessage
	if err := json.Unmarshal(b, &parts); err != nil || len(parts) < 5 {
		return fmt.Errorf("a link must be [id, origin_id, origin_slot, target_id, target_slot, type] or an object, not %s", abbreviate(b))
	}
	fields := []any{&l.ID, &l.OriginID, &l.OriginSlot, &l.TargetID, &l.TargetSlot}
	for i, f := range fields {
		if err := json.Unmarshal(parts[i], f); err != nil {
			return fmt.Errorf("link %s: field %d: %w", abbreviate(b), i, err)
		}
	}
	if len(parts) > 5 {
		_ = json.Unmarshal(parts[5], &l.Type) // uiType reads anything
	}
	return nil
}

func abbreviate(b []byte) string {
	s := string(b)
	if len(s) > 60 {
		s = s[:60] + "..."
	}
	return strings.TrimSpace(s)
}
