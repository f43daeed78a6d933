package provider

import (
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/svc-org/terraform-provider-svc/internal/client"
)

// routerRequestFields are svc_router_request's read-only attributes.
var routerRequestFields = []computedField{
	{name: "status", kind: kindString, desc: "Queue status: `IN_QUEUE`, `IN_PROGRESS` or `COMPLETED`. A synchronous call that returned is `COMPLETED`."},
	{name: "error_type", kind: kindString, desc: "Why a `COMPLETED` run did not succeed (the service's `error_type`, verbatim, even when this provider does not know it); null on success."},
	{name: "queue_position", kind: kindInt64, desc: "Requests ahead of this one when last read (0 means first); null when not queued."},
	{name: "status_url", kind: kindString, desc: "Status link of a queued request."},
	{name: "response_url", kind: kindString, desc: "Link that collects the result of a queued request."},
	{name: "cancel_url", kind: kindString, desc: "Cancellation link of a queued request."},
	{name: "result", kind: kindString, desc: "The result body, when it is JSON or text, at most 1 MiB, and `result_path` is unset; null otherwise."},
	{name: "result_content_type", kind: kindString, desc: "Media type of the result, as the model's provider sent it."},
	{name: "result_size_bytes", kind: kindInt64, desc: "Size of the result in bytes."},
	{name: "result_sha256", kind: kindString, desc: "SHA-256 of the result bytes (hex), whether they were kept in state, written to `result_path`, or neither."},
	{name: "replayed", kind: kindBool, desc: "The service answered from the idempotency key's record (`Idempotent-Replayed: true`): no second charge."},
	{name: "credits_used", kind: kindString, desc: "`X-Svc-Credits-Used`, verbatim, for providers on the service's allowlist; null otherwise. Not sent on replays."},
	{name: "committed_spend", kind: kindObject, desc: "Committed-spend state from the `X-Committed-Spend-*` headers, verbatim; null when absent.", nested: []computedField{
		{name: "limit", kind: kindString, desc: "`X-Committed-Spend-Limit`."},
		{name: "current", kind: kindString, desc: "`X-Committed-Spend-Current`."},
		{name: "remaining", kind: kindString, desc: "`X-Committed-Spend-Remaining`."},
	}},
}

var spendAttrTypes = nestedAttrTypes(routerRequestFields, "committed_spend")

// routerRecordModel holds routerRequestFields.
type routerRecordModel struct {
	Status            types.String `tfsdk:"status"`
	ErrorType         types.String `tfsdk:"error_type"`
	QueuePosition     types.Int64  `tfsdk:"queue_position"`
	StatusURL         types.String `tfsdk:"status_url"`
	ResponseURL       types.String `tfsdk:"response_url"`
	CancelURL         types.String `tfsdk:"cancel_url"`
	Result            types.String `tfsdk:"result"`
	ResultContentType types.String `tfsdk:"result_content_type"`
	ResultSizeBytes   types.Int64  `tfsdk:"result_size_bytes"`
	ResultSHA256      types.String `tfsdk:"result_sha256"`
	Replayed          types.Bool   `tfsdk:"replayed"`
	CreditsUsed       types.String `tfsdk:"credits_used"`
	CommittedSpend    types.Object `tfsdk:"committed_spend"`
}

// nullRecord is a record before anything is known: null, not unknown, so a partial state
// written while waiting is valid.
func nullRecord() routerRecordModel {
	return routerRecordModel{
		Status: types.StringNull(), ErrorType: types.StringNull(), QueuePosition: types.Int64Null(),
		StatusURL: types.StringNull(), ResponseURL: types.StringNull(), CancelURL: types.StringNull(),
		Result: types.StringNull(), ResultContentType: types.StringNull(), ResultSizeBytes: types.Int64Null(),
		ResultSHA256: types.StringNull(), Replayed: types.BoolValue(false), CreditsUsed: types.StringNull(),
		CommittedSpend: types.ObjectNull(spendAttrTypes),
	}
}

// setQueue copies a queued request's status and links.
func (m *routerRecordModel) setQueue(q *client.QueueRequest) {
	m.Status = optString(q.Status)
	m.ErrorType = optString(q.ErrorType)
	m.QueuePosition = types.Int64PointerValue(q.QueuePosition)
	if q.Completed() {
		m.QueuePosition = types.Int64Null()
	}
	// A link the client refused is empty: null here, so Read and Delete fall back to the
	// router endpoint.
	m.StatusURL = optString(q.StatusURL)
	m.ResponseURL = optString(q.ResponseURL)
	m.CancelURL = optString(q.CancelURL)
}

// keepCallFacts restores, after a result was collected again, what describes the call itself
// rather than this collection: collecting again is a replay of the same run, so it neither makes
// the original call a replay nor charges anything new.
func (m *routerRecordModel) keepCallFacts(call routerRecordModel) {
	m.Replayed = call.Replayed
	m.CreditsUsed = call.CreditsUsed
	m.CommittedSpend = call.CommittedSpend
}

// setResult copies what was kept of a result and the charge headers that came with it.
func (m *routerRecordModel) setResult(res *client.RouterResult, stored *storedResult) {
	m.Result = types.StringPointerValue(stored.text)
	m.ResultContentType = types.StringValue(stored.contentType)
	m.ResultSizeBytes = types.Int64Value(stored.size)
	m.ResultSHA256 = types.StringValue(stored.sha256)
	if res.Replayed {
		m.Replayed = types.BoolValue(true)
	}
	if res.CreditsUsed != "" {
		m.CreditsUsed = types.StringValue(res.CreditsUsed)
	}
	if !res.Spend.IsZero() {
		m.CommittedSpend = types.ObjectValueMust(spendAttrTypes, map[string]attr.Value{
			"limit": optString(res.Spend.Limit), "current": optString(res.Spend.Current), "remaining": optString(res.Spend.Remaining),
		})
	}
}

func optString(s string) types.String {
	if s == "" {
		return types.StringNull()
	}
	return types.StringValue(s)
}

// heldRequest is the handle state holds: the router's own links, and links built on the router
// endpoint where state has none (after import, or when the router's could not be followed).
func (m *routerRequestModel) heldRequest(c *client.Client) (*client.QueueRequest, error) {
	q := &client.QueueRequest{
		RequestID: m.ID.ValueString(), Model: m.Model.ValueString(), Status: m.Status.ValueString(), ErrorType: m.ErrorType.ValueString(),
		StatusURL: m.StatusURL.ValueString(), ResponseURL: m.ResponseURL.ValueString(), CancelURL: m.CancelURL.ValueString(),
	}
	if q.StatusURL != "" && q.ResponseURL != "" && q.CancelURL != "" {
		return q, nil
	}
	built, err := c.QueueLinks(m.Model.ValueString(), q.RequestID)
	if err != nil {
		return nil, err
	}
	q.FillLinks(built)
	return q, nil
}
