package client

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// ModelSchema is a model's OpenAPI document (GET .../openapi.json) and what the provider reads
// from it.
type ModelSchema struct {
	Model    string
	Document json.RawMessage
	ETag     string
	// InputSchemaAuthored is x-svc-input-schema-authored. When false the router accepts any JSON
	// object and there is nothing to validate against.
	InputSchemaAuthored bool
	// InputSchema is the model operation's requestBody schema (application/json), verbatim; nil
	// when the document has none.
	InputSchema json.RawMessage
	// inputPointer locates InputSchema in Document, so $refs into components resolve.
	inputPointer string
	// OutputMediaTypes are the media types of the operation's 200 response, sorted.
	OutputMediaTypes []string
	RequestID        string
	// Revalidated is true when the service answered 304 and the cached document was reused.
	Revalidated bool
}

// schemaCache keeps schema documents for the life of the process, keyed by router endpoint and
// model. An entry is only ever used after the service confirmed it with a 304 to If-None-Match,
// so it can never be stale, and the cache saves only the transfer and parse.
type schemaCache struct {
	mu      sync.Mutex
	entries map[string]*ModelSchema
}

var schemas = &schemaCache{entries: map[string]*ModelSchema{}}

func (s *schemaCache) get(key string) *ModelSchema {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.entries[key]
}

func (s *schemaCache) put(key string, m *ModelSchema) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.entries[key] = m
}

// GetModelSchema reads a model's schema document, revalidating a cached copy with If-None-Match.
func (c *Client) GetModelSchema(ctx context.Context, model string) (*ModelSchema, error) {
	u, err := c.modelURL(model, "openapi.json")
	if err != nil {
		return nil, err
	}
	key := c.routerEndpoint.String() + " " + model
	cached := schemas.get(key)
	h := http.Header{}
	if cached != nil && cached.ETag != "" {
		h.Set("If-None-Match", cached.ETag)
	}
	op := "read model schema " + model
	resp, err := c.do(ctx, call{op: op, method: http.MethodGet, url: u, cred: credAPIKey, header: h,
		policy: retryIdempotent, accept: []int{http.StatusNotModified}})
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	rid := requestIDOf(resp.Header)
	if resp.StatusCode == http.StatusNotModified {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxErrorBody))
		if cached == nil {
			return nil, fmt.Errorf("%s: HTTP 304 without a cached document (request id %q)", op, rid)
		}
		out := *cached
		out.RequestID, out.Revalidated = rid, true
		return &out, nil
	}
	var doc json.RawMessage
	if err := decodeJSON(resp, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	ms, err := parseModelSchema(model, doc)
	if err != nil {
		return nil, fmt.Errorf("%s (request id %q): %w", op, rid, err)
	}
	ms.ETag, ms.RequestID = resp.Header.Get("ETag"), rid
	if ms.ETag != "" {
		schemas.put(key, ms)
	}
	return ms, nil
}

type openAPIOperation struct {
	RequestBody *struct {
		Content map[string]struct {
			Schema json.RawMessage `json:"schema"`
		} `json:"content"`
	} `json:"requestBody"`
	Responses map[string]struct {
		Content map[string]json.RawMessage `json:"content"`
	} `json:"responses"`
	Authored *bool `json:"x-svc-input-schema-authored"`
}

