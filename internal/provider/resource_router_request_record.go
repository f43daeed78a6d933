package provider

import (
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/svc-org/terraform-provider-svc/internal/client"
)

// routerRecordModel holds svc_router_request's read-only attributes: what the router said of the
// request and of its result.
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

// routerRecordAttrTypes are the types of routerRecordModel's attributes.
var routerRecordAttrTypes = map[string]attr.Type{
	"status":              types.StringType,
	"error_type":          types.StringType,
	"queue_position":      types.Int64Type,
	"status_url":          types.StringType,
	"response_url":        types.StringType,
	"cancel_url":          types.StringType,
	"result":              types.StringType,
	"result_content_type": types.StringType,
	"result_size_bytes":   types.Int64Type,
	"result_sha256":       types.StringType,
	"replayed":            types.BoolType,
	"credits_used":        types.StringType,
	"committed_spend":     types.ObjectType{AttrTypes: spendAttrTypes},
}

// spendAttrTypes are the types of committed_spend's attributes, one per X-Committed-Spend-* header.
var spendAttrTypes = map[string]attr.Type{
	"limit":     types.StringType,
	"current":   types.StringType,
	"remaining": types.StringType,
}

// routerRecordAttributes is the record in svc_router_request's schema: read-only, and kept from
// state on an in-place update (keepStateForUnknown).
func routerRecordAttributes() map[string]schema.Attribute {
	return keepStateForUnknown(map[string]schema.Attribute{
		"status": schema.StringAttribute{
			Computed:            true,
			MarkdownDescription: "Queue status: `IN_QUEUE`, `IN_PROGRESS` or `COMPLETED`. A synchronous call that returned is `COMPLETED`.",
		},
		"error_type": schema.StringAttribute{
			Computed:            true,
			MarkdownDescription: "Why a `COMPLETED` run did not succeed (the service's `error_type`, verbatim, even when this provider does not know it); null on success.",
		},
		"queue_position": schema.Int64Attribute{
			Computed:            true,
			MarkdownDescription: "Requests ahead of this one when last read (0 means first); null when not queued.",
		},
		"status_url": schema.StringAttribute{
			Computed: true,
			MarkdownDescription: "Status link of a queued request. A link of the router's API, not a signed URL: it " +
				"works only with the API key, so it is no credential.",
		},
		"response_url": schema.StringAttribute{
			Computed:            true,
			MarkdownDescription: "Link that collects the result of a queued request.",
		},
		"cancel_url": schema.StringAttribute{
			Computed:            true,
			MarkdownDescription: "Cancellation link of a queued request.",
		},
		"result": schema.StringAttribute{
			Computed: true,
			MarkdownDescription: "The result body, when it is JSON or text, at most 1 MiB, and `result_path` is unset; null " +
				"otherwise. It is kept as the model returned it: asset URLs in it may be signed (credentials to those " +
				"assets) and expire (24 hours for a stored video, less for others), so download them promptly, and set " +
				"`result_path` to keep such a result out of the state.",
		},
		"result_content_type": schema.StringAttribute{
			Computed:            true,
			MarkdownDescription: "Media type of the result, as the model's provider sent it.",
		},
		"result_size_bytes": schema.Int64Attribute{
			Computed:            true,
			MarkdownDescription: "Size of the result in bytes.",
		},
		"result_sha256": schema.StringAttribute{
			Computed:            true,
			MarkdownDescription: "SHA-256 of the result bytes (hex), whether they were kept in state, written to `result_path`, or neither.",
		},
		"replayed": schema.BoolAttribute{
			Computed:            true,
			MarkdownDescription: "The service answered from the idempotency key's record (`Idempotent-Replayed: true`): no second charge.",
		},
		"credits_used": schema.StringAttribute{
			Computed:            true,
			MarkdownDescription: "`X-Svc-Credits-Used`, verbatim, for providers on the service's allowlist; null otherwise. Not sent on replays.",
		},
		"committed_spend": schema.SingleNestedAttribute{
			Computed:            true,
			MarkdownDescription: "Committed-spend state from the `X-Committed-Spend-*` headers, verbatim; null when absent.",
			Attributes: map[string]schema.Attribute{
				"limit":     schema.StringAttribute{Computed: true, MarkdownDescription: "`X-Committed-Spend-Limit`."},
				"current":   schema.StringAttribute{Computed: true, MarkdownDescription: "`X-Committed-Spend-Current`."},
				"remaining": schema.StringAttribute{Computed: true, MarkdownDescription: "`X-Committed-Spend-Remaining`."},
			},
		},
	})
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
	m.Status = nullIfEmpty(q.Status)
	m.ErrorType = nullIfEmpty(q.ErrorType)
	m.QueuePosition = types.Int64PointerValue(q.QueuePosition)
	if q.Completed() {
		m.QueuePosition = types.Int64Null()
	}
	// A link the client refused is empty: null here, so Read and Delete fall back to the
	// router endpoint.
	m.StatusURL = nullIfEmpty(q.StatusURL)
	m.ResponseURL = nullIfEmpty(q.ResponseURL)
	m.CancelURL = nullIfEmpty(q.CancelURL)
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
			"limit": nullIfEmpty(res.Spend.Limit), "current": nullIfEmpty(res.Spend.Current), "remaining": nullIfEmpty(res.Spend.Remaining),
		})
	}
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
