package client

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// maxErrorBody bounds how much of an error body is read: enough for any envelope, small enough
// that a proxy's error page or a hostile body cannot exhaust memory.
const maxErrorBody = 64 << 10

// APIError is an HTTP error from any of the service's interfaces. It keeps what the service said,
// whatever shape the body had: the status and request id always; the code, message and details
// when the body parsed; a short excerpt when it did not (an HTML page from a proxy, plain text,
// truncated JSON).
type APIError struct {
	Operation  string // what the client was doing, e.g. "submit job"
	Method     string
	URL        string // redacted
	StatusCode int
	RequestID  string // X-Svc-Request-Id

	// Code is the service's machine-readable error: error.code (v2), the X-Svc-Error-Type header
	// (router), or the registry body's "error".
	Code    string
	Message string
	// Details is the v2 envelope's error.details, verbatim.
	Details json.RawMessage
	// NodeErrors is details.node_errors of an invalid_workflow error.
	NodeErrors map[string][]NodeError
	// NodeClasses names the class_type of each node in NodeErrors, taken from the workflow the
	// client submitted (the service's answer names only node ids).
	NodeClasses map[string]string
	// FieldErrors is the router's 422 validation body, and the registry's details list.
	FieldErrors []FieldError
	// RetryAfter is the Retry-After header, when present.
	RetryAfter time.Duration
	// RetryAfterCap is set when RetryAfter was longer than the client waits (its cap), which is
	// why the client stopped retrying.
	RetryAfterCap time.Duration
	// BodyExcerpt is the start of a body that did not parse, cleaned for display.
	BodyExcerpt string
	// Header is the response's headers (spend and upstream headers are read from it).
	Header http.Header
	// enveloped is set when the body had one of the service's error shapes.
	enveloped bool
	// fromRouter is set when the request went to the model router.
	fromRouter bool
}

// NodeError is one entry of invalid_workflow's details.node_errors.
type NodeError struct {
	Field  string `json:"field"`
	Reason string `json:"reason"`
}

// FieldError is one rejected field of a validation body.
type FieldError struct {
	Loc   []any           `json:"loc"`
	Msg   string          `json:"msg"`
	Type  string          `json:"type"`
	Ctx   json.RawMessage `json:"ctx,omitempty"`
	Input json.RawMessage `json:"input,omitempty"`
}

// Path renders loc as a dotted path with array indexes: "image.size[0]".
func (f FieldError) Path() string {
	var b strings.Builder
	for i, seg := range f.Loc {
		switch v := seg.(type) {
		case float64:
			fmt.Fprintf(&b, "[%d]", int(v))
		default:
			if i > 0 {
				b.WriteByte('.')
			}
			fmt.Fprint(&b, v)
		}
	}
	if b.Len() == 0 {
		return "(body)"
	}
	return b.String()
}

// writeStatusLine writes "HTTP <status> <code>: <message> (request id <id>)", leaving out an
// empty code or message and saying when no request id came back. code and requestID come
// rendered by the caller; the message, which may span lines, is made printable and capped here.
func writeStatusLine(b *strings.Builder, status int, code, message, requestID string) {
	fmt.Fprintf(b, "HTTP %d", status)
	if code != "" {
		fmt.Fprintf(b, " %s", code)
	}
	if message != "" {
		fmt.Fprintf(b, ": %s", capEcho(printable(message, true), maxEchoedMessage))
	}
	if requestID != "" {
		fmt.Fprintf(b, " (request id %s)", requestID)
	} else {
		b.WriteString(" (no request id returned)")
	}
}

func (e *APIError) Error() string {
	// Everything but the operation and the status came from the response: render it printable.
	header := func(s string) string { return printable(s, false) } // capped when read (newAPIError)
	var b strings.Builder
	if e.Operation != "" {
		b.WriteString(e.Operation)
		b.WriteString(": ")
	}
	writeStatusLine(&b, e.StatusCode, header(e.Code), e.Message, header(e.RequestID))
	if e.RetryAfter > 0 {
		fmt.Fprintf(&b, "; Retry-After %s", e.RetryAfter)
		if e.RetryAfterCap > 0 {
			fmt.Fprintf(&b, ", longer than the %s this client waits, so it stopped retrying", e.RetryAfterCap)
		}
	}
	e.writeNodeErrors(&b)
	e.writeFieldErrors(&b)
	if e.BodyExcerpt != "" {
		fmt.Fprintf(&b, "\n  response body (not the expected JSON): %s", echoHeader(e.BodyExcerpt))
	}
	return b.String()
}

// writeNodeErrors lists invalid_workflow's rejected nodes, each with its class when the submitted
// workflow named one, at most maxEchoedItems lines.
func (e *APIError) writeNodeErrors(b *strings.Builder) {
	writeNodeLines(b, e.NodeErrors, func(id string, ne NodeError) string {
		class := ""
		if c := e.NodeClasses[id]; c != "" {
			class = " (" + echoHeader(c) + ")"
		}
		return fmt.Sprintf("node %s%s: %s: %s", echoHeader(strconv.Quote(id)), class, echoHeader(ne.Field), echoHeader(ne.Reason))
	})
}

