package client

// The v1 cloud interface: object info, uploads, prompt submission,
// status polling and /api/view. Every call sends X-API-Key. The real-time socket is in socket.go,
// its binary frames in frames.go, and waiting for a prompt in prompt_wait.go.
//
// What the v1 interface leaves open, and what we assume:
//   - POST /api/prompt has no idempotency key. It is resent only when the connection was never
//     established or the service declined it for now (429 or 503 with Retry-After). Any other
//     5xx, or a failure after sending, is an unknown outcome.
//   - A 400 from POST /api/prompt carries the engine's body {error, node_errors}; any other body
//     with a non-empty "error" and no prompt_id is a rejection. A prompt_id means a queued prompt.
//   - Statuses: the five terminal values of the current set and those of the older set are
//     terminal; anything else is in flight.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// v1 job statuses that end a prompt: the current set and the older one.
const (
	PromptSuccess           = "success"
	PromptError             = "error"
	PromptNonRetryableError = "non_retryable_error"
	PromptLost              = "lost"
	PromptCancelled         = "cancelled"
	PromptCompleted         = "completed" // older set: success
	PromptFailed            = "failed"    // older set
)

// PromptTerminal reports whether a v1 status is terminal. Only the terminal values are matched:
// anything else, in-flight names of either set included, or a name added later, is in flight.
func PromptTerminal(status string) bool {
	switch status {
	case PromptSuccess, PromptError, PromptNonRetryableError, PromptLost, PromptCancelled, PromptCompleted, PromptFailed:
		return true
	}
	return false
}

// promptSucceeded reports whether a terminal v1 status means success (either set).
func promptSucceeded(status string) bool { return status == PromptSuccess || status == PromptCompleted }

// NodeClassInfo is one node class of GET /api/object_info.
type NodeClassInfo struct {
	Category       string
	RequiredInputs []string // sorted
	OptionalInputs []string // sorted
	Outputs        []string
	OutputNode     bool
}

// ObjectInfo is the node class registry of a v1 surface.
type ObjectInfo struct {
	Classes   map[string]NodeClassInfo
	Raw       json.RawMessage
	RequestID string
}

// GetObjectInfo reads GET /api/object_info.
func (c *Client) GetObjectInfo(ctx context.Context) (*ObjectInfo, error) {
	const op = "read object info"
	var raw json.RawMessage
	resp, err := c.doJSON(ctx, call{op: op, method: http.MethodGet, url: joinPath(c.endpoint, "api", "object_info"),
		cred: credAPIKey, policy: retryIdempotent}, &raw)
	if err != nil {
		return nil, err
	}
	info, err := ParseObjectInfo(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: %w (request id %q)", op, err, requestIDOf(resp.header))
	}
	info.RequestID = requestIDOf(resp.header)
	return info, nil
}

// ParseObjectInfo reads an object_info document: an object of node class name to definition. Only
// the top level must have that shape. Each field of a definition is read on its own, and one the
// client cannot read is left empty rather than failing the document: servers differ in input spec
// shapes (["STRING", {...}], a list of choices, ["COMBO", {"options": [...]}]) and add fields, and
// a class the service lists must stay known even when its definition is unusual.
func ParseObjectInfo(raw []byte) (*ObjectInfo, error) {
	var classes map[string]json.RawMessage
	if err := json.Unmarshal(raw, &classes); err != nil {
		return nil, fmt.Errorf("object info is not a JSON object of node classes: %w", err)
	}
	info := &ObjectInfo{Classes: make(map[string]NodeClassInfo, len(classes)), Raw: raw}
	for name, def := range classes {
		var d struct {
			Input      json.RawMessage   `json:"input"`
			Output     []json.RawMessage `json:"output"`
			OutputNode json.RawMessage   `json:"output_node"`
			Category   json.RawMessage   `json:"category"`
		}
		var inputs struct {
			Required map[string]json.RawMessage `json:"required"`
			Optional map[string]json.RawMessage `json:"optional"`
		}
		readLeniently(def, &d)
		readLeniently(d.Input, &inputs)
		ci := NodeClassInfo{RequiredInputs: sortedNames(inputs.Required), OptionalInputs: sortedNames(inputs.Optional), Outputs: []string{}}
		readLeniently(d.OutputNode, &ci.OutputNode)
		readLeniently(d.Category, &ci.Category)
		for _, o := range d.Output {
			var s string
			if json.Unmarshal(o, &s) != nil {
				s = "COMBO" // an output typed by a list of values
			}
			ci.Outputs = append(ci.Outputs, s)
		}
		info.Classes[name] = ci
	}
	return info, nil
}