// parseModelSchema finds the model operation: the POST whose path ends with the model id, else
// the only POST with a JSON requestBody.
func parseModelSchema(model string, doc json.RawMessage) (*ModelSchema, error) {
	var top struct {
		Authored *bool `json:"x-svc-input-schema-authored"`
		Info     struct {
			Authored *bool `json:"x-svc-input-schema-authored"`
		} `json:"info"`
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(doc, &top); err != nil {
		return nil, fmt.Errorf("the schema document is not an OpenAPI object: %w", err)
	}
	ms := &ModelSchema{Model: model, Document: doc}
	var chosen *openAPIOperation
	var chosenPath string
	paths := slices.Sorted(maps.Keys(top.Paths))
	for _, p := range paths {
		raw, ok := top.Paths[p]["post"]
		if !ok {
			continue
		}
		var op openAPIOperation
		if json.Unmarshal(raw, &op) != nil || op.RequestBody == nil {
			continue
		}
		if _, ok := op.RequestBody.Content["application/json"]; !ok {
			continue
		}
		if chosen == nil || strings.HasSuffix(p, "/"+model) {
			chosen, chosenPath = &op, p
		}
	}
	// The router does not say where in the document the flag sits: the document's
	// root, its info object and the model operation are all read, in that order. A document
	// without it is taken as unauthored: the router then validates, and nothing is refused here.
	authored := cmp.Or(top.Authored, top.Info.Authored)
	if chosen != nil {
		authored = cmp.Or(authored, chosen.Authored)
		ms.InputSchema = chosen.RequestBody.Content["application/json"].Schema
		ms.inputPointer = "#/paths/" + pointerEscape(chosenPath) + "/post/requestBody/content/application~1json/schema"
		if ok := chosen.Responses["200"]; ok.Content != nil {
			ms.OutputMediaTypes = slices.Sorted(maps.Keys(ok.Content))
		}
	}
	ms.InputSchemaAuthored = authored != nil && *authored && len(ms.InputSchema) > 0
	if ms.OutputMediaTypes == nil {
		ms.OutputMediaTypes = []string{}
	}
	return ms, nil
}

func pointerEscape(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// InputViolation is one way an input breaks the model's schema.
type InputViolation struct {
	Path    string // "prompt", "images[0].url"; "(input)" for the whole object
	Message string
}

// ValidateInput checks input against the model's authored input schema. It returns nothing when
// the schema is not authored (the router accepts any object then). The schema document is
// compiled on its own: a $ref outside it is refused, never fetched. An OpenAPI 3.0 document is
// first rewritten into JSON Schema 2020-12 (fromOpenAPI30), which the 3.1 documents already are.
func (m *ModelSchema) ValidateInput(input []byte) ([]InputViolation, error) {
	if !m.InputSchemaAuthored {
		return nil, nil
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(m.Document))
	if err != nil {
		return nil, fmt.Errorf("schema document of %s: %w", m.Model, err)
	}
	if isOpenAPI30(doc) {
		doc = fromOpenAPI30(doc)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(input))
	if err != nil {
		return nil, fmt.Errorf("input is not JSON: %w", err)
	}
	const base = "urn:svc:model-schema"
	comp := jsonschema.NewCompiler()
	comp.DefaultDraft(jsonschema.Draft2020)
	comp.UseLoader(refuseLoader{})
	if err := comp.AddResource(base, doc); err != nil {
		return nil, fmt.Errorf("schema document of %s: %w", m.Model, err)
	}
	sch, err := comp.Compile(base + m.inputPointer)
	if err != nil {
		return nil, fmt.Errorf("input schema of %s does not compile: %w", m.Model, err)
	}
	err = sch.Validate(inst)
	var verr *jsonschema.ValidationError
	if err == nil {
		return nil, nil
	}
	if !errors.As(err, &verr) {
		return nil, err
	}
	out := leafViolations(verr, nil, map[InputViolation]bool{})
	if len(out) == 0 { // not expected: every failure has a leaf
		out = append(out, InputViolation{Path: "(input)", Message: verr.Error()})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

// schemaMessages renders violation messages in English, as the library's own errors are.
var schemaMessages = message.NewPrinter(language.English)

// leafViolations walks a validation error down to its leaves, the violations themselves, and
// reports each as its instance path and message. The nodes above them ($ref, allOf, properties,
// the schema itself) only say that something below failed.
func leafViolations(e *jsonschema.ValidationError, out []InputViolation, seen map[InputViolation]bool) []InputViolation {
	if len(e.Causes) > 0 {
		for _, cause := range e.Causes {
			out = leafViolations(cause, out, seen)
		}
		return out
	}
	v := InputViolation{Path: pointerPath(locationPointer(e.InstanceLocation)), Message: e.ErrorKind.LocalizedString(schemaMessages)}
	if !seen[v] {
		seen[v] = true
		out = append(out, v)
	}
	return out
}

// locationPointer is the JSON pointer of an instance location.
func locationPointer(loc []string) string {
	var b strings.Builder
	for _, tok := range loc {
		b.WriteByte('/')
		b.WriteString(pointerEscape(tok))
	}
	return b.String()
}

type refuseLoader struct{}

func (refuseLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("the schema refers to %q outside its document; it is not fetched", url)
}

// pointerPath renders a JSON pointer ("/images/0/url") as "images[0].url".
func pointerPath(ptr string) string {
	if ptr == "" || ptr == "/" {
		return "(input)"
	}
	var b strings.Builder
	for _, tok := range strings.Split(strings.TrimPrefix(ptr, "/"), "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		if _, err := strconv.Atoi(tok); err == nil {
			fmt.Fprintf(&b, "[%s]", tok)
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(tok)
	}
	return b.String()
}