// writeNodeLines writes one line per error of each node, nodes in id order, at most
// maxEchoedItems of them, then how many more were left out: a rejection may name thousands.
func writeNodeLines[E any](b *strings.Builder, byNode map[string][]E, render func(id string, e E) string) {
	n := 0
	for _, id := range slices.Sorted(maps.Keys(byNode)) {
		for _, e := range byNode[id] {
			if n++; n <= maxEchoedItems {
				b.WriteString("\n  ")
				b.WriteString(render(id, e))
			}
		}
	}
	if n > maxEchoedItems {
		fmt.Fprintf(b, "\n  ... and %d more node errors", n-maxEchoedItems)
	}
}

// writeFieldErrors lists a validation body's rejected fields, at most maxEchoedItems lines.
func (e *APIError) writeFieldErrors(b *strings.Builder) {
	for i, fe := range e.FieldErrors {
		if i == maxEchoedItems {
			fmt.Fprintf(b, "\n  ... and %d more", len(e.FieldErrors)-maxEchoedItems)
			return
		}
		if len(fe.Loc) == 0 && fe.Type == "" { // a registry details entry: a bare message
			fmt.Fprintf(b, "\n  %s", echoHeader(fe.Msg))
			continue
		}
		fmt.Fprintf(b, "\n  %s: %s", echoHeader(fe.Path()), echoHeader(fe.Msg))
		if fe.Type != "" {
			fmt.Fprintf(b, " (%s", echoHeader(fe.Type))
			if len(fe.Ctx) > 0 {
				fmt.Fprintf(b, ", %s", echoHeader(string(fe.Ctx)))
			}
			b.WriteString(")")
		}
	}
}

// HasCode reports whether err is an APIError with one of the given codes.
func HasCode(err error, codes ...string) bool {
	var apiErr *APIError
	if !errors.As(err, &apiErr) {
		return false
	}
	for _, c := range codes {
		if apiErr.Code == c {
			return true
		}
	}
	return false
}

// Gone reports whether err is the service saying the record does not exist (any more): 404, or
// 410 Gone, which servers also use for a record past its retention.
func Gone(err error) bool {
	st := statusOf(err)
	return st == http.StatusNotFound || st == http.StatusGone
}

// statusOf returns the HTTP status of an APIError in err's chain, or 0.
func statusOf(err error) int {
	var apiErr *APIError
	if errors.As(err, &apiErr) {
		return apiErr.StatusCode
	}
	return 0
}

// newAPIError reads (a bounded part of) resp's body and closes it.
func newAPIError(op string, resp *http.Response) *APIError {
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	e := &APIError{
		Operation:  op,
		StatusCode: resp.StatusCode,
		// Kept as sent (Error renders them printable), but capped: a header is the server's to size.
		RequestID: capEcho(resp.Header.Get("X-Svc-Request-Id"), maxEchoedHeader),
		Code:      capEcho(resp.Header.Get("X-Svc-Error-Type"), maxEchoedHeader),
		Header:    resp.Header,
	}
	if resp.Request != nil {
		e.Method = resp.Request.Method
		e.URL = redactURL(resp.Request.URL)
	}
	if d, ok := parseRetryAfter(resp.Header.Get("Retry-After")); ok {
		e.RetryAfter = d
	}
	e.enveloped = decodeErrorBody(e, body)
	if !e.enveloped {
		e.BodyExcerpt = excerpt(body)
	}
	if e.Message == "" {
		e.Message = http.StatusText(resp.StatusCode)
	}
	return e
}