// sortedNames is the sorted keys of m, never nil: a class without inputs has an empty list, which
// Terraform shows as [] (length 0) where nil would be null.
func sortedNames(m map[string]json.RawMessage) []string {
	if len(m) == 0 {
		return []string{}
	}
	return slices.Sorted(maps.Keys(m))
}

// readLeniently decodes raw into out when it has out's shape and leaves out as it is otherwise.
func readLeniently(raw json.RawMessage, out any) {
	if len(raw) > 0 {
		_ = json.Unmarshal(raw, out)
	}
}

// UploadInput is one file for POST /api/upload/image or /api/upload/mask.
type UploadInput struct {
	Mask        bool   // /api/upload/mask instead of /api/upload/image
	FileName    string // name given in the multipart file part
	Content     []byte
	ContentType string // of the file part; guessed by the server when empty
	Type        string // "input" or "temp"
	Overwrite   bool
	Subfolder   string // accepted and ignored by cloud storage
	OriginalRef string // masks: a JSON object naming the image, sent as a string
}

// UploadResult is the upload response.
type UploadResult struct {
	Name      string `json:"name"`
	Subfolder string `json:"subfolder"`
	Type      string `json:"type"`
	RequestID string `json:"-"`
}

// Upload sends one file as multipart/form-data; the client sets the boundary. With overwrite
// the same upload can be repeated harmlessly, so transient failures are retried; without it a
// repeat could store a second copy under a new name, so it is resent only when it never left or
// was declined for now (429 or 503 with Retry-After: nothing was stored).
func (c *Client) Upload(ctx context.Context, in UploadInput) (*UploadResult, error) {
	op, route := "upload image", "image"
	if in.Mask {
		op, route = "upload mask", "mask"
	}
	body, contentType, err := multipartUpload(in)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	policy := retryNotApplied
	if in.Overwrite {
		policy = retryIdempotent
	}
	var out UploadResult
	resp, err := c.doJSON(ctx, call{op: op, method: http.MethodPost, url: joinPath(c.endpoint, "api", "upload", route),
		cred: credAPIKey, header: http.Header{"Content-Type": {contentType}}, body: body, policy: policy, once: !in.Overwrite}, &out)
	if err != nil {
		return nil, err
	}
	out.RequestID = requestIDOf(resp.header)
	if out.Name == "" {
		return nil, fmt.Errorf("%s: the response names no file (request id %q)", op, out.RequestID)
	}
	return &out, nil
}

func multipartUpload(in UploadInput) ([]byte, string, error) {
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	fields := [][2]string{}
	if in.Type != "" {
		fields = append(fields, [2]string{"type", in.Type})
	}
	if in.Mask {
		fields = append(fields, [2]string{"subfolder", in.Subfolder}, [2]string{"original_ref", in.OriginalRef})
	} else {
		fields = append(fields, [2]string{"overwrite", strconv.FormatBool(in.Overwrite)})
		if in.Subfolder != "" {
			fields = append(fields, [2]string{"subfolder", in.Subfolder})
		}
	}
	for _, f := range fields {
		if err := mw.WriteField(f[0], f[1]); err != nil {
			return nil, "", err
		}
	}
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", fmt.Sprintf(`form-data; name="image"; filename=%q`, in.FileName))
	ct := in.ContentType
	if ct == "" {
		ct = "application/octet-stream"
	}
	h.Set("Content-Type", ct)
	part, err := mw.CreatePart(h)
	if err != nil {
		return nil, "", err
	}
	if _, err := part.Write(in.Content); err != nil {
		return nil, "", err
	}
	if err := mw.Close(); err != nil {
		return nil, "", err
	}
	return buf.Bytes(), mw.FormDataContentType(), nil
}

// SubmitPromptInput is the body of POST /api/prompt.
type SubmitPromptInput struct {
	Workflow  json.RawMessage // API-format graph, sent verbatim as "prompt"
	ExtraData map[string]string
}

// PromptSubmission is the submission response.
type PromptSubmission struct {
	PromptID  string
	RequestID string
}

