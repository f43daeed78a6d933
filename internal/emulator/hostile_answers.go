package emulator

import (
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/google/uuid"
)

// hostile reports whether f asks for one of the hostile answers below.
func (f Fault) hostile() bool {
	return f.Endless || f.Stall || f.Cut || f.Outputs > 0 || f.RepeatOutputs > 1
}

// answerHostile runs the real handler and then serves its answer in the hostile way f names:
// an endless body, a body that stalls after the headers, or a job record with too many outputs.
func (s *Server) answerHostile(f Fault, w http.ResponseWriter, r *http.Request, next http.HandlerFunc) {
	rec := newRecorder()
	next(rec, r)
	for k, v := range f.Headers {
		rec.header.Set(k, v)
	}
	switch {
	case f.Endless:
		s.serveEndless(rec, w, r)
	case f.Stall:
		s.serveStalled(rec, f.StallAfter, w, r)
	case f.Cut:
		serveCut(rec, f.CutAfter, w)
	default:
		inflateOutputs(rec, f.Outputs, f.RepeatOutputs)
		rec.replay(w)
	}
}

// serveEndless sends the recorded headers without a length, then zeros until the client goes.
func (s *Server) serveEndless(rec *recorder, w http.ResponseWriter, r *http.Request) {
	copyHeader(w, rec)
	w.Header().Del("Content-Length")
	w.WriteHeader(http.StatusOK)
	zeros := make([]byte, 32<<10)
	for r.Context().Err() == nil && !s.isDone() {
		if _, err := w.Write(zeros); err != nil {
			return
		}
	}
}

// serveStalled sends the recorded headers and the first n bytes of the body, then nothing until
// the client goes or the server closes.
func (s *Server) serveStalled(rec *recorder, n int, w http.ResponseWriter, r *http.Request) {
	copyHeader(w, rec)
	w.WriteHeader(rec.status)
	body := rec.body.Bytes()
	_, _ = w.Write(body[:min(n, len(body))])
	if fl, ok := w.(http.Flusher); ok {
		fl.Flush()
	}
	select {
	case <-r.Context().Done():
	case <-s.done:
	}
}

// serveCut sends the recorded headers and the first n bytes of the body, then closes the
// connection: the client sees a body shorter than its Content-Length.
func serveCut(rec *recorder, n int, w http.ResponseWriter) {
	copyHeader(w, rec)
	w.WriteHeader(rec.status)
	body := rec.body.Bytes()
	_, _ = w.Write(body[:min(n, len(body))])
	if fl, ok := w.(http.Flusher); ok {
		fl.Flush()
	}
	panic(http.ErrAbortHandler) // net/http closes the connection without logging
}

func (s *Server) isDone() bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

func copyHeader(w http.ResponseWriter, rec *recorder) {
	for k, v := range rec.header {
		w.Header()[k] = v
	}
	if rec.status == 0 {
		rec.status = http.StatusOK
	}
}

// inflateOutputs rewrites a recorded JSON job record: each output is listed repeat times (the
// same asset id), and the list is then padded to total outputs with copies under distinct asset
// ids that stay the same from one read to the next. A record with no outputs is left alone.
func inflateOutputs(rec *recorder, total, repeat int) {
	var job map[string]json.RawMessage
	var outs []outputJSON
	if json.Unmarshal(rec.body.Bytes(), &job) != nil || json.Unmarshal(job["outputs"], &outs) != nil || len(outs) == 0 {
		return
	}
	listed := make([]outputJSON, 0, max(total, len(outs)*max(repeat, 1)))
	for _, o := range outs {
		for range max(repeat, 1) {
			listed = append(listed, o)
		}
	}
	for i := len(listed); i < total; i++ {
		o := outs[i%len(outs)]
		o.ID = uuid.NewSHA1(uuid.NameSpaceOID, []byte(o.ID+"/"+strconv.Itoa(i))).String()
		o.Name = strconv.Itoa(i) + "_" + o.Name
		listed = append(listed, o)
	}
	b, err := json.Marshal(listed)
	if err != nil {
		return
	}
	job["outputs"] = b
	if body, err := json.Marshal(job); err == nil {
		rec.body.Reset()
		rec.body.Write(body)
		rec.header.Del("Content-Length")
	}
}
