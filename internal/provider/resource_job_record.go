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
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/svc-org/terraform-provider-svc/internal/client"
)

// jobRecordAttrTypes are the types of the job record's attributes, the same in svc_job's resource
// and data source.
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

// The Terraform types of the job record's nested values, derived once from their attribute types.
var (
	progressTerraformType = types.ObjectType{AttrTypes: progressAttrTypes}.TerraformType(context.Background())
	outputsTerraformType  = types.ListType{ElemType: types.ObjectType{AttrTypes: outputAttrTypes}}.TerraformType(context.Background())
	outputTerraformType   = outputsTerraformType.(tftypes.List).ElementType
	jobErrorTerraformType = types.ObjectType{AttrTypes: jobErrorAttrTypes}.TerraformType(context.Background())
	metricsTerraformType  = types.MapType{ElemType: types.Int64Type}.TerraformType(context.Background())
	jobURLsTerraformType  = types.ObjectType{AttrTypes: jobURLsAttrTypes}.TerraformType(context.Background())
)

// putJobRecord writes the service's record of job into attrs, one Terraform value per attribute
// of the job record (jobRecordAttrTypes), and returns how many distinct outputs were left out of
// the outputs kept. It is the one conversion of a record into state, for svc_job's resource and
// data source alike (withJobRecord).
// Values are built directly, without reflection: a batch of jobs converts one record per job.
func putJobRecord(attrs map[string]tftypes.Value, job *client.Job) (omitted int) {
	attrs["status"] = tftypes.NewValue(tftypes.String, job.Status)
	attrs["created_at"] = tftypes.NewValue(tftypes.String, job.CreatedAt)
	attrs["started_at"] = tftypes.NewValue(tftypes.String, job.StartedAt)
	attrs["completed_at"] = tftypes.NewValue(tftypes.String, job.CompletedAt)
	attrs["expires_at"] = tftypes.NewValue(tftypes.String, job.ExpiresAt)
	attrs["queue_position"] = tftypes.NewValue(tftypes.Number, job.QueuePosition)
	attrs["progress"] = progressTerraformValue(job.Progress)
	attrs["outputs"], omitted = outputsTerraformValue(job.Outputs)
	attrs["outputs_omitted"] = tftypes.NewValue(tftypes.Number, int64(omitted))
	attrs["error"] = jobErrorTerraformValue(job.Error)
	attrs["metrics"] = metricsTerraformValue(job.Metrics)
	attrs["urls"] = tftypes.NewValue(jobURLsTerraformType, map[string]tftypes.Value{
		"self":   tftypes.NewValue(tftypes.String, job.URLs.Self),
		"events": tftypes.NewValue(tftypes.String, job.URLs.Events),
		"cancel": tftypes.NewValue(tftypes.String, job.URLs.Cancel),
		"logs":   tftypes.NewValue(tftypes.String, emptyAsNull(job.URLs.Logs)), // null when the surface captures no logs
	})
	return omitted
}

// progressTerraformValue is the progress snapshot in state; null until the job runs.
func progressTerraformValue(p *client.Progress) tftypes.Value {
	if p == nil {
		return tftypes.NewValue(progressTerraformType, nil)
	}
	return tftypes.NewValue(progressTerraformType, map[string]tftypes.Value{
		"value":              tftypes.NewValue(tftypes.Number, p.Value),
		"nodes_done":         tftypes.NewValue(tftypes.Number, p.NodesDone),
		"nodes_total":        tftypes.NewValue(tftypes.Number, p.NodesTotal),
		"current_node":       tftypes.NewValue(tftypes.String, p.CurrentNode),
		"current_node_class": tftypes.NewValue(tftypes.String, p.CurrentNodeClass),
		"step":               tftypes.NewValue(tftypes.Number, p.Step),
		"steps":              tftypes.NewValue(tftypes.Number, p.Steps),
		"message":            tftypes.NewValue(tftypes.String, p.Message),
	})
}

// outputsTerraformValue is the outputs list kept in state: each asset once, at most
// maxOutputsInState, every text bounded; omitted counts the distinct outputs left out.
func outputsTerraformValue(outs []client.Output) (list tftypes.Value, omitted int) {
	kept, omitted := uniqueBounded(outs, func(o client.Output) string { return o.ID })
	elems := make([]tftypes.Value, 0, len(kept))
	for _, o := range kept {
		elems = append(elems, tftypes.NewValue(outputTerraformType, map[string]tftypes.Value{
			"node_id":        tftypes.NewValue(tftypes.String, boundText(o.NodeID)),
			"name":           tftypes.NewValue(tftypes.String, boundText(o.Name)),
			"type":           tftypes.NewValue(tftypes.String, boundText(o.Type)),
			"content_type":   tftypes.NewValue(tftypes.String, boundText(o.ContentType)),
			"size_bytes":     tftypes.NewValue(tftypes.Number, o.SizeBytes),
			"id":             tftypes.NewValue(tftypes.String, boundText(o.ID)),
			"hash":           tftypes.NewValue(tftypes.String, boundTextPtr(o.Hash)),
			"url":            tftypes.NewValue(tftypes.String, boundText(o.URL)),
			"url_expires_at": tftypes.NewValue(tftypes.String, boundText(o.URLExpiresAt)),
			"job_id":         tftypes.NewValue(tftypes.String, boundTextPtr(o.JobID)),
		}))
	}
	return tftypes.NewValue(outputsTerraformType, elems), omitted
}

