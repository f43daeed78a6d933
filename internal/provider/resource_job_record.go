package provider

import (
	"fmt"
	"maps"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	dschema "github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	rschema "github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"

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
			progressAttrValue:            rschema.Float64Attribute{Computed: true, MarkdownDescription: progressValueDoc},
			progressAttrNodesDone:        rschema.Int64Attribute{Computed: true, MarkdownDescription: progressNodesDoneDoc},
			progressAttrNodesTotal:       rschema.Int64Attribute{Computed: true, MarkdownDescription: progressNodesTotalDoc},
			progressAttrCurrentNode:      rschema.StringAttribute{Computed: true, MarkdownDescription: progressCurrentNodeDoc},
			progressAttrCurrentNodeClass: rschema.StringAttribute{Computed: true, MarkdownDescription: progressCurrentNodeClassDoc},
			progressAttrStep:             rschema.Int64Attribute{Computed: true, MarkdownDescription: progressStepDoc},
			progressAttrSteps:            rschema.Int64Attribute{Computed: true, MarkdownDescription: progressStepsDoc},
			progressAttrMessage:          rschema.StringAttribute{Computed: true, MarkdownDescription: progressMessageDoc},
		}},
		jobAttrOutputs: rschema.ListNestedAttribute{Computed: true, MarkdownDescription: jobOutputsDoc, NestedObject: rschema.NestedAttributeObject{
			Attributes: map[string]rschema.Attribute{
				jobOutputAttrNodeID:      rschema.StringAttribute{Computed: true, MarkdownDescription: outputNodeIDDoc},
				jobOutputAttrName:        rschema.StringAttribute{Computed: true, MarkdownDescription: outputNameDoc},
				jobOutputAttrType:        rschema.StringAttribute{Computed: true, MarkdownDescription: outputTypeDoc},
				jobOutputAttrContentType: rschema.StringAttribute{Computed: true, MarkdownDescription: outputContentTypeDoc},
				jobOutputAttrSizeBytes:   rschema.Int64Attribute{Computed: true, MarkdownDescription: outputSizeBytesDoc},
				jobOutputAttrID:          rschema.StringAttribute{Computed: true, MarkdownDescription: outputIDDoc},
				jobOutputAttrHash:        rschema.StringAttribute{Computed: true, MarkdownDescription: outputHashDoc},
				jobOutputAttrJobID:       rschema.StringAttribute{Computed: true, MarkdownDescription: outputJobIDDoc},
			},
		}},
		jobAttrOutputsOmitted: rschema.Int64Attribute{Computed: true, MarkdownDescription: jobOutputsOmittedDoc},
		jobAttrError: rschema.SingleNestedAttribute{Computed: true, MarkdownDescription: jobErrorDoc, Attributes: map[string]rschema.Attribute{
			jobErrorAttrCode:      rschema.StringAttribute{Computed: true, MarkdownDescription: jobErrorCodeDoc},
			jobErrorAttrMessage:   rschema.StringAttribute{Computed: true, MarkdownDescription: jobErrorMessageDoc},
			jobErrorAttrNodeID:    rschema.StringAttribute{Computed: true, MarkdownDescription: jobErrorNodeIDDoc},
			jobErrorAttrClassType: rschema.StringAttribute{Computed: true, MarkdownDescription: jobErrorClassTypeDoc},
			jobErrorAttrTraceback: rschema.StringAttribute{Computed: true, MarkdownDescription: jobErrorTracebackDoc},
		}},
		jobAttrMetrics: rschema.MapAttribute{Computed: true, ElementType: types.Int64Type, MarkdownDescription: jobMetricsDoc},
		jobAttrURLs: rschema.SingleNestedAttribute{Computed: true, MarkdownDescription: jobURLsDoc, Attributes: map[string]rschema.Attribute{
			jobURLsAttrSelf:   rschema.StringAttribute{Computed: true, MarkdownDescription: jobURLsSelfDoc},
			jobURLsAttrEvents: rschema.StringAttribute{Computed: true, MarkdownDescription: jobURLsEventsDoc},
			jobURLsAttrCancel: rschema.StringAttribute{Computed: true, MarkdownDescription: jobURLsCancelDoc},
			jobURLsAttrLogs:   rschema.StringAttribute{Computed: true, MarkdownDescription: jobURLsLogsDoc},
		}},
	}
}

// jobRecordDataSourceAttributes is the job record in the svc_job data source's schema: the whole
// record (jobRecordAttributes) in the data source schema's types, and the outputs' signed URLs
// of the read, which the resource does not keep.
func jobRecordDataSourceAttributes() map[string]dschema.Attribute {
	attrs := dataSourceAttributes(jobRecordAttributes())
	outputs := attrs[jobAttrOutputs].(dschema.ListNestedAttribute)
	outputs.NestedObject.Attributes[jobOutputAttrURL] = dschema.StringAttribute{Computed: true, MarkdownDescription: outputURLDoc}
	outputs.NestedObject.Attributes[jobOutputAttrURLExpiresAt] = dschema.StringAttribute{Computed: true, MarkdownDescription: outputURLExpiresAtDoc}
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
	progressAttrValue:            types.Float64Type,
	progressAttrNodesDone:        types.Int64Type,
	progressAttrNodesTotal:       types.Int64Type,
	progressAttrCurrentNode:      types.StringType,
	progressAttrCurrentNodeClass: types.StringType,
	progressAttrStep:             types.Int64Type,
	progressAttrSteps:            types.Int64Type,
	progressAttrMessage:          types.StringType,
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
	jobOutputAttrNodeID:      types.StringType,
	jobOutputAttrName:        types.StringType,
	jobOutputAttrType:        types.StringType,
	jobOutputAttrContentType: types.StringType,
	jobOutputAttrSizeBytes:   types.Int64Type,
	jobOutputAttrID:          types.StringType,
	jobOutputAttrHash:        types.StringType,
	jobOutputAttrJobID:       types.StringType,
}

// dataSourceOutputAttrTypes are the types of an output's attributes in the svc_job data source,
// which is read at every plan: outputAttrTypes and the signed URL of the read.
var dataSourceOutputAttrTypes = withAttrTypes(outputAttrTypes, map[string]attr.Type{
	jobOutputAttrURL:          types.StringType,
	jobOutputAttrURLExpiresAt: types.StringType,
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
	jobErrorAttrCode:      types.StringType,
	jobErrorAttrMessage:   types.StringType,
	jobErrorAttrNodeID:    types.StringType,
	jobErrorAttrClassType: types.StringType,
	jobErrorAttrTraceback: types.StringType,
}

const (
	jobErrorCodeDoc      = "Error code, e.g. `node_execution_error`."
	jobErrorMessageDoc   = "Error message."
	jobErrorNodeIDDoc    = "Failing node id."
	jobErrorClassTypeDoc = "Failing node class."
	jobErrorTracebackDoc = "Traceback, when the service returns one."
)

var jobURLsAttrTypes = map[string]attr.Type{
	jobURLsAttrSelf:   types.StringType,
	jobURLsAttrEvents: types.StringType,
	jobURLsAttrCancel: types.StringType,
	jobURLsAttrLogs:   types.StringType,
}

const (
	jobURLsSelfDoc   = "The job record; null once the job has ended."
	jobURLsEventsDoc = "The live event stream; null once the job has ended."
	jobURLsCancelDoc = "Cancellation; null once the job has ended."
	jobURLsLogsDoc   = "Where the run's logs are read; null when the surface captures no logs."
)

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