// PromptRejectedError is a submission answered with "error" instead of a prompt id.
type PromptRejectedError struct {
	StatusCode int
	RequestID  string
	Type       string // error.type, when the error is an object
	Message    string
	NodeErrors map[string][]string // node id -> "input: message" lines
}

func (e *PromptRejectedError) Error() string {
	var b strings.Builder
	b.WriteString("submit prompt: ")
	// All but the status came from the response: printable, and each part capped.
	writeStatusLine(&b, e.StatusCode, echoHeader(e.Type), e.Message, e.RequestID)
	writeNodeLines(&b, e.NodeErrors, func(id, line string) string {
		return fmt.Sprintf("node %s: %s", echoHeader(strconv.Quote(id)), echoHeader(line))
	})
	return b.String()
}

// SubmitPrompt sends POST /api/prompt. The route has no idempotency key, so the request is resent
// only when it never reached the service or the service declined it for now (429 or 503 with
// Retry-After, within max_retries and the Retry-After cap). A 5xx without Retry-After, a timeout
// or a reset after sending is an *UnknownOutcomeError: a prompt may be running, and resubmitting
// could run it twice. A 503 with Retry-After that is still the last answer is a plain *APIError:
// the service said it did not take the prompt.
func (c *Client) SubmitPrompt(ctx context.Context, in SubmitPromptInput) (*PromptSubmission, error) {
	const op = "submit prompt"
	ctx, release := c.submitting(ctx)
	defer release()
	body := map[string]any{"prompt": in.Workflow}
	if len(in.ExtraData) > 0 {
		body["extra_data"] = in.ExtraData
	}
	// Only the documented fields: the socket's clientId is ignored by the service (every
	// connection of a user gets every message), and a server may refuse fields it does not know.
	resp, err := c.do(ctx, call{op: op, method: http.MethodPost, url: joinPath(c.endpoint, "api", "prompt"),
		cred: credAPIKey, body: mustJSON(body), policy: retryNotApplied, once: true, accept: []int{http.StatusBadRequest}})
	if err != nil {
		if outcomeUnknown(err) && !notApplied(err) {
			return nil, &UnknownOutcomeError{Operation: op, Cause: err}
		}
		return nil, err
	}
	defer resp.Body.Close()
	reqID := requestIDOf(resp.Header)
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxJSONBody))
	if err != nil {
		return nil, &UnknownOutcomeError{Operation: op, Cause: fmt.Errorf("reading the response (HTTP %d, request id %q): %w", resp.StatusCode, reqID, err)}
	}
	var out struct {
		PromptID   string                     `json:"prompt_id"`
		Error      json.RawMessage            `json:"error"`
		NodeErrors map[string]json.RawMessage `json:"node_errors"`
	}
	if err := json.Unmarshal(data, &out); err != nil {
		if resp.StatusCode == http.StatusBadRequest {
			resp.Body = io.NopCloser(bytes.NewReader(data))
			return nil, newAPIError(op, resp)
		}
		return nil, &UnknownOutcomeError{Operation: op, Cause: fmt.Errorf("response is not the expected JSON (HTTP %d, request id %q): %s", resp.StatusCode, reqID, excerpt(data))}
	}
	// A prompt id on a 2xx means a queued prompt whatever else the body says: refusing it would
	// lose the id of a prompt that runs. An error beside it is logged; the status route tells.
	if resp.StatusCode == http.StatusBadRequest || out.PromptID == "" && hasValue(out.Error) {
		return nil, newPromptRejected(resp.StatusCode, reqID, out.Error, out.NodeErrors)
	}
	if out.PromptID == "" {
		return nil, &UnknownOutcomeError{Operation: op, Cause: fmt.Errorf("the response has neither prompt_id nor error (HTTP %d, request id %q): %s", resp.StatusCode, reqID, excerpt(data))}
	}
	if hasValue(out.Error) {
		c.log.Warn(ctx, "the submission answered a prompt_id and an error; following the prompt", map[string]any{
			"prompt_id": out.PromptID, "request_id": reqID, "error": excerpt(out.Error)})
	}
	return &PromptSubmission{PromptID: out.PromptID, RequestID: reqID}, nil
}

