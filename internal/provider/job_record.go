package provider

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	dschema "github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	rschema "github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"

	"github.com/svc-org/terraform-provider-svc/internal/client"
)

// jobRecordModel holds the job record's attributes; it is embedded in the resource's and the data
// source's models.
type jobRecordModel struct {
	Status         types.String `tfsdk:"status"`
	CreatedAt      types.String `tfsdk:"created_at"`
	StartedAt      types.String `tfsdk:"started_at"`
	CompletedAt    types.String `tfsdk:"completed_at"`
	ExpiresAt      types.String `tfsdk:"expires_at"`
	QueuePosition  types.Int64  `tfsdk:"queue_position"`
	Progress       types.Object `tfsdk:"progress"`
	Outputs        types.List   `tfsdk:"outputs"`
	OutputsOmitted types.Int64  `tfsdk:"outputs_omitted"`
	Error          types.Object `tfsdk:"error"`
	Metrics        types.Map    `tfsdk:"metrics"`
	URLs           types.Object `tfsdk:"urls"`
}

// jobRecordAttrTypes are the types of jobRecordModel's attributes.
var jobRecordAttrTypes = map[string]attr.Type{
	"status":          types.StringType,
	"created_at":      types.StringType,
	"started_at":      types.StringType,
	"completed_at":    types.StringType,
	"expires_at":      types.StringType,
	"queue_position":  types.Int64Type,
	"progress":        types.ObjectType{AttrTypes: progressAttrTypes},
	"outputs":         types.ListType{ElemType: types.ObjectType{AttrTypes: outputAttrTypes}},
	"outputs_omitted": types.Int64Type,
	"error":           types.ObjectType{AttrTypes: jobErrorAttrTypes},
	"metrics":         types.MapType{ElemType: types.Int64Type},
	"urls":            types.ObjectType{AttrTypes: jobURLsAttrTypes},
}

// jobRecordResourceAttributes is the job record in the svc_job resource's schema: read-only, and
// kept from state on an in-place update (keepStateForUnknown).
func jobRecordResourceAttributes() map[string]rschema.Attribute {
	return keepStateForUnknown(map[string]rschema.Attribute{
		"status":         rschema.StringAttribute{Computed: true, MarkdownDescription: jobStatusDoc},
		"created_at":     rschema.StringAttribute{Computed: true, MarkdownDescription: jobCreatedAtDoc},
		"started_at":     rschema.StringAttribute{Computed: true, MarkdownDescription: jobStartedAtDoc},
		"completed_at":   rschema.StringAttribute{Computed: true, MarkdownDescription: jobCompletedAtDoc},
		"expires_at":     rschema.StringAttribute{Computed: true, MarkdownDescription: jobExpiresAtDoc},
		"queue_position": rschema.Int64Attribute{Computed: true, MarkdownDescription: jobQueuePositionDoc},
		"progress": rschema.SingleNestedAttribute{Computed: true, MarkdownDescription: jobProgressDoc, Attributes: map[string]rschema.Attribute{
			"value":              rschema.Float64Attribute{Computed: true, MarkdownDescription: progressValueDoc},
			"nodes_done":         rschema.Int64Attribute{Computed: true, MarkdownDescription: progressNodesDoneDoc},
			"nodes_total":        rschema.Int64Attribute{Computed: true, MarkdownDescription: progressNodesTotalDoc},
			"current_node":       rschema.StringAttribute{Computed: true, MarkdownDescription: progressCurrentNodeDoc},
			"current_node_class": rschema.StringAttribute{Computed: true, MarkdownDescription: progressCurrentNodeClassDoc},
			"step":               rschema.Int64Attribute{Computed: true, MarkdownDescription: progressStepDoc},
			"steps":              rschema.Int64Attribute{Computed: true, MarkdownDescription: progressStepsDoc},
			"message":            rschema.StringAttribute{Computed: true, MarkdownDescription: progressMessageDoc},
		}},
		"outputs": rschema.ListNestedAttribute{Computed: true, MarkdownDescription: jobOutputsDoc, NestedObject: rschema.NestedAttributeObject{
			Attributes: map[string]rschema.Attribute{
				"node_id":        rschema.StringAttribute{Computed: true, MarkdownDescription: outputNodeIDDoc},
				"name":           rschema.StringAttribute{Computed: true, MarkdownDescription: outputNameDoc},
				"type":           rschema.StringAttribute{Computed: true, MarkdownDescription: outputTypeDoc},
				"content_type":   rschema.StringAttribute{Computed: true, MarkdownDescription: outputContentTypeDoc},
				"size_bytes":     rschema.Int64Attribute{Computed: true, MarkdownDescription: outputSizeBytesDoc},
				"id":             rschema.StringAttribute{Computed: true, MarkdownDescription: outputIDDoc},
				"hash":           rschema.StringAttribute{Computed: true, MarkdownDescription: outputHashDoc},
				"url":            rschema.StringAttribute{Computed: true, MarkdownDescription: outputURLDoc},
				"url_expires_at": rschema.StringAttribute{Computed: true, MarkdownDescription: outputURLExpiresAtDoc},
				"job_id":         rschema.StringAttribute{Computed: true, MarkdownDescription: outputJobIDDoc},
			},
		}},
		"outputs_omitted": rschema.Int64Attribute{Computed: true, MarkdownDescription: jobOutputsOmittedDoc},
		"error": rschema.SingleNestedAttribute{Computed: true, MarkdownDescription: jobErrorDoc, Attributes: map[string]rschema.Attribute{
			"code":       rschema.StringAttribute{Computed: true, MarkdownDescription: jobErrorCodeDoc},
			"message":    rschema.StringAttribute{Computed: true, MarkdownDescription: jobErrorMessageDoc},
			"node_id":    rschema.StringAttribute{Computed: true, MarkdownDescription: jobErrorNodeIDDoc},
			"class_type": rschema.StringAttribute{Computed: true, MarkdownDescription: jobErrorClassTypeDoc},
			"traceback":  rschema.StringAttribute{Computed: true, MarkdownDescription: jobErrorTracebackDoc},
		}},
		"metrics": rschema.MapAttribute{Computed: true, ElementType: types.Int64Type, MarkdownDescription: jobMetricsDoc},
		"urls": rschema.SingleNestedAttribute{Computed: true, MarkdownDescription: jobURLsDoc, Attributes: map[string]rschema.Attribute{
			"self":   rschema.StringAttribute{Computed: true, MarkdownDescription: jobURLsSelfDoc},
			"events": rschema.StringAttribute{Computed: true, MarkdownDescription: jobURLsEventsDoc},
			"cancel": rschema.StringAttribute{Computed: true, MarkdownDescription: jobURLsCancelDoc},
			"logs":   rschema.StringAttribute{Computed: true, MarkdownDescription: jobURLsLogsDoc},
		}},
	})
}

