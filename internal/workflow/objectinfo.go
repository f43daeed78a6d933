package workflow

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
)

// Widget types: an input of one of these types (or a list of choices) is drawn by the editor as a
// widget, and its value is stored in the node's widgets_values. Every other type (MODEL, IMAGE,
// LATENT...) can only be linked.
var widgetTypes = map[string]bool{"INT": true, "FLOAT": true, "STRING": true, "BOOLEAN": true, "COMBO": true}

// ClassInput is one input of a node class, as object_info describes it.
type ClassInput struct {
	Name     string
	Type     string // "COMBO" for a list of choices
	Optional bool
	// ForceInput inputs are always sockets: the editor draws no widget and stores no value.
	ForceInput bool
	// ControlAfterGenerate is the control_after_generate flag; ControlFlagSet says whether the
	// definition carries it at all (when it does not, the editor still adds a control to an INT
	// named seed or noise_seed).
	ControlAfterGenerate bool
	ControlFlagSet       bool
	// ImageUpload marks an image loader's file name: the editor then adds an upload button, whose
	// value it stores.
	ImageUpload bool
}

// IsWidget reports whether the editor stores a value for the input in widgets_values.
func (in ClassInput) IsWidget() bool { return widgetTypes[in.Type] && !in.ForceInput }

// ExtraWidgetValues names the values the editor stores right after the input's own value and
// never sends: the control after a seed-like INT, the control and its filter after a COMBO with
// control_after_generate. (An image loader's upload button is not here: the editor adds it as
// one more required input, after the others; see widgetLayout.)
func (in ClassInput) ExtraWidgetValues() []string {
	switch {
	case !in.IsWidget():
		return nil
	case in.Type == "INT" && in.hasControl():
		return []string{"control_after_generate"}
	case in.Type == "COMBO" && in.ControlAfterGenerate:
		return []string{"control_after_generate", "control_filter_list"}
	}
	return nil
}

func (in ClassInput) hasControl() bool {
	if in.ControlFlagSet {
		return in.ControlAfterGenerate
	}
	return in.Name == "seed" || in.Name == "noise_seed"
}

// ClassDef is a node class from object_info: its inputs in the editor's order and its outputs.
type ClassDef struct {
	Name        string
	DisplayName string
	Inputs      []ClassInput
	Outputs     []string
	// OutputsListed says whether the definition lists its outputs at all: an empty list is a
	// class without outputs, a missing one says nothing about them.
	OutputsListed bool
	// Err is why the class's definition could not be read; a class used by a workflow with an
	// unreadable definition is refused then, not when the document is read.
	Err error
}

// Input returns the named input (required or optional), if the class has it.
func (c *ClassDef) Input(name string) (ClassInput, bool) {
	i := slices.IndexFunc(c.Inputs, func(in ClassInput) bool { return in.Name == name })
	if i < 0 {
		return ClassInput{}, false
	}
	return c.Inputs[i], true
}

// ClassDefs are the node classes of an object_info document, by name.
type ClassDefs map[string]*ClassDef

// ParseClassDefs reads an object_info document (GET /api/object_info): an object of class name to
// definition. Inputs are ordered by the definition's input_order when it has one, else by the
// order of their keys in the document (required first, then optional), which is the order the
// editor lays out widgets in.
func ParseClassDefs(data []byte) (ClassDefs, error) {
	names, raw, err := orderedObject(data)
	if err != nil {
		return nil, fmt.Errorf("object_info is not a JSON object of node classes: %w", err)
	}
	defs := make(ClassDefs, len(names))
	for _, name := range names {
		def, err := parseClassDef(name, raw[name])
		if err != nil {
			def = &ClassDef{Name: name, DisplayName: name, Err: err}
		}
		defs[name] = def
	}
	return defs, nil
}

type classDoc struct {
	Input struct {
		Required json.RawMessage `json:"required"`
		Optional json.RawMessage `json:"optional"`
	} `json:"input"`
	InputOrder  map[string][]string `json:"input_order"`
	Output      []json.RawMessage   `json:"output"`
	DisplayName string              `json:"display_name"`
}

