package workflow

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"strings"
)

// controlValues are the choices of the editor's control_after_generate widget.
var controlValues = map[string]bool{"fixed": true, "increment": true, "decrement": true, "randomize": true}

// widgetSlot is one position of widgets_values: an input's value, or a value the editor stores
// after it and never sends (extra names which).
type widgetSlot struct {
	input ClassInput
	extra string
}

// widgetLayout is the positions of widgets_values for a class: each widget input in input order,
// followed by its extra values. A widget turned into a socket keeps its position. When a required
// input is an image loader's file name, the editor adds its upload button as one more required
// input, after the last one, so the button's value comes after the required widgets (for a loader
// with one input, right after the file name).
func widgetLayout(def *ClassDef) []widgetSlot {
	var layout []widgetSlot
	var upload *ClassInput
	for i, in := range def.Inputs {
		if in.Optional && upload != nil {
			layout = append(layout, widgetSlot{input: *upload, extra: "upload"})
			upload = nil
		}
		if !in.IsWidget() {
			continue
		}
		if in.ImageUpload && !in.Optional && upload == nil {
			upload = &def.Inputs[i]
		}
		layout = append(layout, widgetSlot{input: in})
		for _, extra := range in.ExtraWidgetValues() {
			layout = append(layout, widgetSlot{input: in, extra: extra})
		}
	}
	if upload != nil {
		layout = append(layout, widgetSlot{input: *upload, extra: "upload"})
	}
	return layout
}

func (s widgetSlot) String() string {
	if s.extra != "" {
		return s.extra
	}
	return s.input.Name
}

// widgetInputs maps the node's widgets_values to its class's inputs: an array by position, an
// object by widget name.
func (c *converter) widgetInputs(sc *scope, n *uiNode, def *ClassDef) (map[string]any, error) {
	raw := bytes.TrimSpace(n.WidgetsValues)
	if len(raw) > 0 && raw[0] == '{' {
		return c.widgetInputsByName(sc, n, def, raw)
	}
	var values []json.RawMessage
	if len(raw) > 0 && string(raw) != "null" {
		if err := json.Unmarshal(raw, &values); err != nil {
			return nil, c.refuse(sc, n, "widgets_values is neither an array nor an object")
		}
	}
	layout := widgetLayout(def)
	if len(values) != len(layout) {
		return nil, c.refuse(sc, n, fmt.Sprintf("widgets_values has %d values, but %s stores %d: [%s]",
			len(values), def.Name, len(layout), describeLayout(layout)))
	}
	inputs := map[string]any{}
	for i, slot := range layout {
		if err := checkSlotValue(slot, values[i]); err != nil {
			return nil, c.refuse(sc, n, fmt.Sprintf("widgets_values[%d] (%s) does not fit: %v", i, slot, err))
		}
		if slot.extra == "" {
			inputs[slot.input.Name] = rawValue(values[i])
		}
	}
	return inputs, nil
}

// widgetInputsByName reads widgets_values written as an object of widget name to value. Every
// widget input needs a value unless a link feeds it; a name that is no widget of the class is
// refused.
func (c *converter) widgetInputsByName(sc *scope, n *uiNode, def *ClassDef, raw []byte) (map[string]any, error) {
	names, values, err := orderedObject(raw)
	if err != nil {
		return nil, c.refuse(sc, n, fmt.Sprintf("widgets_values cannot be read: %v", err))
	}
	layout := widgetLayout(def)
	known := map[string]widgetSlot{}
	for _, slot := range layout {
		known[slot.String()] = slot
	}
	inputs := map[string]any{}
	for _, name := range names {
		slot, ok := known[name]
		if !ok {
			return nil, c.refuse(sc, n, fmt.Sprintf("widgets_values has %q, which is not a widget of %s (its widgets: [%s])",
				name, def.Name, describeLayout(layout)))
		}
		if err := checkSlotValue(slot, values[name]); err != nil {
			return nil, c.refuse(sc, n, fmt.Sprintf("widgets_values %q does not fit: %v", name, err))
		}
		if slot.extra == "" {
			inputs[name] = rawValue(values[name])
		}
	}
	for _, slot := range layout {
		if _, ok := inputs[slot.input.Name]; !ok && slot.extra == "" && !isLinked(n, slot.input.Name) {
			return nil, c.refuse(sc, n, fmt.Sprintf("widgets_values has no value for widget %q", slot.input.Name))
		}
	}
	return inputs, nil
}

func isLinked(n *uiNode, input string) bool {
	for _, in := range n.Inputs {
		if in.Link != nil && in.inputName() == input {
			return true
		}
	}
	return false
}

func describeLayout(layout []widgetSlot) string {
	names := make([]string, len(layout))
	for i, s := range layout {
		names[i] = s.String()
	}
	return strings.Join(names, ", ")
}

// checkSlotValue checks a stored value against its position: an input's value against its type,
// a control against the control's choices.
func checkSlotValue(slot widgetSlot, raw json.RawMessage) error {
	switch slot.extra {
	case "":
		return checkWidgetValue(slot.input, raw)
	case "control_after_generate":
		var s string
		if json.Unmarshal(raw, &s) != nil || !controlValues[s] {
			return fmt.Errorf("%s is not a control value (fixed, increment, decrement, randomize)", abbreviate(raw))
		}
	case "control_filter_list":
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return fmt.Errorf("%s is not a filter string", abbreviate(raw))
		}
	default: // upload: the button's value, a string when present
		var s *string
		if json.Unmarshal(raw, &s) != nil {
			return fmt.Errorf("%s is not an upload value", abbreviate(raw))
		}
	}
	return nil
}

// checkWidgetValue checks that a widget's value has its input's type: an integer for INT, a number
// for FLOAT, a string for STRING, a boolean for BOOLEAN, a scalar for a COMBO.
func checkWidgetValue(in ClassInput, raw json.RawMessage) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return err
	}
	ok := false
	switch x := v.(type) {
	case json.Number:
		ok = in.Type == "FLOAT" || in.Type == "COMBO" || (in.Type == "INT" && isInteger(x))
	case string:
		ok = in.Type == "STRING" || in.Type == "COMBO"
	case bool:
		ok = in.Type == "BOOLEAN" || in.Type == "COMBO"
	}
	if !ok {
		return fmt.Errorf("%s is not a value of %s input %q", abbreviate(raw), in.Type, in.Name)
	}
	return nil
}

func isInteger(n json.Number) bool {
	f, _, err := big.ParseFloat(n.String(), 10, 256, big.ToNearestEven)
	return err == nil && f.IsInt()
}