// jobRecordDataSourceAttributes is the job record in the svc_job data source's schema: the same
// attributes as jobRecordResourceAttributes, in the data source schema's types.
func jobRecordDataSourceAttributes() map[string]dschema.Attribute {
	return map[string]dschema.Attribute{
		"status":         dschema.StringAttribute{Computed: true, MarkdownDescription: jobStatusDoc},
		"created_at":     dschema.StringAttribute{Computed: true, MarkdownDescription: jobCreatedAtDoc},
		"started_at":     dschema.StringAttribute{Computed: true, MarkdownDescription: jobStartedAtDoc},
		"completed_at":   dschema.StringAttribute{Computed: true, MarkdownDescription: jobCompletedAtDoc},
		"expires_at":     dschema.StringAttribute{Computed: true, MarkdownDescription: jobExpiresAtDoc},
		"queue_position": dschema.Int64Attribute{Computed: true, MarkdownDescription: jobQueuePositionDoc},
		"progress": dschema.SingleNestedAttribute{Computed: true, MarkdownDescription: jobProgressDoc, Attributes: map[string]dschema.Attribute{
			"value":              dschema.Float64Attribute{Computed: true, MarkdownDescription: progressValueDoc},
			"nodes_done":         dschema.Int64Attribute{Computed: true, MarkdownDescription: progressNodesDoneDoc},
			"nodes_total":        dschema.Int64Attribute{Computed: true, MarkdownDescription: progressNodesTotalDoc},
			"current_node":       dschema.StringAttribute{Computed: true, MarkdownDescription: progressCurrentNodeDoc},
			"current_node_class": dschema.StringAttribute{Computed: true, MarkdownDescription: progressCurrentNodeClassDoc},
			"step":               dschema.Int64Attribute{Computed: true, MarkdownDescription: progressStepDoc},
			"steps":              dschema.Int64Attribute{Computed: true, MarkdownDescription: progressStepsDoc},
			"message":            dschema.StringAttribute{Computed: true, MarkdownDescription: progressMessageDoc},
		}},
		"outputs": dschema.ListNestedAttribute{Computed: true, MarkdownDescription: jobOutputsDoc, NestedObject: dschema.NestedAttributeObject{
			Attributes: map[string]dschema.Attribute{
				"node_id":        dschema.StringAttribute{Computed: true, MarkdownDescription: outputNodeIDDoc},
				"name":           dschema.StringAttribute{Computed: true, MarkdownDescription: outputNameDoc},
				"type":           dschema.StringAttribute{Computed: true, MarkdownDescription: outputTypeDoc},
				"content_type":   dschema.StringAttribute{Computed: true, MarkdownDescription: outputContentTypeDoc},
				"size_bytes":     dschema.Int64Attribute{Computed: true, MarkdownDescription: outputSizeBytesDoc},
				"id":             dschema.StringAttribute{Computed: true, MarkdownDescription: outputIDDoc},
				"hash":           dschema.StringAttribute{Computed: true, MarkdownDescription: outputHashDoc},
				"url":            dschema.StringAttribute{Computed: true, MarkdownDescription: outputURLDoc},
				"url_expires_at": dschema.StringAttribute{Computed: true, MarkdownDescription: outputURLExpiresAtDoc},
				"job_id":         dschema.StringAttribute{Computed: true, MarkdownDescription: outputJobIDDoc},
			},
		}},
		"outputs_omitted": dschema.Int64Attribute{Computed: true, MarkdownDescription: jobOutputsOmittedDoc},
		"error": dschema.SingleNestedAttribute{Computed: true, MarkdownDescription: jobErrorDoc, Attributes: map[string]dschema.Attribute{
			"code":       dschema.StringAttribute{Computed: true, MarkdownDescription: jobErrorCodeDoc},
			"message":    dschema.StringAttribute{Computed: true, MarkdownDescription: jobErrorMessageDoc},
			"node_id":    dschema.StringAttribute{Computed: true, MarkdownDescription: jobErrorNodeIDDoc},
			"class_type": dschema.StringAttribute{Computed: true, MarkdownDescription: jobErrorClassTypeDoc},
			"traceback":  dschema.StringAttribute{Computed: true, MarkdownDescription: jobErrorTracebackDoc},
		}},
		"metrics": dschema.MapAttribute{Computed: true, ElementType: types.Int64Type, MarkdownDescription: jobMetricsDoc},
		"urls": dschema.SingleNestedAttribute{Computed: true, MarkdownDescription: jobURLsDoc, Attributes: map[string]dschema.Attribute{
			"self":   dschema.StringAttribute{Computed: true, MarkdownDescription: jobURLsSelfDoc},
			"events": dschema.StringAttribute{Computed: true, MarkdownDescription: jobURLsEventsDoc},
			"cancel": dschema.StringAttribute{Computed: true, MarkdownDescription: jobURLsCancelDoc},
			"logs":   dschema.StringAttribute{Computed: true, MarkdownDescription: jobURLsLogsDoc},
		}},
	}
}

