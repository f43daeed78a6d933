package provider

import (
	"cmp"
	"fmt"
	"maps"
	"slices"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	rschema "github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/svc-org/terraform-provider-svc/internal/client"
)

// Row statuses of svc_job_batch beyond the service's job statuses: rows with no job id.
const (
	// batchRowNotSubmitted: nothing was sent for the row (the apply was interrupted or timed out
	// before its turn, or the request provably never left); the next apply submits it.
	batchRowNotSubmitted = "not_submitted"
	// batchRowUnknown: the submission may have reached the service, but no answer came back. It
	// is never resent under a new key; rerun_failed resends it under the same key.
	batchRowUnknown = "unknown"
	// batchRowRejected: the service refused the submission (a 4xx); no job exists.
	batchRowRejected = "rejected"
)

// batchRow is one row of svc_job_batch. State keeps it in two parts: what users read, in
// results (job id, status, output asset ids by node, error), and what only the provider reads,
// in the resource's private state (batchBookRow): the row's input digest, its Idempotency-Key
// while it has no job id, and each output's file name, size and hash.
type batchRow struct {
	ID        string
	Status    string
	Key       string // Idempotency-Key of the row's submission
	InputHash string // digest of the row's workflow (template with overrides), canonical
	Outputs   []batchOutput
	Error     *batchRowError
}

type batchOutput struct {
	ID, Name, NodeID string
	SizeBytes        int64
	Hash             string // "" when the service has not computed it
	ETag             string // of the object output_dir's bucket holds; "" for a directory or when not known
}

type batchRowError struct {
	Code, Message, NodeID, ClassType string
	text                             string // as state holds it, when read back from state
}

// String is the error as results shows it: `code: message (node "id", class)`.
func (e *batchRowError) String() string {
	if e.text != "" {
		return e.text
	}
	s := e.Message
	if e.Code != "" {
		s = e.Code + ": " + s
	}
	if e.NodeID != "" || e.ClassType != "" {
		s += fmt.Sprintf(" (node %q, %s)", e.NodeID, e.ClassType)
	}
	return s
}

// inFlight reports whether the row's job was accepted and has not ended: it is waited for.
func (r *batchRow) inFlight() bool { return r.ID != "" && !client.JobTerminal(r.Status) }

// failedRow reports whether the row ended without success.
func (r *batchRow) failedRow() bool {
	switch r.Status {
	case client.JobFailed, client.JobCanceled, client.JobExpired, batchRowRejected, batchRowUnknown:
		return true
	}
	return false
}

// batchRowAttrTypes are the attributes of a results element (see batchRowType for why flat).
var batchRowAttrTypes = map[string]attr.Type{
	batchResultAttrID: types.StringType, batchResultAttrStatus: types.StringType, batchResultAttrOutputs: types.MapType{ElemType: types.ListType{ElemType: types.StringType}}, batchResultAttrError: types.StringType,
}

// batchResultsAttribute is the results attribute of svc_job_batch's schema (what each attribute of
// an element holds is prose for its page: templates/resources/job_batch.md.tmpl). It is a map of
// objects by type, not nested attributes: Terraform and the framework treat a nested attribute
// element by element (proposing, planning, checking and rendering each), while a typed attribute
// is one value to them, and no row has anything to plan on its own.
func batchResultsAttribute() rschema.Attribute {
	return rschema.MapAttribute{
		Computed: true, ElementType: types.ObjectType{AttrTypes: batchRowAttrTypes},
		MarkdownDescription: "Each row's job, by row key: `{ id, status, outputs, error }`. A row that is not changed by an " +
			"apply keeps its value; the plan shows the rows an apply runs as known after apply. See [Results](#results) for " +
			"what each attribute holds.",
	}
}

// result is the row as a results element.
func (r *batchRow) result() batchResult {
	outputs := map[string][]string{}
	for _, o := range r.Outputs {
		outputs[o.NodeID] = append(outputs[o.NodeID], o.ID)
	}
	res := batchResult{State: attr.ValueStateKnown, ID: nullIfEmpty(r.ID), Status: nullIfEmpty(r.Status), Outputs: outputs, Error: types.StringNull()}
	if e := r.Error; e != nil {
		s := e.String()
		if r.Status == batchRowUnknown && e.text == "" && r.Key != "" {
			// The key is what the service knows the submission by: it names the job that may exist.
			s += " [Idempotency-Key " + r.Key + "]"
		}
		res.Error = types.StringValue(s)
	}
	return res
}

// rowOfResult reads a results element with the row's bookkeeping; ok is false when the element
// is not a known row.
func rowOfResult(res batchResult, book batchBookRow) (*batchRow, bool) {
	if res.State != attr.ValueStateKnown {
		return nil, false
	}
	r := &batchRow{ID: res.ID.ValueString(), Status: res.Status.ValueString(), Key: book.Key, InputHash: book.Hash}
	if e := res.Error.ValueString(); e != "" {
		r.Error = &batchRowError{text: e}
	}
	// Map elements in key order, then list order: the order bookOf recorded them in.
	for _, node := range slices.Sorted(maps.Keys(res.Outputs)) {
		for _, id := range res.Outputs[node] {
			r.Outputs = append(r.Outputs, batchOutput{ID: id, NodeID: node})
		}
	}
	if len(book.Outputs) == len(r.Outputs) {
		for i, o := range book.Outputs {
			r.Outputs[i].Name, r.Outputs[i].SizeBytes, r.Outputs[i].Hash, r.Outputs[i].ETag = o.Name, o.Size, o.Hash, o.ETag
		}
	}
	return r, true
}

// maxBatchErrorMessage bounds an error message kept in a row: 10,000 rows must stay small.
const maxBatchErrorMessage = 1024

// rowFromJob is the row of job, submitted under key for a workflow of digest hash. The outputs
// keep what lasts (no signed URL), grouped by node as results shows them.
func rowFromJob(job *client.Job, key, hash string) *batchRow {
	r := &batchRow{ID: job.ID, Status: job.Status, Key: key, InputHash: hash}
	for _, o := range job.Outputs {
		if slices.ContainsFunc(r.Outputs, func(p batchOutput) bool { return p.ID == o.ID }) {
			continue
		}
		hash := ""
		if o.Hash != nil {
			hash = *o.Hash
		}
		r.Outputs = append(r.Outputs, batchOutput{ID: o.ID, Name: o.Name, NodeID: o.NodeID, SizeBytes: o.SizeBytes, Hash: hash})
	}
	slices.SortStableFunc(r.Outputs, func(a, b batchOutput) int { return cmp.Compare(a.NodeID, b.NodeID) })
	if e := job.Error; e != nil {
		r.Error = &batchRowError{Code: e.Code, Message: truncateText(e.Message, maxBatchErrorMessage), NodeID: deref(e.NodeID), ClassType: deref(e.ClassType)}
	}
	return r
}

// truncateText is s cut to at most n bytes, on a rune boundary, marked when cut.
func truncateText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && (s[cut]&0xC0) == 0x80 {
		cut--
	}
	return s[:cut] + fmt.Sprintf("… (%d bytes more)", len(s)-cut)
}
