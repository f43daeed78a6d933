package provider

import (
	"context"
	"encoding/json"

	"github.com/hashicorp/terraform-plugin-framework/diag"
)

// batchBookKey is the key of svc_job_batch's private state that holds every row's bookkeeping.
const batchBookKey = "rows"

// batchBookRow is what the provider keeps of a row beside results, in the resource's private
// state: Terraform stores it in state with the resource but never decodes, compares, checks or
// shows it, so it costs a 10,000-row batch almost nothing per plan.
type batchBookRow struct {
	// Hash is the digest of the row's workflow: what tells a changed row.
	Hash string `json:"h,omitempty"`
	// Key is the Idempotency-Key of a submission that has no job id (unknown outcome, refused):
	// a row whose outcome is unknown is only ever resent under it. Once the service returned
	// a job id, the id is what names the job.
	Key string `json:"k,omitempty"`
	// Outputs are the file name, size and hash of each output, in results' order (by node id,
	// then as the service listed them): what output_dir needs to find and verify the files.
	Outputs []batchBookOutput `json:"o,omitempty"`
}

type batchBookOutput struct {
	Name string `json:"n"`
	Size int64  `json:"s"`
	Hash string `json:"h,omitempty"`
	// ETag is the object's ETag in the bucket output_dir names, as listed after the upload:
	// an object written again since is drift.
	ETag string `json:"e,omitempty"`
}

// batchBook is the bookkeeping of every row, by row key.
type batchBook map[string]batchBookRow

// book is the row's bookkeeping.
func (r *batchRow) book() batchBookRow {
	b := batchBookRow{Hash: r.InputHash}
	if r.ID == "" {
		b.Key = r.Key
	}
	for _, o := range r.Outputs {
		b.Outputs = append(b.Outputs, batchBookOutput{Name: o.Name, Size: o.SizeBytes, Hash: o.Hash, ETag: o.ETag})
	}
	return b
}

// privateGetter is the framework's private state of a request.
type privateGetter interface {
	GetKey(ctx context.Context, key string) ([]byte, diag.Diagnostics)
}

// privateSetter is the framework's private state of a response.
type privateSetter interface {
	SetKey(ctx context.Context, key string, value []byte) diag.Diagnostics
}

// readBatchBook is the bookkeeping a request's private state holds; empty when it holds none.
func readBatchBook(ctx context.Context, p privateGetter) batchBook {
	raw, _ := p.GetKey(ctx, batchBookKey)
	return decodeBatchBook(raw)
}

func decodeBatchBook(raw []byte) batchBook {
	book := batchBook{}
	if len(raw) > 0 {
		_ = json.Unmarshal(raw, &book) // unreadable bookkeeping reads as none: see batchHeld.row
	}
	return book
}

// writeBatchBook sets a response's private state to book.
func writeBatchBook(ctx context.Context, p privateSetter, book batchBook, diags *diag.Diagnostics) {
	raw, err := json.Marshal(book)
	if err != nil {
		diags.AddError("Writing the batch's bookkeeping failed", err.Error()+"\n\nThis is a bug in the provider.")
		return
	}
	diags.Append(p.SetKey(ctx, batchBookKey, raw)...)
}

// batchHeld is what state holds of a batch's rows: results and the bookkeeping.
type batchHeld struct {
	results map[string]batchResult
	book    batchBook
}

// row is the row state holds under key; ok is false when results has no known row there.
func (h batchHeld) row(key string) (*batchRow, bool) {
	return rowOfResult(h.results[key], h.book[key])
}

// adoptInput fills in the input digest of a held row whose bookkeeping is missing (state edited
// by hand): such a row is taken as unchanged rather than run a second time.
func adoptInput(row *batchRow, in batchRowInput) *batchRow {
	if row != nil && row.InputHash == "" {
		row.InputHash = in.hash
	}
	return row
}
