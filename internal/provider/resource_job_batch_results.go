package provider

import (
	"context"
	"fmt"
	"math/big"
	"slices"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	rschema "github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

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

// batchRow is one row of svc_job_batch's results.
type batchRow struct {
	ID        string
	Status    string
	Key       string // Idempotency-Key of the row's submission
	InputHash string // digest of the row's workflow (template with overrides), canonical
	Outputs   []batchOutput
	Error     *batchRowError
}

type batchOutput struct {
	ID, Name, NodeID, Type, ContentType string
	SizeBytes                           int64
	Hash                                string // "" when the service has not computed it
}

type batchRowError struct{ Code, Message, NodeID, ClassType string }

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

var (
	batchOutputAttrTypes = map[string]attr.Type{
		"id": types.StringType, "name": types.StringType, "node_id": types.StringType, "type": types.StringType,
		"content_type": types.StringType, "size_bytes": types.Int64Type, "hash": types.StringType,
	}
	batchErrorAttrTypes = map[string]attr.Type{
		"code": types.StringType, "message": types.StringType, "node_id": types.StringType, "class_type": types.StringType,
	}
	batchRowAttrTypes = map[string]attr.Type{
		"id": types.StringType, "status": types.StringType, "idempotency_key": types.StringType, "input_hash": types.StringType,
		"outputs": types.ListType{ElemType: types.ObjectType{AttrTypes: batchOutputAttrTypes}},
		"error":   types.ObjectType{AttrTypes: batchErrorAttrTypes},
	}
	batchRowType    = types.ObjectType{AttrTypes: batchRowAttrTypes}.TerraformType(context.Background()).(tftypes.Object)
	batchOutputType = batchRowType.AttributeTypes["outputs"].(tftypes.List).ElementType.(tftypes.Object)
	batchErrorType  = batchRowType.AttributeTypes["error"].(tftypes.Object)
	batchResultsTyp = tftypes.Map{ElementType: batchRowType}
)

// batchResultsAttribute is the results attribute of svc_job_batch's schema.
func batchResultsAttribute() rschema.Attribute {
	str := func(doc string) rschema.StringAttribute {
		return rschema.StringAttribute{Computed: true, MarkdownDescription: doc}
	}
	return rschema.MapNestedAttribute{
		Computed: true,
		MarkdownDescription: "Each row's job, by row key. A row that is not changed by an apply keeps its value; the plan shows " +
			"the rows an apply runs as known after apply.",
		NestedObject: rschema.NestedAttributeObject{Attributes: map[string]rschema.Attribute{
			"id": str("Job id; null when no job was created for the row (`not_submitted`, `unknown`, `rejected`)."),
			"status": str("The job's status (`queued`, `running`, `succeeded`, `canceling`, `canceled`, `failed`, `expired`), or " +
				"`not_submitted` (nothing was sent: the next apply submits it), `unknown` (the submission may have reached " +
				"the service but no answer came; it is never resent under a new key) or `rejected` (the service refused it)."),
			"idempotency_key": str("`Idempotency-Key` of the row's submission, drawn once before its first attempt."),
			"input_hash":      str("Digest of the row's canonical workflow (the template with the row's overrides): what tells a changed row."),
			"outputs": rschema.ListNestedAttribute{Computed: true, MarkdownDescription: "The job's outputs (no signed URL: " +
				"download by asset `id` with `output_dir`, `svc_output_file` or `svc_output_url`).",
				NestedObject: rschema.NestedAttributeObject{Attributes: map[string]rschema.Attribute{
					"id": str(outputIDDoc), "name": str(outputNameDoc), "node_id": str(outputNodeIDDoc), "type": str(outputTypeDoc),
					"content_type": str(outputContentTypeDoc), "hash": str(outputHashDoc),
					"size_bytes": rschema.Int64Attribute{Computed: true, MarkdownDescription: outputSizeBytesDoc},
				}}},
			"error": rschema.SingleNestedAttribute{Computed: true, MarkdownDescription: "Why the row did not succeed; null otherwise.",
				Attributes: map[string]rschema.Attribute{
					"code": str(jobErrorCodeDoc), "message": str("Error message (its first 1 KiB)."),
					"node_id": str(jobErrorNodeIDDoc), "class_type": str(jobErrorClassTypeDoc),
				}},
		}},
	}
}

func strValue(s string) tftypes.Value {
	if s == "" {
		return tftypes.NewValue(tftypes.String, nil)
	}
	return tftypes.NewValue(tftypes.String, s)
}

// value is the row as a results element.
func (r *batchRow) value() tftypes.Value {
	outputs := make([]tftypes.Value, 0, len(r.Outputs))
	for _, o := range r.Outputs {
		outputs = append(outputs, tftypes.NewValue(batchOutputType, map[string]tftypes.Value{
			"id": strValue(o.ID), "name": strValue(o.Name), "node_id": strValue(o.NodeID), "type": strValue(o.Type),
			"content_type": strValue(o.ContentType), "size_bytes": tftypes.NewValue(tftypes.Number, o.SizeBytes), "hash": strValue(o.Hash),
		}))
	}
	errValue := tftypes.NewValue(batchErrorType, nil)
	if e := r.Error; e != nil {
		errValue = tftypes.NewValue(batchErrorType, map[string]tftypes.Value{
			"code": strValue(e.Code), "message": strValue(e.Message), "node_id": strValue(e.NodeID), "class_type": strValue(e.ClassType),
		})
	}
	return tftypes.NewValue(batchRowType, map[string]tftypes.Value{
		"id": strValue(r.ID), "status": strValue(r.Status), "idempotency_key": strValue(r.Key), "input_hash": strValue(r.InputHash),
		"outputs": tftypes.NewValue(batchRowType.AttributeTypes["outputs"], outputs), "error": errValue,
	})
}

// batchRowOf reads a results element; ok is false when it is not a known row object.
func batchRowOf(v tftypes.Value) (*batchRow, bool) {
	attrs, ok := objectAttrs(v)
	if !ok {
		return nil, false
	}
	r := &batchRow{ID: stringAttr(attrs, "id"), Status: stringAttr(attrs, "status"), Key: stringAttr(attrs, "idempotency_key"),
		InputHash: stringAttr(attrs, "input_hash")}
	var outputs []tftypes.Value
	if o := attrs["outputs"]; o.IsKnown() && !o.IsNull() && o.As(&outputs) == nil {
		for _, ov := range outputs {
			oa, ok := objectAttrs(ov)
			if !ok {
				continue
			}
			var size big.Float
			_ = oa["size_bytes"].As(&size)
			n, _ := size.Int64()
			r.Outputs = append(r.Outputs, batchOutput{ID: stringAttr(oa, "id"), Name: stringAttr(oa, "name"), NodeID: stringAttr(oa, "node_id"),
				Type: stringAttr(oa, "type"), ContentType: stringAttr(oa, "content_type"), SizeBytes: n, Hash: stringAttr(oa, "hash")})
		}
	}
	if ea, ok := objectAttrs(attrs["error"]); ok {
		r.Error = &batchRowError{Code: stringAttr(ea, "code"), Message: stringAttr(ea, "message"), NodeID: stringAttr(ea, "node_id"),
			ClassType: stringAttr(ea, "class_type")}
	}
	return r, true
}

// heldResults is the results map state holds (empty when null or unknown).
func heldResults(v tftypes.Value) map[string]tftypes.Value {
	var m map[string]tftypes.Value
	if !v.IsKnown() || v.IsNull() || v.As(&m) != nil {
		return map[string]tftypes.Value{}
	}
	return m
}

// maxBatchErrorMessage bounds an error message kept in a row: 10,000 rows must stay small.
const maxBatchErrorMessage = 1024

// rowFromJob is the row of job, submitted under key for a workflow of digest hash. The outputs
// keep what lasts (no signed URL).
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
		r.Outputs = append(r.Outputs, batchOutput{ID: o.ID, Name: o.Name, NodeID: o.NodeID, Type: o.Type,
			ContentType: o.ContentType, SizeBytes: o.SizeBytes, Hash: hash})
	}
	if e := job.Error; e != nil {
		r.Error = &batchRowError{Code: e.Code, Message: truncateText(e.Message, maxBatchErrorMessage), NodeID: derefOr(e.NodeID), ClassType: derefOr(e.ClassType)}
	}
	return r
}

func derefOr(s *string) string {
	if s == nil {
		return ""
	}
	return *s
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
