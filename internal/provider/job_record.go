package provider

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"

	"github.com/svc-org/terraform-provider-svc/internal/client"
)

// jobFields are the job record's attributes, shared by the svc_job resource and data source.
var jobFields = []computedField{
	{name: "status", kind: kindString, desc: "Job status: `queued`, `running`, `succeeded`, `canceling`, `canceled`, `failed` or `expired`."},
	{name: "created_at", kind: kindString, desc: "When the job was recorded (RFC 3339, as the service wrote it)."},
	{name: "started_at", kind: kindString, desc: "When the job started running; null until then."},
	{name: "completed_at", kind: kindString, desc: "When the job reached a terminal status; null until then."},
	{name: "expires_at", kind: kindString, desc: "Retention deadline: the job and its outputs are retrievable until then."},
	{name: "queue_position", kind: kindInt64, desc: "Position in the queue while queued; null otherwise."},
	{name: "progress", kind: kindObject, desc: "Latest progress snapshot; null until the job runs.", nested: []computedField{
		{name: "value", kind: kindFloat64, desc: "Overall fraction done, 0 to 1, weighted by nodes and sampler steps."},
		{name: "nodes_done", kind: kindInt64, desc: "Nodes finished."},
		{name: "nodes_total", kind: kindInt64, desc: "Nodes to run."},
		{name: "current_node", kind: kindString, desc: "Id of the node running now."},
		{name: "current_node_class", kind: kindString, desc: "Class of the node running now."},
		{name: "step", kind: kindInt64, desc: "Sampler step of the current node."},
		{name: "steps", kind: kindInt64, desc: "Sampler steps of the current node."},
		{name: "message", kind: kindString, desc: "Progress message."},
	}},
	{name: "outputs", kind: kindObjectList, desc: "Committed outputs, in the order the service lists them. Each is an asset. " +
		"An asset listed twice is kept once, and at most the first 1000 are kept: every value in state is walked at " +
		"every plan, so a record with tens of thousands of outputs would make each plan take minutes. `outputs_omitted` " +
		"counts those left out; the service still holds them.", nested: []computedField{
		{name: "node_id", kind: kindString, desc: "Workflow node that produced the file; empty when the worker named none."},
		{name: "name", kind: kindString, desc: "File name."},
		{name: "type", kind: kindString, desc: "`image`, `video`, `audio`, `text`, `file` or `latent`."},
		{name: "content_type", kind: kindString, desc: "Media type."},
		{name: "size_bytes", kind: kindInt64, desc: "Size in bytes."},
		{name: "id", kind: kindString, desc: "Asset id: use it with `svc_output_file.asset_id` or `provider::svc::asset_ref` to chain jobs."},
		{name: "hash", kind: kindString, desc: "`blake3:<hex>` of the content; null until the service has computed it."},
		{name: "url", kind: kindString, desc: "Signed download URL (absolute). It expires: prefer `id` for later downloads. " +
			"On the resource, a refresh keeps the URL state holds while it stays valid for 5 more minutes, so a service " +
			"that signs a new URL on every read does not change it (and what is fed from it) at every plan."},
		{name: "url_expires_at", kind: kindString, desc: "When `url` stops working."},
		{name: "job_id", kind: kindString, desc: "Id of the producing job, when the service names it."},
	}},
	{name: "outputs_omitted", kind: kindInt64, desc: "How many distinct outputs the service listed beyond the 1000 kept in " +
		"`outputs` (0 when all are there). Creating an `svc_job` warns when it is not 0."},
	{name: "error", kind: kindObject, desc: "Execution failure detail; null unless the job failed. Text is bounded in state: a " +
		"message to its first 8 KiB, a traceback to its last 64 KiB.", nested: []computedField{
		{name: "code", kind: kindString, desc: "Error code, e.g. `node_execution_error`."},
		{name: "message", kind: kindString, desc: "Error message."},
		{name: "node_id", kind: kindString, desc: "Failing node id."},
		{name: "class_type", kind: kindString, desc: "Failing node class."},
		{name: "traceback", kind: kindString, desc: "Traceback, when the service returns one."},
	}},
	{name: "metrics", kind: kindInt64Map, desc: "Timings in milliseconds (`queue_ms`, `execution_ms`, ...). A metric the service has not measured yet is left out."},
	{name: "urls", kind: kindObject, desc: "The job's links, resolved to absolute URLs.", nested: []computedField{
		{name: "self", kind: kindString, desc: "The job record."},
		{name: "events", kind: kindString, desc: "The live event stream."},
		{name: "cancel", kind: kindString, desc: "Cancellation."},
		{name: "logs", kind: kindString, desc: "Where the run's logs are read; null when the surface captures no logs."},
	}},
}

var (
	progressAttrTypes = nestedAttrTypes(jobFields, "progress")
	outputAttrTypes   = nestedAttrTypes(jobFields, "outputs")
	jobErrorAttrTypes = nestedAttrTypes(jobFields, "error")
	jobURLsAttrTypes  = nestedAttrTypes(jobFields, "urls")
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

type jobErrorModel struct {
	Code      types.String `tfsdk:"code"`
	Message   types.String `tfsdk:"message"`
	NodeID    types.String `tfsdk:"node_id"`
	ClassType types.String `tfsdk:"class_type"`
	Traceback types.String `tfsdk:"traceback"`
}

type jobURLsModel struct {
	Self   types.String `tfsdk:"self"`
	Events types.String `tfsdk:"events"`
	Cancel types.String `tfsdk:"cancel"`
	Logs   types.String `tfsdk:"logs"`
}

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
	logs := types.StringNull()
	if job.URLs.Logs != "" {
		logs = types.StringValue(job.URLs.Logs)
	}
	m.URLs, d = types.ObjectValueFrom(ctx, jobURLsAttrTypes, jobURLsModel{
		Self:   types.StringValue(job.URLs.Self),
		Events: types.StringValue(job.URLs.Events),
		Cancel: types.StringValue(job.URLs.Cancel),
		Logs:   logs,
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
