package client

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// FuzzDecodeJobRecord: whatever a value in a job record holds (and wherever it sits), decoding
// never panics, and when the record's id is readable (the document, NaN and Infinity aside, is
// JSON with a string id) the decoded job carries that id. The warnings stay bounded.
func FuzzDecodeJobRecord(f *testing.F) {
	for _, s := range []struct{ id, value string }{
		{"11111111-1111-1111-1111-111111111111", "NaN"},
		{"j", "1e400"},
		{"j", "1e18"},
		{"j", "-1e19"},
		{"j", `"text"`},
		{"j", `{"nested":[1,2,{"x":NaN}]}`},
		{"j", "Infinity"},
		{"j", `[1e999, -Infinity, null, true]`},
		{"j", `1},"id":"other","x":{"y":2`},
		{"\u202e\x1b[31m", "0.5"},
		{"", "null"},
		{"j", `"\u0000\"NaN\""`},
		{"j", "9223372036854775807"},
		{"j", "9223372036854775808"},
	} {
		f.Add(s.id, []byte(s.value))
	}
	f.Fuzz(func(t *testing.T, id string, value []byte) {
		idJSON, _ := json.Marshal(id)
		v := string(value)
		body := `{"id":` + string(idJSON) + `,"status":"running","queue_position":` + v +
			`,"progress":{"value":` + v + `,"nodes_done":` + v + `,"current_node":` + v + `},` +
			`"outputs":[{"id":"a","size_bytes":` + v + `,"hash":` + v + `},` + v + `],"metrics":{"m":` + v + `},` +
			`"error":` + v + `,"urls":{"self":` + v + `}}`

		var job Job
		err := decodeJSON(&http.Response{StatusCode: http.StatusOK, Header: http.Header{},
			Body: io.NopCloser(strings.NewReader(body))}, &job)

		want, readable := readableID(body)
		if readable && err != nil {
			t.Fatalf("the id %q was readable, yet the record was refused: %v\nbody: %s", want, err, body)
		}
		if readable && job.ID != want {
			t.Fatalf("the id %q was readable, yet the record says %q\nbody: %s", want, job.ID, body)
		}
		if len(job.DecodeWarnings) > maxEchoedItems+2 {
			t.Fatalf("%d warnings", len(job.DecodeWarnings))
		}
	})
}

// readableID is the record's top-level id, when the document (NaN and Infinity read as null) is
// JSON and the id a string.
func readableID(body string) (string, bool) {
	clean, _ := nullNonFinite([]byte(body))
	var probe struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(clean, &probe) != nil {
		return "", false
	}
	var id string
	if json.Unmarshal(probe.ID, &id) != nil {
		return "", false
	}
	return id, true
}
