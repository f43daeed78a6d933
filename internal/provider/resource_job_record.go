package provider

import (
	"context"
	"fmt"
	"maps"
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

// jobRecordAttrTypes are the types of the job record's attributes as the svc_job data source
// reads it, live: everything the service says of the job.
var jobRecordAttrTypes = map[string]attr.Type{
	jobAttrStatus:         types.StringType,
	jobAttrCreatedAt:      types.StringType,
	jobAttrStartedAt:      types.StringType,
	jobAttrCompletedAt:    types.StringType,
	jobAttrExpiresAt:      types.StringType,
	jobAttrQueuePosition:  types.Int64Type,
	jobAttrProgress:       types.ObjectType{AttrTypes: progressAttrTypes},
	jobAttrOutputs:        types.ListType{ElemType: types.ObjectType{AttrTypes: outputAttrTypes}},
	jobAttrOutputsOmitted: types.Int64Type,
	jobAttrError:          types.ObjectType{AttrTypes: jobErrorAttrTypes},
	jobAttrMetrics:        types.MapType{ElemType: types.Int64Type},
	jobAttrURLs:           types.ObjectType{AttrTypes: jobURLsAttrTypes},
}

// jobStateRecordAttrTypes are the part of the job record the svc_job resource keeps in state:
// what a finished job's users need and what lasts (its status, when it ended, until when the
// service keeps it, its outputs and its failure). A batch of finished jobs is kept, locked,
// uploaded and parsed at every command, so the rest is the data source's, which reads it live:
// what describes a run in flight (queue position, progress, links to follow or cancel it), the
// timing of the run (created and started times, metrics), and the count of outputs left out
// (creating the job warns of it).
var jobStateRecordAttrTypes = map[string]attr.Type{
	jobAttrStatus:      jobRecordAttrTypes[jobAttrStatus],
	jobAttrCompletedAt: jobRecordAttrTypes[jobAttrCompletedAt],
	jobAttrExpiresAt:   jobRecordAttrTypes[jobAttrExpiresAt],
	jobAttrOutputs:     jobRecordAttrTypes[jobAttrOutputs],
	jobAttrError:       jobRecordAttrTypes[jobAttrError],
}

// jobRecordResourceAttributes is the job record the svc_job resource keeps
// (jobStateRecordAttrTypes) in its schema: read-only, and kept from state on an in-place update
// (keepStateForUnknown).
func jobRecordResourceAttributes() map[string]rschema.Attribute {
	all := jobRecordAttributes()
	kept := make(map[string]rschema.Attribute, len(jobStateRecordAttrTypes))
	for name := range jobStateRecordAttrTypes {
		kept[name] = all[name]
	}
	return keepStateForUnknown(kept)
}

// jobRecordAttributes is the whole job record (jobRecordAttrTypes) as read-only attributes.
func jobRecordAttributes() map[string]rschema.Attribute {
	return map[string]rschema.Attribute{
		jobAttrStatus:        rschema.StringAttribute{Computed: true, MarkdownDescription: jobStatusDoc},
		jobAttrCreatedAt:     rschema.StringAttribute{Computed: true, MarkdownDescription: jobCreatedAtDoc},
		jobAttrStartedAt:     rschema.StringAttribute{Computed: true, MarkdownDescription: jobStartedAtDoc},
		jobAttrCompletedAt:   rschema.StringAttribute{Computed: true, MarkdownDescription: jobCompletedAtDoc},
		jobAttrExpiresAt:     rschema.StringAttribute{Computed: true, MarkdownDescription: jobExpiresAtDoc},
		jobAttrQueuePosition: rschema.Int64Attribute{Computed: true, MarkdownDescription: jobQueuePositionDoc},
		jobAttrProgress: rschema.SingleNestedAttribute{Computed: true, MarkdownDescription: jobProgressDoc, Attributes: map[string]rschema.Attribute{
			"value":              rschema.Float64Attribute{Computed: true, MarkdownDescription: progressValueDoc},
			"nodes_done":         rschema.Int64Attribute{Computed: true, MarkdownDescription: progressNodesDoneDoc},
			"nodes_total":        rschema.Int64Attribute{Computed: true, MarkdownDescription: progressNodesTotalDoc},
			"current_node":       rschema.StringAttribute{Computed: true, MarkdownDescription: progressCurrentNodeDoc},
			"current_node_class": rschema.StringAttribute{Computed: true, MarkdownDescription: progressCurrentNodeClassDoc},
			"step":               rschema.Int64Attribute{Computed: true, MarkdownDescription: progressStepDoc},
			"steps":              rschema.Int64Attribute{Computed: true, MarkdownDescription: progressStepsDoc},
			"message":            rschema.StringAttribute{Computed: true, MarkdownDescription: progressMessageDoc},
		}},
		jobAttrOutputs: rschema.ListNestedAttribute{Computed: true, MarkdownDescription: jobOutputsDoc, NestedObject: rschema.NestedAttributeObject{
			Attributes: map[string]rschema.Attribute{
				"node_id":      rschema.StringAttribute{Computed: true, MarkdownDescription: outputNodeIDDoc},
				"name":         rschema.StringAttribute{Computed: true, MarkdownDescription: outputNameDoc},
				"type":         rschema.StringAttribute{Computed: true, MarkdownDescription: outputTypeDoc},
				"content_type": rschema.StringAttribute{Computed: true, MarkdownDescription: outputContentTypeDoc},
				"size_bytes":   rschema.Int64Attribute{Computed: true, MarkdownDescription: outputSizeBytesDoc},
				"id":           rschema.StringAttribute{Computed: true, MarkdownDescription: outputIDDoc},
				"hash":         rschema.StringAttribute{Computed: true, MarkdownDescription: outputHashDoc},
				"job_id":       rschema.StringAttribute{Computed: true, MarkdownDescription: outputJobIDDoc},
			},
		}},
		jobAttrOutputsOmitted: rschema.Int64Attribute{Computed: true, MarkdownDescription: jobOutputsOmittedDoc},
		jobAttrError: rschema.SingleNestedAttribute{Computed: true, MarkdownDescription: jobErrorDoc, Attributes: map[string]rschema.Attribute{
			"code":       rschema.StringAttribute{Computed: true, MarkdownDescription: jobErrorCodeDoc},
			"message":    rschema.StringAttribute{Computed: true, MarkdownDescription: jobErrorMessageDoc},
			"node_id":    rschema.StringAttribute{Computed: true, MarkdownDescription: jobErrorNodeIDDoc},
			"class_type": rschema.StringAttribute{Computed: true, MarkdownDescription: jobErrorClassTypeDoc},
			"traceback":  rschema.StringAttribute{Computed: true, MarkdownDescription: jobErrorTracebackDoc},
		}},
		jobAttrMetrics: rschema.MapAttribute{Computed: true, ElementType: types.Int64Type, MarkdownDescription: jobMetricsDoc},
		jobAttrURLs: rschema.SingleNestedAttribute{Computed: true, MarkdownDescription: jobURLsDoc, Attributes: map[string]rschema.Attribute{
			"self":   rschema.StringAttribute{Computed: true, MarkdownDescription: jobURLsSelfDoc},
			"events": rschema.StringAttribute{Computed: true, MarkdownDescription: jobURLsEventsDoc},
			"cancel": rschema.StringAttribute{Computed: true, MarkdownDescription: jobURLsCancelDoc},
			"logs":   rschema.StringAttribute{Computed: true, MarkdownDescription: jobURLsLogsDoc},
		}},
	}
}

// jobRecordDataSourceAttributes is the job record in the svc_job data source's schema: the whole
// record (jobRecordAttributes) in the data source schema's types, and the outputs' signed URLs
// of the read, which the resource does not keep.
func jobRecordDataSourceAttributes() map[string]dschema.Attribute {
	attrs := dataSourceAttributes(jobRecordAttributes())
	outputs := attrs[jobAttrOutputs].(dschema.ListNestedAttribute)
	outputs.NestedObject.Attributes["url"] = dschema.StringAttribute{Computed: true, MarkdownDescription: outputURLDoc}
	outputs.NestedObject.Attributes["url_expires_at"] = dschema.StringAttribute{Computed: true, MarkdownDescription: outputURLExpiresAtDoc}
	attrs[jobAttrOutputs] = outputs
	return attrs
}

// dataSourceAttributes is attrs, read-only resource attributes of the kinds the job record uses,
// as data source attributes: computed, with the same types, nesting and descriptions. Another
// kind is a bug that every test building the data source's schema meets.
func dataSourceAttributes(attrs map[string]rschema.Attribute) map[string]dschema.Attribute {
	out := make(map[string]dschema.Attribute, len(attrs))
	for name, a := range attrs {
		desc := a.GetMarkdownDescription()
		switch a := a.(type) {
		case rschema.StringAttribute:
			out[name] = dschema.StringAttribute{Computed: true, MarkdownDescription: desc}
		case rschema.Int64Attribute:
			out[name] = dschema.Int64Attribute{Computed: true, MarkdownDescription: desc}
		case rschema.Float64Attribute:
			out[name] = dschema.Float64Attribute{Computed: true, MarkdownDescription: desc}
		case rschema.MapAttribute:
			out[name] = dschema.MapAttribute{Computed: true, ElementType: a.ElementType, MarkdownDescription: desc}
		case rschema.SingleNestedAttribute:
			out[name] = dschema.SingleNestedAttribute{Computed: true, MarkdownDescription: desc, Attributes: dataSourceAttributes(a.Attributes)}
		case rschema.ListNestedAttribute:
			out[name] = dschema.ListNestedAttribute{Computed: true, MarkdownDescription: desc,
				NestedObject: dschema.NestedAttributeObject{Attributes: dataSourceAttributes(a.NestedObject.Attributes)}}
		default:
			panic(fmt.Sprintf("job record attribute %s: no data source form of %T", name, a))
		}
	}
	return out
}

// What the job record's attributes hold, the same words in the resource's and the data source's
// schemas.
const (
	jobStatusDoc      = "Job status: `queued`, `running`, `succeeded`, `canceling`, `canceled`, `failed` or `expired`."
	jobCreatedAtDoc   = "When the job was recorded (RFC 3339, in UTC, to the second)."
	jobStartedAtDoc   = "When the job started running (RFC 3339, in UTC, to the second); null until then."
	jobCompletedAtDoc = "When the job reached a terminal status (RFC 3339, in UTC, to the second); null until then."
	jobExpiresAtDoc   = "Retention deadline: the job and its outputs are retrievable until then (RFC 3339, in UTC, " +
		"to the second, truncated: never later than the service's)."
	jobQueuePositionDoc = "Position in the queue while queued; null otherwise, and null once the job has ended."
	jobProgressDoc      = "Latest progress snapshot while the job runs; null until it runs, and null once the job has ended."
	jobOutputsDoc       = "Committed outputs, in the order the service lists them. Each is an asset, downloaded by its `id`. " +
		"An asset listed twice is kept once, and at most the first 1000 are kept: every value in state is walked at " +
		"every plan, so a record with tens of thousands of outputs would make each plan take minutes. Creating an " +
		"`svc_job` warns when some are left out, and the `svc_job` data source's `outputs_omitted` counts them; the " +
		"service still holds them."
	jobOutputsOmittedDoc = "How many distinct outputs the service listed beyond the 1000 kept in " +
		"`outputs` (0 when all are there). Creating an `svc_job` warns when it is not 0."
	jobErrorDoc = "Execution failure detail; null unless the job failed. Text is bounded in state: a " +
		"message to its first 8 KiB, a traceback to its last 64 KiB."
	jobMetricsDoc = "Timings in milliseconds (`queue_ms`, `execution_ms`, ...). A metric the service has not measured yet is left out."
	jobURLsDoc    = "The job's links, resolved to absolute URLs, to follow or cancel it while it runs. `self`, `events` and " +
		"`cancel` are null once the job has ended (an ended job is not followed or cancelled; it is read by its `id`), " +
		"and `urls` is null once the job has ended unless the service offers the run's logs, whose link is kept."
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

// outputAttrTypes are the types of an output's attributes in svc_job's state: what lasts. A
// signed URL is a credential that expires: it is never kept in state, and a download asks the
// asset record for a fresh one.
var outputAttrTypes = map[string]attr.Type{
	"node_id":      types.StringType,
	"name":         types.StringType,
	"type":         types.StringType,
	"content_type": types.StringType,
	"size_bytes":   types.Int64Type,
	"id":           types.StringType,
	"hash":         types.StringType,
	"job_id":       types.StringType,
}

// dataSourceOutputAttrTypes are the types of an output's attributes in the svc_job data source,
// which is read at every plan: outputAttrTypes and the signed URL of the read.
var dataSourceOutputAttrTypes = withAttrTypes(outputAttrTypes, map[string]attr.Type{
	"url":            types.StringType,
	"url_expires_at": types.StringType,
})

// withAttrTypes is base with more attribute types added, base left as it is.
func withAttrTypes(base, more map[string]attr.Type) map[string]attr.Type {
	all := maps.Clone(base)
	maps.Copy(all, more)
	return all
}

const (
	outputNodeIDDoc      = "Workflow node that produced the file; empty when the worker named none."
	outputNameDoc        = "File name."
	outputTypeDoc        = "`image`, `video`, `audio`, `text`, `file` or `latent`."
	outputContentTypeDoc = "Media type."
	outputSizeBytesDoc   = "Size in bytes."
	outputIDDoc          = "Asset id: use it with `svc_output_file.asset_id` or `provider::svc::asset_ref` to chain jobs."
	outputHashDoc        = "`blake3:<hex>` of the content; null until the service has computed it."
	outputURLDoc         = "Signed download URL (absolute), as this read of the job returned it. It is a credential " +
		"and it expires, often within minutes, and each read may sign a new one: use it at once (a provisioner, say), " +
		"or download by `id` (`svc_output_file.asset_id`), which asks for a fresh URL when it downloads. The `svc_job` " +
		"resource keeps no URL in state."
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
	jobURLsSelfDoc   = "The job record; null once the job has ended."
	jobURLsEventsDoc = "The live event stream; null once the job has ended."
	jobURLsCancelDoc = "Cancellation; null once the job has ended."
	jobURLsLogsDoc   = "Where the run's logs are read; null when the surface captures no logs."
)

// The Terraform types of the job record's nested values, derived once from their attribute types.
var (
	progressTerraformType = types.ObjectType{AttrTypes: progressAttrTypes}.TerraformType(context.Background())
	outputsTerraformType  = types.ListType{ElemType: types.ObjectType{AttrTypes: outputAttrTypes}}.TerraformType(context.Background())
	outputTerraformType   = outputsTerraformType.(tftypes.List).ElementType
	// The data source's outputs, with their signed URLs.
	dataSourceOutputsTerraformType = types.ListType{ElemType: types.ObjectType{AttrTypes: dataSourceOutputAttrTypes}}.TerraformType(context.Background())
	dataSourceOutputTerraformType  = dataSourceOutputsTerraformType.(tftypes.List).ElementType
	jobErrorTerraformType          = types.ObjectType{AttrTypes: jobErrorAttrTypes}.TerraformType(context.Background())
	metricsTerraformType           = types.MapType{ElemType: types.Int64Type}.TerraformType(context.Background())
	jobURLsTerraformType           = types.ObjectType{AttrTypes: jobURLsAttrTypes}.TerraformType(context.Background())
)

// recordKind says which of the job's two records is built: the one svc_job's state keeps, or
// the whole record the data source reads live, with its outputs' signed URLs.
type recordKind bool

const (
	stateRecord recordKind = false // svc_job's state: what lasts (jobStateRecordAttrTypes), no credential
	liveRecord  recordKind = true  // the svc_job data source, read at every plan (jobRecordAttrTypes)
)

// putJobRecord writes the service's record of job into attrs, one Terraform value per attribute
// of the record of that kind, and returns how many distinct outputs were left out of the
// outputs kept. It is the one conversion of a record into state, for svc_job's resource and
// data source alike (withJobRecord). Times are kept to the second, in UTC (recordTime).
// Values are built directly, without reflection: a batch of jobs converts one record per job.
func putJobRecord(attrs map[string]tftypes.Value, job *client.Job, kind recordKind) (omitted int) {
	attrs[jobAttrStatus] = tftypes.NewValue(tftypes.String, job.Status)
	attrs[jobAttrCompletedAt] = tftypes.NewValue(tftypes.String, recordTimePtr(job.CompletedAt))
	attrs[jobAttrExpiresAt] = tftypes.NewValue(tftypes.String, recordTime(job.ExpiresAt))
	attrs[jobAttrOutputs], omitted = outputsTerraformValue(job.Outputs, kind)
	attrs[jobAttrError] = jobErrorTerraformValue(job.Error)
	if kind == liveRecord {
		attrs[jobAttrCreatedAt] = tftypes.NewValue(tftypes.String, recordTime(job.CreatedAt))
		attrs[jobAttrStartedAt] = tftypes.NewValue(tftypes.String, recordTimePtr(job.StartedAt))
		attrs[jobAttrOutputsOmitted] = tftypes.NewValue(tftypes.Number, int64(omitted))
		attrs[jobAttrMetrics] = metricsTerraformValue(job.Metrics)
		putRunInFlight(attrs, job)
	}
	return omitted
}

// recordTime is a time of the job record as state keeps it: to the second, in UTC (an expiry
// is truncated, so never later than the service's). The sub-second digits a service may write
// tell a user nothing and cost every job's state bytes. A value that is not an RFC 3339 time is
// kept as written.
func recordTime(s string) string {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return s
	}
	return t.UTC().Truncate(time.Second).Format(time.RFC3339)
}

// recordTimePtr is recordTime of a time that may be null.
func recordTimePtr(s *string) *string {
	if s == nil {
		return nil
	}
	t := recordTime(*s)
	return &t
}

// putRunInFlight writes what describes a run in flight: its place in the queue, its progress
// and the links to follow or cancel it. These are null once the job has ended (an ended job is
// not followed or cancelled). The logs link alone is kept, when the service offers one: the
// run's logs are read after it ended (why a job failed, say), and the contract gives no way to
// find them from the job's id.
func putRunInFlight(attrs map[string]tftypes.Value, job *client.Job) {
	if client.JobTerminal(job.Status) {
		putEndedRun(attrs, job.URLs.Logs)
		return
	}
	attrs[jobAttrQueuePosition] = tftypes.NewValue(tftypes.Number, job.QueuePosition)
	attrs[jobAttrProgress] = progressTerraformValue(job.Progress)
	attrs[jobAttrURLs] = tftypes.NewValue(jobURLsTerraformType, map[string]tftypes.Value{
		"self":   tftypes.NewValue(tftypes.String, job.URLs.Self),
		"events": tftypes.NewValue(tftypes.String, job.URLs.Events),
		"cancel": tftypes.NewValue(tftypes.String, job.URLs.Cancel),
		"logs":   tftypes.NewValue(tftypes.String, emptyAsNull(job.URLs.Logs)), // null when the surface captures no logs
	})
}

// putEndedRun writes what an ended job keeps of its run in flight: nothing but logs, the link
// to its logs when the service offers one.
func putEndedRun(attrs map[string]tftypes.Value, logs string) {
	attrs[jobAttrQueuePosition] = tftypes.NewValue(tftypes.Number, nil)
	attrs[jobAttrProgress] = tftypes.NewValue(progressTerraformType, nil)
	attrs[jobAttrURLs] = endedJobURLsTerraformValue(logs)
}

// endedJobURLsTerraformValue is an ended job's links: only the logs link, when the service
// offers one, and null otherwise.
func endedJobURLsTerraformValue(logs string) tftypes.Value {
	if logs == "" {
		return tftypes.NewValue(jobURLsTerraformType, nil)
	}
	return tftypes.NewValue(jobURLsTerraformType, map[string]tftypes.Value{
		"self":   tftypes.NewValue(tftypes.String, nil),
		"events": tftypes.NewValue(tftypes.String, nil),
		"cancel": tftypes.NewValue(tftypes.String, nil),
		"logs":   tftypes.NewValue(tftypes.String, logs),
	})
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
// maxOutputsInState, every text bounded, with signed URLs only in the live record; omitted
// counts the distinct outputs left out.
func outputsTerraformValue(outs []client.Output, kind recordKind) (list tftypes.Value, omitted int) {
	listType, elemType := outputsTerraformType, outputTerraformType
	if kind == liveRecord {
		listType, elemType = dataSourceOutputsTerraformType, dataSourceOutputTerraformType
	}
	kept, omitted := uniqueBounded(outs, func(o client.Output) string { return o.ID })
	elems := make([]tftypes.Value, 0, len(kept))
	for _, o := range kept {
		attrs := map[string]tftypes.Value{
			"node_id":      tftypes.NewValue(tftypes.String, boundText(o.NodeID)),
			"name":         tftypes.NewValue(tftypes.String, boundText(o.Name)),
			"type":         tftypes.NewValue(tftypes.String, boundText(o.Type)),
			"content_type": tftypes.NewValue(tftypes.String, boundText(o.ContentType)),
			"size_bytes":   tftypes.NewValue(tftypes.Number, o.SizeBytes),
			"id":           tftypes.NewValue(tftypes.String, boundText(o.ID)),
			"hash":         tftypes.NewValue(tftypes.String, boundTextPtr(o.Hash)),
			"job_id":       tftypes.NewValue(tftypes.String, boundTextPtr(o.JobID)),
		}
		if kind == liveRecord {
			attrs["url"] = tftypes.NewValue(tftypes.String, boundText(o.URL))
			attrs["url_expires_at"] = tftypes.NewValue(tftypes.String, boundText(o.URLExpiresAt))
		}
		elems = append(elems, tftypes.NewValue(elemType, attrs))
	}
	return tftypes.NewValue(listType, elems), omitted
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
