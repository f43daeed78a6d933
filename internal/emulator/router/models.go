package router

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math"
	"sort"
	"strconv"
	"strings"
)

// Demo models of the reference router. Each shows one kind of partner model:
//
//	demo/echo      authored input schema; returns {"echo": input} as JSON
//	demo/pixel     authored input schema; returns image/png bytes (size x size, one colour)
//	demo/freeform  unauthored schema (any object accepted); output media type */*; returns JSON.
//	               An input field "simulate_error_type" makes the run fail with that error type.
//	demo/slow      runs for Options.SlowDuration unless cancelled; returns text/plain
const (
	ModelEcho     = "demo/echo"
	ModelPixel    = "demo/pixel"
	ModelFreeform = "demo/freeform"
	ModelSlow     = "demo/slow"
)

// errTypeCancelled is the error_type of a run whose cancellation took effect. The router does
// not fix the name; clients see it as an unknown type (internal_error for control flow).
const errTypeCancelled = "cancelled"

// routerModel is one catalog entry and how it runs.
type routerModel struct {
	id       string
	charges  string         // billing.charges_on_policy_rejection
	detail   map[string]any // detail-only fields
	authored bool
	input    map[string]any // the requestBody schema
	outputs  []string       // media types of the 200 response
	credits  bool           // X-Svc-Credits-Used is sent (the provider is on the allowlist)
	run      func(ctx context.Context, s *Router, input map[string]any) routerOutcome
}

// routerOutcome is the end of a run: a result, or an error type.
type routerOutcome struct {
	body        []byte
	contentType string
	errorType   string
}

func (m *routerModel) provider() string { p, _, _ := strings.Cut(m.id, "/"); return p }
func (m *routerModel) name() string     { _, n, _ := strings.Cut(m.id, "/"); return n }

func demoModels() []*routerModel {
	return []*routerModel{
		{
			id: ModelEcho, charges: "no", authored: true, credits: true,
			detail: map[string]any{"description": "Echoes its input back as JSON.", "tags": []string{"text", "demo"}},
			input: map[string]any{
				"type":                 "object",
				"required":             []string{"prompt"},
				"additionalProperties": false,
				"properties": map[string]any{
					"prompt": map[string]any{"type": "string", "minLength": 1},
					"steps":  map[string]any{"type": "integer", "minimum": 1, "maximum": 50},
				},
			},
			outputs: []string{"application/json"},
			run: func(_ context.Context, _ *Router, in map[string]any) routerOutcome {
				b, _ := json.Marshal(map[string]any{"echo": in, "model": ModelEcho})
				return routerOutcome{body: b, contentType: "application/json"}
			},
		},
		{
			id: ModelPixel, charges: "yes", authored: true, credits: true,
			detail: map[string]any{"description": "Returns a square PNG of one colour.", "max_size": 64},
			input: map[string]any{
				"type":     "object",
				"required": []string{"size"},
				"properties": map[string]any{
					"size":  map[string]any{"type": "integer", "minimum": 1, "maximum": 64},
					"color": map[string]any{"type": "string", "minLength": 7},
				},
			},
			outputs: []string{"image/png"},
			run: func(_ context.Context, _ *Router, in map[string]any) routerOutcome {
				return routerOutcome{body: pixelPNG(in), contentType: "image/png"}
			},
		},
		{
			id: ModelFreeform, charges: "maybe-later", authored: false,
			detail:  map[string]any{"description": "Accepts any JSON object."},
			input:   map[string]any{"type": "object"},
			outputs: []string{"*/*"},
			run: func(_ context.Context, _ *Router, in map[string]any) routerOutcome {
				if t, ok := in["simulate_error_type"].(string); ok && t != "" {
					return routerOutcome{errorType: t}
				}
				b, _ := json.Marshal(map[string]any{"received": in})
				return routerOutcome{body: b, contentType: "application/json; charset=utf-8"}
			},
		},
		{
			id: ModelSlow, charges: "unknown", authored: false,
			detail:  map[string]any{"description": "Takes a while; can be cancelled."},
			input:   map[string]any{"type": "object"},
			outputs: []string{"text/plain"},
			run: func(ctx context.Context, s *Router, _ map[string]any) routerOutcome {
				if s.host.Sleep(ctx, s.opts.SlowDuration) != nil {
					return routerOutcome{errorType: errTypeCancelled}
				}
				return routerOutcome{body: []byte("slow model done\n"), contentType: "text/plain; charset=utf-8"}
			},
		},
	}
}