// What the job record's attributes hold, the same words in the resource's and the data source's
// schemas.
const (
	jobStatusDoc        = "Job status: `queued`, `running`, `succeeded`, `canceling`, `canceled`, `failed` or `expired`."
	jobCreatedAtDoc     = "When the job was recorded (RFC 3339, as the service wrote it)."
	jobStartedAtDoc     = "When the job started running; null until then."
	jobCompletedAtDoc   = "When the job reached a terminal status; null until then."
	jobExpiresAtDoc     = "Retention deadline: the job and its outputs are retrievable until then."
	jobQueuePositionDoc = "Position in the queue while queued; null otherwise."
	jobProgressDoc      = "Latest progress snapshot; null until the job runs."
	jobOutputsDoc       = "Committed outputs, in the order the service lists them. Each is an asset. " +
		"An asset listed twice is kept once, and at most the first 1000 are kept: every value in state is walked at " +
		"every plan, so a record with tens of thousands of outputs would make each plan take minutes. `outputs_omitted` " +
		"counts those left out; the service still holds them."
	jobOutputsOmittedDoc = "How many distinct outputs the service listed beyond the 1000 kept in " +
		"`outputs` (0 when all are there). Creating an `svc_job` warns when it is not 0."
	jobErrorDoc = "Execution failure detail; null unless the job failed. Text is bounded in state: a " +
		"message to its first 8 KiB, a traceback to its last 64 KiB."
	jobMetricsDoc = "Timings in milliseconds (`queue_ms`, `execution_ms`, ...). A metric the service has not measured yet is left out."
	jobURLsDoc    = "The job's links, resolved to absolute URLs."
)

