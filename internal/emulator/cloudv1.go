package emulator

// The v1 cloud interface:
//
//	GET  /api/object_info             node classes from the engine's registry
//	POST /api/upload/image            multipart: image, type, overwrite, subfolder
//	POST /api/upload/mask             multipart: image, type, subfolder, original_ref (JSON string)
//	POST /api/prompt                  {prompt, extra_data} -> {prompt_id, number, node_errors}
//	GET  /api/job/{prompt_id}/status  {status}: the current set, or the older one (V1LegacyStatuses)
//	GET  /api/view                    302 to a signed URL on the storage listener (another origin)
//	GET  /ws?clientId=&token=         the real-time socket (socket.go)
//
// Every route needs X-API-Key (the socket: the token query parameter) when Options.Token is set.
// A prompt is a job of the same engine as v2 jobs; only its statuses and messages differ.

import (
	"cmp"
	"crypto/hmac"
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"path"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Operation names of the v1 interface.
const (
	OpV1ObjectInfo  = "v1.object_info"
	OpV1UploadImage = "v1.upload_image"
	OpV1UploadMask  = "v1.upload_mask"
	OpV1Prompt      = "v1.prompt"
	OpV1Status      = "v1.status"
	OpV1View        = "v1.view"
	OpV1Socket      = "v1.socket"
	OpStorage       = "storage.get" // requests reaching the storage listener
)

// Upload is what the server received on one upload request, for tests.
type Upload struct {
	Route       string            // "image" or "mask"
	Fields      map[string]string // every non-file form field, as sent
	FileField   string            // form field of the file part
	FileName    string            // file name the client gave
	ContentType string            // of the request: multipart/form-data; boundary=...
	Size        int               // bytes of the file
	Name        string            // name the server answered
}

// v1State is the v1 interface's own state, guarded by Server.mu unless noted.
type v1State struct {
	uploads []Upload
	subs    map[*socketSub]bool

	storageMu      sync.Mutex // guards storageHeaders
	storageHeaders []http.Header
	storageSrv     *http.Server
	storageURL     string // "http://127.0.0.2:PORT"
}

func (s *Server) registerV1Routes() {
	key := authWith(s.apiKeyAuth)
	s.route("GET /api/object_info", OpV1ObjectInfo, s.handleObjectInfo, key)
	s.route("POST /api/upload/image", OpV1UploadImage, s.handleUpload("image"), key)
	s.route("POST /api/upload/mask", OpV1UploadMask, s.handleUpload("mask"), key)
	s.route("POST /api/prompt", OpV1Prompt, s.handlePrompt, key)
	s.route("GET /api/job/{id}/status", OpV1Status, s.handlePromptStatus, key)
	s.route("GET /api/view", OpV1View, s.handleView, key)
	s.route("GET /ws", OpV1Socket, s.handleSocket, authWith(s.tokenQueryAuth))
}

// apiKeyAuth is the v1 credential check: X-API-Key.
func (s *Server) apiKeyAuth(w http.ResponseWriter, r *http.Request) bool {
	return s.checkKey(w, r.Header.Get("X-API-Key"), "X-API-Key")
}

// tokenQueryAuth is the socket's credential check: the token query parameter.
func (s *Server) tokenQueryAuth(w http.ResponseWriter, r *http.Request) bool {
	return s.checkKey(w, r.URL.Query().Get("token"), "token")
}

func (s *Server) checkKey(w http.ResponseWriter, got, where string) bool {
	if s.opts.Token == "" || subtle.ConstantTimeCompare([]byte(got), []byte(s.opts.Token)) == 1 {
		return true
	}
	msg := "missing " + where
	if got != "" {
		msg = "invalid " + where
	}
	writeError(w, http.StatusUnauthorized, "unauthorized", msg, nil)
	return false
}

// ---- object info ----

func (s *Server) handleObjectInfo(w http.ResponseWriter, _ *http.Request) {
	s.mu.Lock()
	uploaded := s.uploadedNamesLocked()
	s.mu.Unlock()
	out := map[string]any{}
	for name, c := range nodeClasses {
		out[name] = objectInfo(c, uploaded)
	}
	writeJSON(w, http.StatusOK, out)
}

// objectInfo renders a class in the engine's object_info shape. A choice input puts its list of
// values where the type would be; an asset input lists the uploaded files, as the engine's image
// loader does.
func objectInfo(c *nodeClass, uploaded []string) map[string]any {
	required, optional := map[string]any{}, map[string]any{}
	var reqOrder, optOrder []string
	for _, in := range c.Inputs {
		opts := map[string]any{}
		if in.Default != nil {
			opts["default"] = in.Default
		}
		if in.Max > in.Min {
			opts["min"], opts["max"] = in.Min, in.Max
		}
		if in.ControlAfterGenerate {
			opts["control_after_generate"] = true
		}
		if in.ForceInput {
			opts["forceInput"] = true
		}
		var typ any = in.Type
		switch {
		case len(in.Choices) > 0:
			typ = in.Choices
		case in.Asset:
			typ = uploaded
			opts["image_upload"] = true
		}
		spec := []any{typ, opts}
		if in.Required {
			required[in.Name] = spec
			reqOrder = append(reqOrder, in.Name)
		} else {
			optional[in.Name] = spec
			optOrder = append(optOrder, in.Name)
		}
	}
	input := map[string]any{"required": required}
	if len(optional) > 0 {
		input["optional"] = optional
	}
	order := map[string]any{"required": orEmpty(reqOrder)}
	if len(optOrder) > 0 {
		order["optional"] = optOrder
	}
	return map[string]any{
		"input":          input,
		"input_order":    order,
		"output":         orEmpty(c.Outputs),
		"output_is_list": make([]bool, len(c.Outputs)),
		"output_name":    orEmpty(c.OutputNames),
		"name":           c.Name,
		"display_name":   c.Name,
		"description":    "",
		"category":       c.Category,
		"output_node":    c.Output,
	}
}

func orEmpty(v []string) []string {
	if v == nil {
		return []string{}
	}
	return v
}

// uploadedNamesLocked lists the names of uploaded (not job-produced) files, sorted.
func (s *Server) uploadedNamesLocked() []string {
	seen := map[string]bool{}
	names := []string{}
	for _, a := range s.assets {
		if a.jobID == "" && !seen[a.name] {
			seen[a.name] = true
			names = append(names, a.name)
		}
	}
	sort.Strings(names)
	return names
}

// ---- uploads ----

// handleUpload stores the file part of a multipart upload under its file name. An existing name
// is replaced when overwrite is "true"; otherwise the new file gets "name (1).ext" and so on, as
// the engine does. Masks need original_ref, a JSON object naming the image they belong to.
func (s *Server) handleUpload(route string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		up, problem := readUpload(route, r)
		if problem != "" {
			writeError(w, http.StatusBadRequest, "invalid_request", problem, nil)
			return
		}
		s.mu.Lock()
		overwrite := up.rec.Fields["overwrite"] == "true" || up.rec.Fields["overwrite"] == "1"
		name := up.name
		if existing := s.assetByNameLocked(name); existing != nil && existing.jobID == "" {
			if overwrite {
				s.dropUploadsNamedLocked(name)
			} else if string(existing.data) != string(up.data) {
				name = s.freeNameLocked(name)
			}
		}
		if s.assetByNameLocked(name) == nil {
			s.putAssetLocked(name, up.contentType, up.data, "", "")
		}
		up.rec.Name = name
		s.v1.uploads = append(s.v1.uploads, up.rec)
		s.mu.Unlock()
		writeJSON(w, http.StatusOK, map[string]string{"name": name, "subfolder": "", "type": up.typ})
	}
}