// decodeErrorBody fills e from any of the documented body shapes and reports whether one matched:
//
//	v2:        {"error": {"code", "message", "details"}}
//	registry:  {"error": "...", "message": "..."} | {"details": ["..."], "message": "..."} | {"message"}
//	router:    {"detail": "..."} | {"detail": [{loc, msg, type, ctx, input}]}
func decodeErrorBody(e *APIError, body []byte) bool {
	body = bytes.TrimSpace(body)
	if len(body) == 0 || body[0] != '{' {
		return false
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(body, &raw); err != nil {
		return false
	}
	// In this order: a message from "error" wins over "message", which wins over "detail".
	fields := []struct {
		name   string
		decode func(*APIError, json.RawMessage) bool
	}{
		{"error", decodeErrorField},
		{"message", decodeMessageField},
		{"details", decodeDetailsField},
		{"detail", decodeDetailField},
	}
	matched := false
	for _, f := range fields {
		if v, ok := raw[f.name]; ok && f.decode(e, v) {
			matched = true
		}
	}
	return matched
}

// decodeErrorField reads "error": the v2 envelope {code, message, details} (details.node_errors
// of an invalid workflow included), or the registry's error code as a plain string.
func decodeErrorField(e *APIError, env json.RawMessage) bool {
	var v2 struct {
		Code    string          `json:"code"`
		Message string          `json:"message"`
		Details json.RawMessage `json:"details"`
	}
	var s string
	switch {
	case json.Unmarshal(env, &v2) == nil && (v2.Code != "" || v2.Message != ""):
		e.Code, e.Message = v2.Code, v2.Message
		if len(v2.Details) > 0 && string(v2.Details) != "null" {
			e.Details = v2.Details
			var d struct {
				NodeErrors map[string][]NodeError `json:"node_errors"`
			}
			if json.Unmarshal(v2.Details, &d) == nil {
				e.NodeErrors = d.NodeErrors
			}
		}
		return true
	case json.Unmarshal(env, &s) == nil:
		e.Code = s // registry {error, message}
		return true
	}
	return false
}

// decodeMessageField reads the registry's "message", unless a message is already known.
func decodeMessageField(e *APIError, m json.RawMessage) bool {
	var s string
	if json.Unmarshal(m, &s) != nil || e.Message != "" {
		return false
	}
	e.Message = s
	return true
}

// decodeDetailsField reads the registry's "details", a list of messages.
func decodeDetailsField(e *APIError, d json.RawMessage) bool {
	var list []string
	if json.Unmarshal(d, &list) != nil {
		return false
	}
	for _, item := range list {
		e.FieldErrors = append(e.FieldErrors, FieldError{Msg: item})
	}
	return true
}

// decodeDetailField reads the router's "detail": a message, or the validation list of a 422.
func decodeDetailField(e *APIError, d json.RawMessage) bool {
	var s string
	var list []FieldError
	switch {
	case json.Unmarshal(d, &s) == nil:
		if e.Message == "" {
			e.Message = s
		}
		return true
	case json.Unmarshal(d, &list) == nil:
		e.FieldErrors = append(e.FieldErrors, list...)
		return true
	}
	return false
}

// excerpt turns an unparseable body into one short, printable line. HTML tags are dropped, so a
// proxy's error page shows its text ("502 Bad Gateway") rather than markup.
func excerpt(body []byte) string {
	const limit = 200
	if len(body) == 0 {
		return ""
	}
	s := string(body)
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "?")
	}
	if strings.Contains(s, "<") && strings.Contains(s, ">") {
		s = stripTags(s)
	}
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > limit {
		s = cutOnRune(s, limit) + "…"
	}
	return s
}

func stripTags(s string) string {
	var b strings.Builder
	inTag := false
	for _, r := range s {
		switch {
		case r == '<':
			inTag = true
			b.WriteByte(' ')
		case r == '>':
			inTag = false
		case !inTag:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// UnknownOutcomeError says a request that creates something billable was sent, but no answer
// that settles whether it took effect came back (a 5xx, a timeout, a reset connection). The
// caller must look before acting again, and never send it under a new key.
type UnknownOutcomeError struct {
	Operation      string
	IdempotencyKey string // the key the request carried, if any
	// FirstArrived: a resend under the same single-use key was refused as a reuse, so an
	// earlier attempt reached the service (what it did is what is unknown).
	FirstArrived bool
	Cause        error
}

func (e *UnknownOutcomeError) Error() string {
	msg := fmt.Sprintf("%s: the outcome is unknown: %v", e.Operation, e.Cause)
	if e.IdempotencyKey != "" {
		msg += fmt.Sprintf(" (Idempotency-Key %s)", e.IdempotencyKey)
	}
	return msg
}

func (e *UnknownOutcomeError) Unwrap() error { return e.Cause }

// printable makes text from a response safe to show in a terminal: invalid UTF-8 becomes U+FFFD,
// and control characters (ESC, CR, NUL, C1 controls...) and bidirectional overrides are written as
// escapes, so a hostile body cannot recolour, rewrite or reorder what the user reads. Newlines are
// escaped too unless keepNewlines is set (multi-line service messages).
func printable(s string, keepNewlines bool) string {
	clean := func(r rune) bool {
		return (r == '\n' && keepNewlines) || (!unicode.IsControl(r) && !unicode.Is(unicode.Bidi_Control, r))
	}
	if utf8.ValidString(s) && strings.IndexFunc(s, func(r rune) bool { return !clean(r) }) < 0 {
		return s
	}
	var b strings.Builder
	for _, r := range strings.ToValidUTF8(s, "\uFFFD") {
		switch {
		case clean(r):
			b.WriteRune(r)
		case r < 0x100:
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
	}
	return b.String()
}

// RefusedJobRecordError says the service accepted a submission and named the job, but answered
// with a record the client will not follow (a link to another host, a missing self link). The job
// exists: this is not an unknown outcome, and its id must not be lost.
type RefusedJobRecordError struct {
	Operation      string
	JobID          string // as the service named it
	Status         string // as the service gave it, possibly empty
	IdempotencyKey string
	Cause          error
}

func (e *RefusedJobRecordError) Error() string {
	return fmt.Sprintf("%s: the service created job %s (Idempotency-Key %s) but its answer was refused: %v",
		e.Operation, printable(e.JobID, false), e.IdempotencyKey, e.Cause)
}

func (e *RefusedJobRecordError) Unwrap() error { return e.Cause }