// progressModel is the job's latest progress snapshot.
type progressModel struct {
	Value            types.Float64 `tfsdk:"value"`
	NodesDone        types.Int64   `tfsdk:"nodes_done"`
	NodesTotal       types.Int64   `tfsdk:"nodes_total"`
	CurrentNode      types.String  `tfsdk:"current_node"`
	CurrentNodeClass types.String  `tfsdk:"current_node_class"`
	Step             types.Int64   `tfsdk:"step"`
	Steps            types.Int64   `tfsdk:"steps"`
	Message          types.String  `tfsdk:"message"`
}

var progressAttrTypes = map[string]attr.Type{
	"value":              types.Float64Type,
	"nodes_done":         types.Int64Type,
	"nodes_total":        types.Int64Type,
	"current_node":       types.StringType,
	"current_node_class": types.StringType,
	"step":               types.Int64Type,
	"steps":              types.Int64Type,
	"message":            types.StringType,
}

const (
	progressValueDoc            = "Overall fraction done, 0 to 1, weighted by nodes and sampler steps."
	progressNodesDoneDoc        = "Nodes finished."
	progressNodesTotalDoc       = "Nodes to run."
	progressCurrentNodeDoc      = "Id of the node running now."
	progressCurrentNodeClassDoc = "Class of the node running now."
	progressStepDoc             = "Sampler step of the current node."
	progressStepsDoc            = "Sampler steps of the current node."
	progressMessageDoc          = "Progress message."
)

// outputModel is one committed output of the job: an asset.
type outputModel struct {
	NodeID       types.String `tfsdk:"node_id"`
	Name         types.String `tfsdk:"name"`
	Type         types.String `tfsdk:"type"`
	ContentType  types.String `tfsdk:"content_type"`
	SizeBytes    types.Int64  `tfsdk:"size_bytes"`
	ID           types.String `tfsdk:"id"`
	Hash         types.String `tfsdk:"hash"`
	URL          types.String `tfsdk:"url"`
	URLExpiresAt types.String `tfsdk:"url_expires_at"`
	JobID        types.String `tfsdk:"job_id"`
}

var outputAttrTypes = map[string]attr.Type{
	"node_id":        types.StringType,
	"name":           types.StringType,
	"type":           types.StringType,
	"content_type":   types.StringType,
	"size_bytes":     types.Int64Type,
	"id":             types.StringType,
	"hash":           types.StringType,
	"url":            types.StringType,
	"url_expires_at": types.StringType,
	"job_id":         types.StringType,
}

const (
	outputNodeIDDoc      = "Workflow node that produced the file; empty when the worker named none."
	outputNameDoc        = "File name."
	outputTypeDoc        = "`image`, `video`, `audio`, `text`, `file` or `latent`."
	outputContentTypeDoc = "Media type."
	outputSizeBytesDoc   = "Size in bytes."
	outputIDDoc          = "Asset id: use it with `svc_output_file.asset_id` or `provider::svc::asset_ref` to chain jobs."
	outputHashDoc        = "`blake3:<hex>` of the content; null until the service has computed it."
	outputURLDoc         = "Signed download URL (absolute). It expires: prefer `id` for later downloads. " +
		"On the resource, a refresh keeps the URL state holds while it stays valid for 5 more minutes, so a service " +
		"that signs a new URL on every read does not change it (and what is fed from it) at every plan."
	outputURLExpiresAtDoc = "When `url` stops working."
	outputJobIDDoc        = "Id of the producing job, when the service names it."
)

// jobErrorModel is the job's execution failure detail.
type jobErrorModel struct {
	Code      types.String `tfsdk:"code"`
	Message   types.String `tfsdk:"message"`
	NodeID    types.String `tfsdk:"node_id"`
	ClassType types.String `tfsdk:"class_type"`
	Traceback types.String `tfsdk:"traceback"`
}

var jobErrorAttrTypes = map[string]attr.Type{
	"code":       types.StringType,
	"message":    types.StringType,
	"node_id":    types.StringType,
	"class_type": types.StringType,
	"traceback":  types.StringType,
}