func parseClassDef(name string, raw json.RawMessage) (*ClassDef, error) {
	var doc classDoc
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("its object_info definition cannot be read: %w", err)
	}
	def := &ClassDef{Name: name, DisplayName: doc.DisplayName}
	if def.DisplayName == "" {
		def.DisplayName = name
	}
	def.OutputsListed = doc.Output != nil
	for _, o := range doc.Output {
		var t string
		if json.Unmarshal(o, &t) != nil {
			t = "COMBO" // an output typed by a list of values
		}
		def.Outputs = append(def.Outputs, t)
	}
	for _, group := range []struct {
		key      string
		raw      json.RawMessage
		optional bool
	}{{"required", doc.Input.Required, false}, {"optional", doc.Input.Optional, true}} {
		inputs, err := parseInputGroup(group.raw, doc.InputOrder[group.key], group.optional)
		if err != nil {
			return nil, fmt.Errorf("its object_info %s inputs cannot be read: %w", group.key, err)
		}
		def.Inputs = append(def.Inputs, inputs...)
	}
	return def, nil
}

// parseInputGroup reads input.required or input.optional, in the order given or else in document
// order. An order naming an input the group lacks is an error: the widget positions would be off.
func parseInputGroup(raw json.RawMessage, order []string, optional bool) ([]ClassInput, error) {
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		if len(order) > 0 {
			return nil, fmt.Errorf("input_order names %q but there are no such inputs", order)
		}
		return nil, nil
	}
	names, specs, err := orderedObject(raw)
	if err != nil {
		return nil, err
	}
	if order != nil {
		for _, n := range order {
			if _, ok := specs[n]; !ok {
				return nil, fmt.Errorf("input_order names %q, which is not an input", n)
			}
		}
		if len(order) != len(names) {
			return nil, fmt.Errorf("input_order lists %d inputs, the definition has %d", len(order), len(names))
		}
		names = order
	}
	inputs := make([]ClassInput, 0, len(names))
	for _, n := range names {
		in, err := parseInputSpec(n, specs[n])
		if err != nil {
			return nil, err
		}
		in.Optional = optional
		inputs = append(inputs, in)
	}
	return inputs, nil
}

// parseInputSpec reads [type, options]: type is a name ("INT"), a list of choices, or "COMBO"
// with options.options; a bare type name is accepted too.
func parseInputSpec(name string, raw json.RawMessage) (ClassInput, error) {
	in := ClassInput{Name: name}
	var spec []json.RawMessage
	if json.Unmarshal(raw, &spec) != nil {
		spec = []json.RawMessage{raw}
	}
	if len(spec) == 0 {
		return in, fmt.Errorf("input %q has no type", name)
	}
	var choices []json.RawMessage
	switch {
	case json.Unmarshal(spec[0], &in.Type) == nil:
	case json.Unmarshal(spec[0], &choices) == nil:
		in.Type = "COMBO"
	default:
		return in, fmt.Errorf("input %q has a type that is neither a name nor a list of choices", name)
	}
	if len(spec) < 2 {
		return in, nil
	}
	var opts struct {
		ForceInput  bool `json:"forceInput"`
		ImageUpload bool `json:"image_upload"`
		// true, or the control's initial mode ("randomize"...); false turns the control off.
		ControlAfterGenerate json.RawMessage `json:"control_after_generate"`
	}
	if err := json.Unmarshal(spec[1], &opts); err != nil {
		return in, fmt.Errorf("input %q has unreadable options: %w", name, err)
	}
	in.ForceInput, in.ImageUpload = opts.ForceInput, opts.ImageUpload
	if flag := string(bytes.TrimSpace(opts.ControlAfterGenerate)); flag != "" && flag != "null" {
		in.ControlFlagSet, in.ControlAfterGenerate = true, flag != "false"
	}
	return in, nil
}

// orderedObject decodes a JSON object keeping the order of its keys. A key given twice is an
// error: which of the two the engine would use is not ours to guess.
func orderedObject(data []byte) ([]string, map[string]json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, nil, errors.New("not a JSON object")
	}
	var keys []string
	values := map[string]json.RawMessage{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, nil, err
		}
		key, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, nil, err
		}
		if _, dup := values[key]; dup {
			return nil, nil, fmt.Errorf("key %q appears twice", key)
		}
		keys = append(keys, key)
		values[key] = v
	}
	if _, err := dec.Token(); err != nil {
		return nil, nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, nil, errors.New("more than one JSON value")
	}
	return keys, values, nil
}