// jobErrorTerraformValue is the failure detail in state, its texts bounded; null unless the job
// failed.
func jobErrorTerraformValue(e *client.JobError) tftypes.Value {
	if e == nil {
		return tftypes.NewValue(jobErrorTerraformType, nil)
	}
	return tftypes.NewValue(jobErrorTerraformType, map[string]tftypes.Value{
		"code":       tftypes.NewValue(tftypes.String, boundText(e.Code)),
		"message":    tftypes.NewValue(tftypes.String, boundText(e.Message)),
		"node_id":    tftypes.NewValue(tftypes.String, boundTextPtr(e.NodeID)),
		"class_type": tftypes.NewValue(tftypes.String, boundTextPtr(e.ClassType)),
		"traceback":  tftypes.NewValue(tftypes.String, boundTracebackPtr(e.Traceback)),
	})
}

// metricsTerraformValue is the metrics map in state: a metric the service has not measured yet
// (null) is left out, and no metric at all is an empty map.
func metricsTerraformValue(metrics map[string]*int64) tftypes.Value {
	elems := make(map[string]tftypes.Value, len(metrics))
	for k, v := range metrics {
		if v != nil {
			elems[k] = tftypes.NewValue(tftypes.Number, *v)
		}
	}
	return tftypes.NewValue(metricsTerraformType, elems)
}

// emptyAsNull is s, or nil (a null value) when s is empty.
func emptyAsNull(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// warnOmittedOutputs says, once the job is done, that state lists only some of its outputs.
func warnOmittedOutputs(diags *diag.Diagnostics, omitted int64, jobID string) {
	if omitted > 0 {
		diags.AddWarning("Not every output is in state", fmt.Sprintf("Job %s listed %d more distinct outputs than the %d "+
			"kept in outputs; outputs_omitted counts them. They stay on the service until the job expires.", jobID, omitted, maxOutputsInState))
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

// urlKeepMargin is how long a signed URL held in state must stay valid to be kept on refresh.
const urlKeepMargin = 5 * time.Minute

// heldJobLinks are the job's links in svc_job's held values (empty when there are none yet).
func heldJobLinks(held map[string]tftypes.Value) client.JobURLs {
	urls, ok := objectAttrs(held["urls"])
	if !ok {
		return client.JobURLs{}
	}
	return client.JobURLs{Self: stringAttr(urls, "self"), Events: stringAttr(urls, "events"),
		Cancel: stringAttr(urls, "cancel"), Logs: stringAttr(urls, "logs")}
}

// keepSignedURLs keeps, for each output whose asset and URL path are unchanged, the signed URL
// that state holds (held, the outputs list) while it stays valid for at least urlKeepMargin. A
// service may sign a fresh URL on every read; without this, outputs[*].url would change at
// every refresh and every resource fed from it would plan an update. Once the held URL nears
// its expiry, the new one is taken.
func keepSignedURLs(held tftypes.Value, job *client.Job, now time.Time) {
	byAsset, ok := heldSignedURLs(held)
	if !ok {
		return
	}
	for i := range job.Outputs {
		o := &job.Outputs[i]
		p, ok := byAsset[o.ID]
		if !ok || p.url == o.URL || !sameURLPath(p.url, o.URL) {
			continue
		}
		exp, err := time.Parse(time.RFC3339Nano, p.expiresAt)
		if err != nil || exp.Sub(now) < urlKeepMargin {
			continue
		}
		o.URL, o.URLExpiresAt = p.url, p.expiresAt
	}
}

// signedURL is an output's signed URL held in state.
type signedURL struct{ url, expiresAt string }

// heldSignedURLs indexes the held outputs list's signed URLs by asset id; ok is false when the
// list is null, unknown or not a list of objects.
func heldSignedURLs(held tftypes.Value) (byAsset map[string]signedURL, ok bool) {
	var outputs []tftypes.Value
	if !held.IsKnown() || held.IsNull() || held.As(&outputs) != nil {
		return nil, false
	}
	byAsset = make(map[string]signedURL, len(outputs))
	for _, o := range outputs {
		var attrs map[string]tftypes.Value
		if o.As(&attrs) != nil {
			return nil, false
		}
		byAsset[stringAttr(attrs, "id")] = signedURL{url: stringAttr(attrs, "url"), expiresAt: stringAttr(attrs, "url_expires_at")}
	}
	return byAsset, true
}

// sameURLPath reports whether two URLs name the same resource: scheme, host and path equal,
// whatever their queries (signatures, expiry) say.
func sameURLPath(a, b string) bool {
	ua, errA := url.Parse(a)
	ub, errB := url.Parse(b)
	return errA == nil && errB == nil && ua.Scheme == ub.Scheme && strings.EqualFold(ua.Host, ub.Host) && ua.EscapedPath() == ub.EscapedPath()
}