const (
	jobErrorCodeDoc      = "Error code, e.g. `node_execution_error`."
	jobErrorMessageDoc   = "Error message."
	jobErrorNodeIDDoc    = "Failing node id."
	jobErrorClassTypeDoc = "Failing node class."
	jobErrorTracebackDoc = "Traceback, when the service returns one."
)

// jobURLsModel holds the job's links.
type jobURLsModel struct {
	Self   types.String `tfsdk:"self"`
	Events types.String `tfsdk:"events"`
	Cancel types.String `tfsdk:"cancel"`
	Logs   types.String `tfsdk:"logs"`
}

var jobURLsAttrTypes = map[string]attr.Type{
	"self":   types.StringType,
	"events": types.StringType,
	"cancel": types.StringType,
	"logs":   types.StringType,
}

const (
	jobURLsSelfDoc   = "The job record."
	jobURLsEventsDoc = "The live event stream."
	jobURLsCancelDoc = "Cancellation."
	jobURLsLogsDoc   = "Where the run's logs are read; null when the surface captures no logs."
)

// newJobRecordModel converts a service record into attribute values.
func newJobRecordModel(ctx context.Context, job *client.Job) (jobRecordModel, diag.Diagnostics) {
	var diags, d diag.Diagnostics
	diags.Append(recordWarnings(job)...)
	m := jobRecordModel{
		Status:        types.StringValue(job.Status),
		CreatedAt:     types.StringValue(job.CreatedAt),
		StartedAt:     types.StringPointerValue(job.StartedAt),
		CompletedAt:   types.StringPointerValue(job.CompletedAt),
		ExpiresAt:     types.StringValue(job.ExpiresAt),
		QueuePosition: types.Int64PointerValue(job.QueuePosition),
		Progress:      types.ObjectNull(progressAttrTypes),
		Error:         types.ObjectNull(jobErrorAttrTypes),
	}
	if p := job.Progress; p != nil {
		m.Progress, d = types.ObjectValueFrom(ctx, progressAttrTypes, progressModel{
			Value:            types.Float64Value(p.Value),
			NodesDone:        types.Int64Value(p.NodesDone),
			NodesTotal:       types.Int64Value(p.NodesTotal),
			CurrentNode:      types.StringPointerValue(p.CurrentNode),
			CurrentNodeClass: types.StringPointerValue(p.CurrentNodeClass),
			Step:             types.Int64PointerValue(p.Step),
			Steps:            types.Int64PointerValue(p.Steps),
			Message:          types.StringPointerValue(p.Message),
		})
		diags.Append(d...)
	}
	var omitted int
	m.Outputs, omitted, d = outputsValue(ctx, job.Outputs)
	m.OutputsOmitted = types.Int64Value(int64(omitted))
	diags.Append(d...)
	if e := job.Error; e != nil {
		m.Error, d = types.ObjectValueFrom(ctx, jobErrorAttrTypes, jobErrorModel{
			Code:      types.StringValue(boundText(e.Code)),
			Message:   types.StringValue(boundText(e.Message)),
			NodeID:    types.StringPointerValue(boundTextPtr(e.NodeID)),
			ClassType: types.StringPointerValue(boundTextPtr(e.ClassType)),
			Traceback: types.StringPointerValue(boundTracebackPtr(e.Traceback)),
		})
		diags.Append(d...)
	}
	metrics := map[string]int64{}
	for k, v := range job.Metrics {
		if v != nil {
			metrics[k] = *v
		}
	}
	m.Metrics, d = types.MapValueFrom(ctx, types.Int64Type, metrics)
	diags.Append(d...)
	m.URLs, d = types.ObjectValueFrom(ctx, jobURLsAttrTypes, jobURLsModel{
		Self:   types.StringValue(job.URLs.Self),
		Events: types.StringValue(job.URLs.Events),
		Cancel: types.StringValue(job.URLs.Cancel),
		Logs:   optString(job.URLs.Logs), // null when the surface captures no logs
	})
	diags.Append(d...)
	return m, diags
}

