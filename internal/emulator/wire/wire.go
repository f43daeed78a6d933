// Package wire holds the HTTP helpers every API of the reference server shares: the request id
// header and the JSON writer.
package wire

import (
	"encoding/json"
	"net/http"
)

// RequestIDHeader carries the id of every answer, set before any handler runs.
const RequestIDHeader = "X-Svc-Request-Id"

// WriteJSON writes v as the JSON body with status; a value that cannot be encoded becomes a 500
// in the v2 error envelope.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		b = []byte(`{"error":{"code":"upstream_error","message":"internal error"}}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}