// upload is a multipart upload as read from the request, before it is stored.
type upload struct {
	rec         Upload
	data        []byte
	name        string // the file name, without any directory
	contentType string
	typ         string // input, temp or output
}

// readUpload reads and checks a multipart upload; problem says what is wrong with it, or is "".
func readUpload(route string, r *http.Request) (up upload, problem string) {
	if err := r.ParseMultipartForm(32 << 20); err != nil {
		return up, "expected a multipart/form-data body: " + err.Error()
	}
	up.rec = Upload{Route: route, Fields: map[string]string{}, ContentType: r.Header.Get("Content-Type")}
	for k, v := range r.MultipartForm.Value {
		if len(v) > 0 {
			up.rec.Fields[k] = v[0]
		}
	}
	var fh *multipart.FileHeader
	for field, files := range r.MultipartForm.File {
		if len(files) > 0 {
			up.rec.FileField, fh = field, files[0]
		}
	}
	if fh == nil || up.rec.FileField != "image" {
		return up, "the file must be sent in the form field \"image\""
	}
	if up.typ, problem = uploadType(up.rec.Fields["type"]); problem != "" {
		return up, problem
	}
	if route == "mask" && !namesOriginal(up.rec.Fields["original_ref"]) {
		return up, "original_ref must be a JSON object with filename"
	}
	var err error
	if up.data, err = readFilePart(fh); err != nil {
		return up, "cannot read the file part"
	}
	up.rec.FileName, up.rec.Size = fh.Filename, len(up.data)
	up.name = path.Base(strings.ReplaceAll(fh.Filename, `\`, "/"))
	if up.name == "." || up.name == "/" || up.name == "" {
		return up, "the file part has no file name"
	}
	up.contentType = cmp.Or(fh.Header.Get("Content-Type"), "application/octet-stream")
	return up, ""
}

// uploadType is the upload's type field: input when empty, else one of input, temp and output.
func uploadType(typ string) (string, string) {
	switch typ {
	case "":
		return "input", ""
	case "input", "temp", "output":
		return typ, ""
	}
	return typ, "type must be input, temp or output"
}

// namesOriginal reports whether a mask's original_ref is a JSON object with a filename.
func namesOriginal(originalRef string) bool {
	var ref struct {
		Filename string `json:"filename"`
	}
	return json.Unmarshal([]byte(originalRef), &ref) == nil && ref.Filename != ""
}

func readFilePart(fh *multipart.FileHeader) ([]byte, error) {
	f, err := fh.Open()
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

func (s *Server) dropUploadsNamedLocked(name string) {
	for id, a := range s.assets {
		if a.jobID == "" && a.name == name {
			delete(s.assets, id)
		}
	}
}

// freeNameLocked returns "base (n).ext" for the first n not in use.
func (s *Server) freeNameLocked(name string) string {
	ext := path.Ext(name)
	base := strings.TrimSuffix(name, ext)
	for n := 1; ; n++ {
		candidate := fmt.Sprintf("%s (%d)%s", base, n, ext)
		if s.assetByNameLocked(candidate) == nil {
			return candidate
		}
	}
}

// Uploads returns what every upload request carried, in order.
func (s *Server) Uploads() []Upload {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Upload(nil), s.v1.uploads...)
}

// ---- prompts ----

// handlePrompt validates and queues a prompt. An invalid one is answered 400 with the engine's
// body: {"error": {type, message, details, extra_info}, "node_errors": {id: {errors, class_type}}}.
func (s *Server) handlePrompt(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Prompt    map[string]any `json:"prompt"`
		ExtraData map[string]any `json:"extra_data"`
		ClientID  string         `json:"client_id"`
	}
	if err := json.NewDecoder(io.LimitReader(r.Body, 64<<20)).Decode(&body); err != nil {
		writePromptError(w, "invalid_prompt", "the body must be a JSON object: "+err.Error(), nil)
		return
	}
	if body.Prompt == nil {
		writePromptError(w, "invalid_prompt", "prompt is required and must be an object", nil)
		return
	}
	s.mu.Lock()
	nodeErrs, general := s.validateWorkflowLocked(body.Prompt)
	if len(nodeErrs) > 0 || general != "" {
		s.mu.Unlock()
		if general == "" {
			general = "Prompt outputs failed validation"
		}
		rendered := map[string]any{}
		for id, errs := range nodeErrs {
			list := make([]map[string]any, 0, len(errs))
			for _, e := range errs {
				list = append(list, map[string]any{"type": e.Reason, "message": e.Message, "details": e.Field,
					"extra_info": map[string]any{"input_name": e.Field}})
			}
			class, _, _ := nodeOf(body.Prompt[id])
			rendered[id] = map[string]any{"errors": list, "dependent_outputs": []string{}, "class_type": class}
		}
		writePromptError(w, "prompt_outputs_failed_validation", general, rendered)
		return
	}
	extra := body.ExtraData
	if extra == nil {
		extra = map[string]any{}
	}
	j := s.enqueueJobLocked(body.Prompt, extra, s.now(), true)
	number := len(s.jobOrder) - 1
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{"prompt_id": j.id, "number": number, "node_errors": map[string]any{}})
}

func writePromptError(w http.ResponseWriter, typ, message string, nodeErrors map[string]any) {
	if nodeErrors == nil {
		nodeErrors = map[string]any{}
	}
	writeJSON(w, http.StatusBadRequest, map[string]any{
		"error":       map[string]any{"type": typ, "message": message, "details": "", "extra_info": map[string]any{}},
		"node_errors": nodeErrors,
	})
}

// v1Status maps an engine status to the v1 status set in use.
func (s *Server) v1Status(j *job) string {
	if s.opts.V1LegacyStatuses {
		switch j.status {
		case statusQueued:
			return "pending"
		case statusRunning, statusCanceling:
			return "in_progress"
		case statusSucceeded:
			return "completed"
		case statusCanceled:
			return "cancelled"
		}
		return "failed"
	}
	switch j.status {
	case statusQueued:
		return "queued_waiting"
	case statusRunning:
		if j.progress == nil || j.progress.CurrentNode == nil {
			return "preparing"
		}
		return "executing"
	case statusCanceling:
		return "cancel_requested"
	case statusSucceeded:
		return "success"
	case statusCanceled:
		return "cancelled"
	case statusExpired:
		return "lost"
	}
	if j.err != nil && j.err.Code == NonRetryableCode {
		return "non_retryable_error"
	}
	return "error"
}

// NonRetryableCode, given to FailNode, makes the v1 status of the failed prompt non_retryable_error.
const NonRetryableCode = "non_retryable"

func (s *Server) handlePromptStatus(w http.ResponseWriter, r *http.Request) {
	if s.opts.V1NoStatusRoute {
		writeError(w, http.StatusNotFound, "not_found", "no route for "+r.Method+" "+r.URL.Path, nil)
		return
	}
	s.mu.Lock()
	j := s.getJobLocked(r.PathValue("id"), s.now())
	if j == nil || !j.v1 {
		s.mu.Unlock()
		writeError(w, http.StatusNotFound, "not_found", "prompt not found", nil)
		return
	}
	status, jobStatus := s.v1Status(j), j.status
	s.mu.Unlock()
	s.setReadRetryAfter(w, jobStatus)
	writeJSON(w, http.StatusOK, map[string]string{"status": status})
}

// ---- view and storage ----

// handleView answers 302 with a signed URL on the storage listener, which is another origin.
func (s *Server) handleView(w http.ResponseWriter, r *http.Request) {
	name := r.URL.Query().Get("filename")
	s.mu.Lock()
	a := s.assetByNameLocked(name)
	s.mu.Unlock()
	if name == "" || a == nil {
		writeError(w, http.StatusNotFound, "not_found", "no file named "+strconv.Quote(name), nil)
		return
	}
	if s.v1.storageURL == "" {
		writeError(w, http.StatusServiceUnavailable, "unavailable", "the storage listener is not running", nil)
		return
	}
	exp := strconv.FormatInt(s.urlExpiry(s.now()).Unix(), 10)
	http.Redirect(w, r, s.v1.storageURL+"/blob/"+a.id+"?expires="+exp+"&sig="+s.sign(a.id, exp), http.StatusFound)
}

// startStorage listens on Options.StorageAddr (default 127.0.0.2, falling back to 127.0.0.1 on
// systems that only route 127.0.0.1) and serves signed blobs there, recording each request's
// headers so tests can see which credentials reached the storage host.
func (s *Server) startStorage() {
	addrs := []string{s.opts.StorageAddr}
	if s.opts.StorageAddr == "" {
		addrs = []string{"127.0.0.2:0", "127.0.0.1:0"}
	}
	var ln net.Listener
	var err error
	for _, a := range addrs {
		if ln, err = net.Listen("tcp", a); err == nil {
			break
		}
	}
	if ln == nil {
		return // /api/view then answers 503
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /blob/{id}", s.handleBlob)
	s.v1.storageSrv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	s.v1.storageURL = "http://" + ln.Addr().String()
	go func() { _ = s.v1.storageSrv.Serve(ln) }()
}

func (s *Server) stopStorage() {
	if s.v1.storageSrv != nil {
		_ = s.v1.storageSrv.Close()
	}
}

func (s *Server) handleBlob(w http.ResponseWriter, r *http.Request) {
	s.v1.storageMu.Lock()
	s.v1.storageHeaders = append(s.v1.storageHeaders, r.Header.Clone())
	s.v1.storageMu.Unlock()
	setRequestID(w)
	id := r.PathValue("id")
	q := r.URL.Query()
	expires, sig := q.Get("expires"), q.Get("sig")
	exp, err := strconv.ParseInt(expires, 10, 64)
	if err != nil || !hmac.Equal([]byte(sig), []byte(s.sign(id, expires))) || signedURLExpired(s.now(), exp) {
		w.WriteHeader(http.StatusForbidden)
		return
	}
	s.mu.Lock()
	a := s.lookupAssetLocked(id)
	s.mu.Unlock()
	if a == nil {
		w.WriteHeader(http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Type", a.contentType)
	w.Header().Set("Content-Length", strconv.Itoa(len(a.data)))
	_, _ = w.Write(a.data)
}

// StorageURL is the storage listener's origin ("http://127.0.0.2:PORT"), empty when it is not running.
func (s *Server) StorageURL() string { return s.v1.storageURL }

// StorageRequestHeaders returns the headers of every request the storage listener received.
func (s *Server) StorageRequestHeaders() []http.Header {
	s.v1.storageMu.Lock()
	defer s.v1.storageMu.Unlock()
	out := make([]http.Header, len(s.v1.storageHeaders))
	for i, h := range s.v1.storageHeaders {
		out[i] = h.Clone()
	}
	return out
}

// ViewContent returns the bytes /api/view would redirect to for filename, for tests.
func (s *Server) ViewContent(filename string) ([]byte, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a := s.assetByNameLocked(filename)
	if a == nil {
		return nil, false
	}
	return append([]byte(nil), a.data...), true
}