// outputsValue is the outputs list kept in state: each asset once, at most maxOutputsInState,
// every text bounded; omitted counts the distinct outputs left out.
func outputsValue(ctx context.Context, outs []client.Output) (list types.List, omitted int, diags diag.Diagnostics) {
	kept, omitted := uniqueBounded(outs, func(o client.Output) string { return o.ID })
	outputs := make([]outputModel, 0, len(kept))
	for _, o := range kept {
		outputs = append(outputs, outputModel{
			NodeID:       types.StringValue(boundText(o.NodeID)),
			Name:         types.StringValue(boundText(o.Name)),
			Type:         types.StringValue(boundText(o.Type)),
			ContentType:  types.StringValue(boundText(o.ContentType)),
			SizeBytes:    types.Int64Value(o.SizeBytes),
			ID:           types.StringValue(boundText(o.ID)),
			Hash:         types.StringPointerValue(boundTextPtr(o.Hash)),
			URL:          types.StringValue(boundText(o.URL)),
			URLExpiresAt: types.StringValue(boundText(o.URLExpiresAt)),
			JobID:        types.StringPointerValue(boundTextPtr(o.JobID)),
		})
	}
	list, diags = types.ListValueFrom(ctx, types.ObjectType{AttrTypes: outputAttrTypes}, outputs)
	return list, omitted, diags
}

// warnOmittedOutputs says, once the job is done, that state lists only some of its outputs.
func warnOmittedOutputs(diags *diag.Diagnostics, m jobRecordModel, jobID string) {
	if n := m.OutputsOmitted.ValueInt64(); n > 0 {
		diags.AddWarning("Not every output is in state", fmt.Sprintf("Job %s listed %d more distinct outputs than the %d "+
			"kept in outputs; outputs_omitted counts them. They stay on the service until the job expires.", jobID, n, maxOutputsInState))
	}
}

// recordWarnings reports the values of the job's record that did not fit their field: each was
// left empty and the rest of the record kept, so the job (succeeded, say) is neither lost nor
// taken for failed over one value.
func recordWarnings(job *client.Job) diag.Diagnostics {
	var diags diag.Diagnostics
	if len(job.DecodeWarnings) > 0 {
		diags.AddWarning("Part of the job record was left out",
			fmt.Sprintf("The service's record of job %s held values that do not fit their attribute; each was left "+
				"empty and the rest of the record kept:\n  %s", job.ID, strings.Join(job.DecodeWarnings, "\n  ")))
	}
	return diags
}

// links returns the job's links held in state (zero values when there are none yet).
func (m jobRecordModel) links(ctx context.Context) jobURLsModel {
	var u jobURLsModel
	if m.URLs.IsNull() || m.URLs.IsUnknown() {
		return u
	}
	_ = m.URLs.As(ctx, &u, basetypes.ObjectAsOptions{})
	return u
}

// urlKeepMargin is how long a signed URL held in state must stay valid to be kept on refresh.
const urlKeepMargin = 5 * time.Minute

// keepSignedURLs keeps, for each output whose asset and URL path are unchanged, the signed URL
// that state holds while it stays valid for at least urlKeepMargin. A service may sign a fresh
// URL on every read; without this, outputs[*].url would change at every refresh and every
// resource fed from it would plan an update. Once the held URL nears its expiry, the new one is
// taken.
func keepSignedURLs(ctx context.Context, held types.List, job *client.Job, now time.Time) {
	var prev []outputModel
	if held.IsNull() || held.IsUnknown() || held.ElementsAs(ctx, &prev, false).HasError() {
		return
	}
	byAsset := make(map[string]outputModel, len(prev))
	for _, o := range prev {
		byAsset[o.ID.ValueString()] = o
	}
	for i := range job.Outputs {
		o := &job.Outputs[i]
		p, ok := byAsset[o.ID]
		if !ok || p.URL.ValueString() == o.URL || !sameURLPath(p.URL.ValueString(), o.URL) {
			continue
		}
		exp, err := time.Parse(time.RFC3339Nano, p.URLExpiresAt.ValueString())
		if err != nil || exp.Sub(now) < urlKeepMargin {
			continue
		}
		o.URL, o.URLExpiresAt = p.URL.ValueString(), p.URLExpiresAt.ValueString()
	}
}

// sameURLPath reports whether two URLs name the same resource: scheme, host and path equal,
// whatever their queries (signatures, expiry) say.
func sameURLPath(a, b string) bool {
	ua, errA := url.Parse(a)
	ub, errB := url.Parse(b)
	return errA == nil && errB == nil && ua.Scheme == ub.Scheme && strings.EqualFold(ua.Host, ub.Host) && ua.EscapedPath() == ub.EscapedPath()
}
