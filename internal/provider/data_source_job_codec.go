package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/svc-org/terraform-provider-svc/internal/client"
)

// The svc_job data source's codec: the job record as the data source reads it, live, and as the
// tests hold svc_job's state to, written as Terraform's value straight from the service's record.

// The Terraform types of the job record's nested values, derived once from their attribute types.
var (
	progressTerraformType = types.ObjectType{AttrTypes: progressAttrTypes}.TerraformType(context.Background())
	// The data source's outputs, with their signed URLs.
	dataSourceOutputsTerraformType = types.ListType{ElemType: types.ObjectType{AttrTypes: dataSourceOutputAttrTypes}}.TerraformType(context.Background())
	dataSourceOutputTerraformType  = dataSourceOutputsTerraformType.(tftypes.List).ElementType
	jobErrorTerraformType          = types.ObjectType{AttrTypes: jobErrorAttrTypes}.TerraformType(context.Background())
	metricsTerraformType           = types.MapType{ElemType: types.Int64Type}.TerraformType(context.Background())
	jobURLsTerraformType           = types.ObjectType{AttrTypes: jobURLsAttrTypes}.TerraformType(context.Background())
)

// jobDataSourceValue is the svc_job data source's value, of type typ, for the job of id: the
// whole record, read live, with its outputs' signed URLs (the data source is read at every plan,
// and keeps nothing).
func jobDataSourceValue(typ tftypes.Type, id string, job *client.Job) (v tftypes.Value, err error) {
	// tftypes.NewValue panics on a value that does not fit its type: a bug there is an error.
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	attrs := map[string]tftypes.Value{jobAttrID: tftypes.NewValue(tftypes.String, id)}
	attrs[jobAttrStatus] = tftypes.NewValue(tftypes.String, job.Status)
	attrs[jobAttrCompletedAt] = tftypes.NewValue(tftypes.String, recordTimePtr(job.CompletedAt))
	attrs[jobAttrExpiresAt] = tftypes.NewValue(tftypes.String, recordTime(job.ExpiresAt))
	var omitted int
	attrs[jobAttrOutputs], omitted = liveOutputsTerraformValue(job.Outputs)
	e := jobErrorOf(job.Error)
	attrs[jobAttrError] = e.terraformValue(jobErrorTerraformType)
	attrs[jobAttrCreatedAt] = tftypes.NewValue(tftypes.String, recordTime(job.CreatedAt))
	attrs[jobAttrStartedAt] = tftypes.NewValue(tftypes.String, recordTimePtr(job.StartedAt))
	attrs[jobAttrOutputsOmitted] = tftypes.NewValue(tftypes.Number, int64(omitted))
	attrs[jobAttrMetrics] = metricsTerraformValue(job.Metrics)
	putRunInFlight(attrs, job)
	return tftypes.NewValue(typ, attrs), nil
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
		jobURLsAttrSelf:   tftypes.NewValue(tftypes.String, job.URLs.Self),
		jobURLsAttrEvents: tftypes.NewValue(tftypes.String, job.URLs.Events),
		jobURLsAttrCancel: tftypes.NewValue(tftypes.String, job.URLs.Cancel),
		jobURLsAttrLogs:   stringTerraformValue(nullIfEmpty(job.URLs.Logs)), // null when the surface captures no logs
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
		jobURLsAttrSelf:   tftypes.NewValue(tftypes.String, nil),
		jobURLsAttrEvents: tftypes.NewValue(tftypes.String, nil),
		jobURLsAttrCancel: tftypes.NewValue(tftypes.String, nil),
		jobURLsAttrLogs:   tftypes.NewValue(tftypes.String, logs),
	})
}

// progressTerraformValue is the progress snapshot; null until the job runs.
func progressTerraformValue(p *client.Progress) tftypes.Value {
	if p == nil {
		return tftypes.NewValue(progressTerraformType, nil)
	}
	return tftypes.NewValue(progressTerraformType, map[string]tftypes.Value{
		progressAttrValue:            tftypes.NewValue(tftypes.Number, p.Value),
		progressAttrNodesDone:        tftypes.NewValue(tftypes.Number, p.NodesDone),
		progressAttrNodesTotal:       tftypes.NewValue(tftypes.Number, p.NodesTotal),
		progressAttrCurrentNode:      tftypes.NewValue(tftypes.String, p.CurrentNode),
		progressAttrCurrentNodeClass: tftypes.NewValue(tftypes.String, p.CurrentNodeClass),
		progressAttrStep:             tftypes.NewValue(tftypes.Number, p.Step),
		progressAttrSteps:            tftypes.NewValue(tftypes.Number, p.Steps),
		progressAttrMessage:          tftypes.NewValue(tftypes.String, p.Message),
	})
}

// liveOutputsTerraformValue is the data source's outputs list: the outputs as state keeps them
// (jobOutputOf), each with its signed URL of the read; omitted counts the distinct outputs left
// out.
func liveOutputsTerraformValue(outs []client.Output) (list tftypes.Value, omitted int) {
	kept, omitted := uniqueBounded(outs, func(o client.Output) string { return o.ID })
	elemType := dataSourceOutputTerraformType.(tftypes.Object)
	elems := make([]tftypes.Value, 0, len(kept))
	for _, o := range kept {
		out := jobOutputOf(o)
		fields := out.fields()
		url, expires := types.StringValue(boundText(o.URL)), types.StringValue(boundText(o.URLExpiresAt))
		fields[jobOutputAttrURL], fields[jobOutputAttrURLExpiresAt] = &url, &expires
		elems = append(elems, encodeFields(fields, elemType))
	}
	return tftypes.NewValue(dataSourceOutputsTerraformType, elems), omitted
}

// metricsTerraformValue is the metrics map: a metric the service has not measured yet (null) is
// left out, and no metric at all is an empty map.
func metricsTerraformValue(metrics map[string]*int64) tftypes.Value {
	elems := make(map[string]tftypes.Value, len(metrics))
	for k, v := range metrics {
		if v != nil {
			elems[k] = tftypes.NewValue(tftypes.Number, *v)
		}
	}
	return tftypes.NewValue(metricsTerraformType, elems)
}