// fillerModel is a catalog-only entry used to make the catalog span several pages.
func fillerModel(i int) *routerModel {
	return &routerModel{
		id: fmt.Sprintf("filler/model-%03d", i), charges: []string{"yes", "no", "unknown"}[i%3],
		detail: map[string]any{}, input: map[string]any{"type": "object"}, outputs: []string{"application/json"},
		run: func(context.Context, *Router, map[string]any) routerOutcome {
			return routerOutcome{body: []byte(`{}`), contentType: "application/json"}
		},
	}
}

// pixelPNG draws a size x size PNG in the input's colour (#rrggbb, default red).
func pixelPNG(in map[string]any) []byte {
	size := 8
	if v, ok := in["size"].(float64); ok && v >= 1 && v <= 64 {
		size = int(v)
	}
	c := color.RGBA{R: 255, A: 255}
	if hex, ok := in["color"].(string); ok && len(hex) == 7 && hex[0] == '#' {
		if v, err := strconv.ParseUint(hex[1:], 16, 32); err == nil {
			c = color.RGBA{R: uint8(v >> 16), G: uint8(v >> 8), B: uint8(v), A: 255}
		}
	}
	img := image.NewRGBA(image.Rect(0, 0, size, size))
	for y := range size {
		for x := range size {
			img.Set(x, y, c)
		}
	}
	var buf bytes.Buffer
	_ = png.Encode(&buf, img)
	return buf.Bytes()
}

// openAPIDocument is the model's standalone OpenAPI document.
func (m *routerModel) openAPIDocument() map[string]any {
	content := map[string]any{}
	for _, t := range m.outputs {
		content[t] = map[string]any{"schema": map[string]any{}}
	}
	return map[string]any{
		"openapi":                     "3.1.0",
		"info":                        map[string]any{"title": m.id, "version": "1"},
		"x-svc-input-schema-authored": m.authored,
		"paths": map[string]any{
			"/v2/models/" + m.id: map[string]any{
				"post": map[string]any{
					"operationId": "invoke",
					"requestBody": map[string]any{
						"required": true,
						"content":  map[string]any{"application/json": map[string]any{"schema": m.input}},
					},
					"responses": map[string]any{"200": map[string]any{"description": "native output", "content": content}},
				},
			},
		},
	}
}

// fieldError is one entry of the 422 validation body.
type fieldError struct {
	Loc   []any          `json:"loc"`
	Msg   string         `json:"msg"`
	Type  string         `json:"type"`
	Ctx   map[string]any `json:"ctx,omitempty"`
	Input any            `json:"input,omitempty"`
}

// validateInput checks an input against the subset of JSON Schema the demo models use (type,
// required, properties, additionalProperties false, minimum, maximum, minLength), in the
// provider-style shape of the 422 body.
func (m *routerModel) validateInput(in map[string]any) []fieldError {
	if !m.authored {
		return nil
	}
	var out []fieldError
	props, _ := m.input["properties"].(map[string]any)
	required, _ := m.input["required"].([]string)
	for _, name := range required {
		if _, ok := in[name]; !ok {
			out = append(out, fieldError{Loc: []any{"body", name}, Msg: "Field required", Type: "missing"})
		}
	}
	names := make([]string, 0, len(in))
	for k := range in {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, name := range names {
		v := in[name]
		p, ok := props[name].(map[string]any)
		if !ok {
			if m.input["additionalProperties"] == false {
				out = append(out, fieldError{Loc: []any{"body", name}, Msg: "Extra inputs are not permitted", Type: "extra_forbidden", Input: v})
			}
			continue
		}
		loc := []any{"body", name}
		switch p["type"] {
		case "string":
			s, ok := v.(string)
			if !ok {
				out = append(out, fieldError{Loc: loc, Msg: "Input should be a valid string", Type: "string_type", Input: v})
				continue
			}
			if minLen, ok := p["minLength"].(int); ok && len(s) < minLen {
				out = append(out, fieldError{Loc: loc, Msg: fmt.Sprintf("String should have at least %d characters", minLen),
					Type: "string_too_short", Ctx: map[string]any{"min_length": minLen}, Input: v})
			}
		case "integer":
			f, ok := v.(float64)
			if !ok || f != math.Trunc(f) {
				out = append(out, fieldError{Loc: loc, Msg: "Input should be a valid integer", Type: "int_type", Input: v})
				continue
			}
			if lo, ok := p["minimum"].(int); ok && f < float64(lo) {
				out = append(out, fieldError{Loc: loc, Msg: fmt.Sprintf("Input should be greater than or equal to %d", lo),
					Type: "greater_than_equal", Ctx: map[string]any{"ge": lo}, Input: v})
			}
			if hi, ok := p["maximum"].(int); ok && f > float64(hi) {
				out = append(out, fieldError{Loc: loc, Msg: fmt.Sprintf("Input should be less than or equal to %d", hi),
					Type: "less_than_equal", Ctx: map[string]any{"le": hi}, Input: v})
			}
		}
	}
	return out
}