// hasValue reports whether a JSON field says something: absent, null, "", {}, [] and false do not.
func hasValue(raw json.RawMessage) bool {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return len(raw) > 0
	}
	switch v := v.(type) {
	case nil:
		return false
	case string:
		return v != ""
	case bool:
		return v
	case map[string]any:
		return len(v) > 0
	case []any:
		return len(v) > 0
	}
	return true
}

func newPromptRejected(status int, reqID string, rawErr json.RawMessage, nodeErrors map[string]json.RawMessage) *PromptRejectedError {
	e := &PromptRejectedError{StatusCode: status, RequestID: reqID, NodeErrors: map[string][]string{}}
	var obj struct {
		Type    string `json:"type"`
		Message string `json:"message"`
		Details string `json:"details"`
	}
	var s string
	switch {
	case json.Unmarshal(rawErr, &s) == nil:
		e.Message = s
	case json.Unmarshal(rawErr, &obj) == nil:
		e.Type, e.Message = obj.Type, obj.Message
		if obj.Details != "" {
			e.Message += ": " + obj.Details
		}
	default:
		e.Message = excerpt(rawErr)
	}
	for id, raw := range nodeErrors {
		var ne struct {
			Errors []struct {
				Type      string `json:"type"`
				Message   string `json:"message"`
				Details   string `json:"details"`
				ExtraInfo struct {
					InputName string `json:"input_name"`
				} `json:"extra_info"`
			} `json:"errors"`
			ClassType string `json:"class_type"`
		}
		if json.Unmarshal(raw, &ne) != nil {
			continue
		}
		for _, x := range ne.Errors {
			line := x.Type
			if x.ExtraInfo.InputName != "" {
				line = x.ExtraInfo.InputName + ": " + line
			}
			if x.Message != "" {
				line += ": " + x.Message
			}
			if ne.ClassType != "" {
				line += " (" + ne.ClassType + ")"
			}
			e.NodeErrors[id] = append(e.NodeErrors[id], line)
		}
	}
	return e
}

// PromptStatus is GET /api/job/{prompt_id}/status.
type PromptStatus struct {
	Status    string `json:"status"`
	RequestID string `json:"-"`
}

// GetPromptStatus reads a prompt's status. A 404 comes back as an *APIError: either the prompt is
// unknown or the surface lacks the route (the local engine); callers decide which matters.
func (c *Client) GetPromptStatus(ctx context.Context, promptID string) (*PromptStatus, error) {
	seg, err := pathSegment("prompt id", promptID)
	if err != nil {
		return nil, err
	}
	var out PromptStatus
	resp, err := c.doJSON(ctx, call{op: "read prompt status", method: http.MethodGet,
		url: joinPath(c.endpoint, "api", "job", seg, "status"), cred: credAPIKey, policy: retryIdempotent}, &out)
	if err != nil {
		return nil, err
	}
	out.RequestID = requestIDOf(resp.header)
	if out.Status == "" {
		return nil, fmt.Errorf("read prompt status %s: the response has no status (request id %q)", promptID, out.RequestID)
	}
	return &out, nil
}

// ViewFile names an output file of a prompt.
type ViewFile struct {
	Filename  string
	Subfolder string
	Type      string // "output" or "temp"
}

// viewURL is the /api/view URL of f (it answers with a redirect to signed storage).
func (c *Client) viewURL(f ViewFile) string {
	q := url.Values{"filename": {f.Filename}, "subfolder": {f.Subfolder}, "type": {f.Type}}
	return joinPath(c.endpoint, "api", "view") + "?" + q.Encode()
}

// DownloadView streams an output file into w through GET /api/view. The redirect to the signed
// storage URL is followed without X-API-Key or any other credential header: the signed URL
// carries its own authorization, and the key must never reach the storage host. Like every
// download it rides out transient failures until ctx's deadline (see download); each attempt
// asks the view route again, so each follows a redirect signed then.
func (c *Client) DownloadView(ctx context.Context, f ViewFile, w io.Writer, lim DownloadLimits) (*Download, error) {
	if f.Filename == "" {
		return nil, fmt.Errorf("view: filename must not be empty")
	}
	return c.download(ctx, fixedSource{call{op: "view", method: http.MethodGet, url: c.viewURL(f), cred: credAPIKey,
		header: downloadHeader(), policy: retryIdempotent, stream: true}}, w, lim)
}
