package provider

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/big"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/svc-org/terraform-provider-svc/internal/client"
)

// svc_job's codec: its values as Terraform sends them (tftypes.Value) to and from jobModel,
// attribute by attribute through jobAttributeTable, without reflection; and the job record of the
// svc_job data source, which is written straight from the service's record. This file and the
// server_*.go layers are the only ones of svc_job that handle Terraform's raw values.

// jobObjectType is svc_job's type, from its schema.
var jobObjectType = schema.Schema{Attributes: jobAttributes()}.Type().TerraformType(context.Background()).(tftypes.Object)

// decodeJob reads svc_job's value v into a model; ok is false when v is null, unknown, not an
// object, or holds a value that does not fit its attribute.
func decodeJob(v tftypes.Value) (m jobModel, ok bool) {
	return decodeModel(v, jobAttributeTable)
}

// encodeJob is m as a value of svc_job's type.
func encodeJob(m *jobModel) (v tftypes.Value, err error) {
	return encodeModel(m, jobAttributeTable, jobObjectType)
}

// decodeModel reads a resource's value v into its model M through its attribute table; ok is
// false when v is null, unknown, not an object, or holds a value that does not fit its field.
func decodeModel[M any](v tftypes.Value, table []modelAttribute[M]) (m M, ok bool) {
	attrs, ok := objectAttrs(v)
	if !ok {
		return m, false
	}
	for _, a := range table {
		if decodeField(a.field(&m), attrs[a.name]) != nil {
			return m, false
		}
	}
	return m, true
}

// encodeModel is m as a value of typ, the type of the schema its attribute table makes.
func encodeModel[M any](m *M, table []modelAttribute[M], typ tftypes.Object) (v tftypes.Value, err error) {
	// tftypes.NewValue panics on a value that does not fit its type: a bug there is an error.
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	attrs := make(map[string]tftypes.Value, len(table))
	for _, a := range table {
		if attrs[a.name], err = encodeField(a.field(m), typ.AttributeTypes[a.name]); err != nil {
			return tftypes.Value{}, fmt.Errorf("%s: %w", a.name, err)
		}
	}
	return tftypes.NewValue(typ, attrs), nil
}

// decodeField reads v into the field p points to.
func decodeField(p any, v tftypes.Value) (err error) {
	switch p := p.(type) {
	case *types.String:
		*p, err = stringOf(v)
	case *types.Bool:
		*p, err = boolOf(v)
	case *types.Int64:
		*p, err = int64Of(v)
	case *timeouts.Value:
		*p, err = timeoutsOf(v)
	case *jobOutputList:
		*p, err = jobOutputsOf(v)
	case *jobErrorObject:
		*p, err = jobErrorObjectOf(v)
	case *batchRowsValue:
		*p = batchRowsValueOf(v)
	case *batchResults:
		*p, err = batchResultsOf(v)
	default:
		err = fmt.Errorf("no codec for a field of type %T", p)
	}
	return err
}

// encodeField is the field p points to as a value of typ.
func encodeField(p any, typ tftypes.Type) (tftypes.Value, error) {
	switch p := p.(type) {
	case *types.String:
		return stringTerraformValue(*p), nil
	case *types.Bool:
		return primitiveTerraformValue(tftypes.Bool, p.IsUnknown(), p.IsNull(), p.ValueBool()), nil
	case *types.Int64:
		return primitiveTerraformValue(tftypes.Number, p.IsUnknown(), p.IsNull(), p.ValueInt64()), nil
	case *timeouts.Value:
		return timeoutsTerraformValue(*p, typ)
	case *jobOutputList:
		return p.terraformValue(typ), nil
	case *jobErrorObject:
		return p.terraformValue(typ), nil
	case *batchRowsValue:
		return tftypes.NewValue(typ, nil), nil // write-only: never in a plan or a state
	case *batchResults:
		return p.terraformValue(), nil
	}
	return tftypes.Value{}, fmt.Errorf("no codec for a field of type %T", p)
}

func stringTerraformValue(s types.String) tftypes.Value {
	return primitiveTerraformValue(tftypes.String, s.IsUnknown(), s.IsNull(), s.ValueString())
}

func primitiveTerraformValue(typ tftypes.Type, unknown, null bool, v any) tftypes.Value {
	switch {
	case unknown:
		return tftypes.NewValue(typ, tftypes.UnknownValue)
	case null:
		return tftypes.NewValue(typ, nil)
	}
	return tftypes.NewValue(typ, v)
}

func stringOf(v tftypes.Value) (types.String, error) {
	var s string
	switch {
	case !v.IsKnown():
		return types.StringUnknown(), nil
	case v.IsNull():
		return types.StringNull(), nil
	}
	err := v.As(&s)
	return types.StringValue(s), err
}

func boolOf(v tftypes.Value) (types.Bool, error) {
	var b bool
	switch {
	case !v.IsKnown():
		return types.BoolUnknown(), nil
	case v.IsNull():
		return types.BoolNull(), nil
	}
	err := v.As(&b)
	return types.BoolValue(b), err
}

func int64Of(v tftypes.Value) (types.Int64, error) {
	switch {
	case !v.IsKnown():
		return types.Int64Unknown(), nil
	case v.IsNull():
		return types.Int64Null(), nil
	}
	f := new(big.Float)
	if err := v.As(&f); err != nil {
		return types.Int64{}, err
	}
	n, acc := f.Int64()
	if acc != big.Exact {
		return types.Int64{}, fmt.Errorf("%s is not an int64", f)
	}
	return types.Int64Value(n), nil
}

// timeoutsOf reads a timeouts value as the timeouts package does.
func timeoutsOf(v tftypes.Value) (timeouts.Value, error) {
	if v.Type() == nil {
		return timeouts.Value{}, nil // absent: null
	}
	ctx := context.Background()
	value, err := timeoutsTypeOf(v.Type()).ValueFromTerraform(ctx, v)
	if err != nil {
		return timeouts.Value{}, err
	}
	t, ok := value.(timeouts.Value)
	if !ok {
		return timeouts.Value{}, fmt.Errorf("timeouts read as %T", value)
	}
	return t, nil
}

// timeoutsTypeOf is the timeouts type of the value type typ: svc_job's and svc_job_batch's made
// once (a plan of many jobs reads one per call), any other made now.
func timeoutsTypeOf(typ tftypes.Type) timeouts.Type {
	for _, known := range knownTimeoutsTypes {
		if known.tf.Equal(typ) {
			return known.typ
		}
	}
	return timeouts.Type{ObjectType: types.ObjectType{AttrTypes: timeoutsAttrTypesOf(typ)}}
}

// knownTimeoutsType is a timeouts type made once, beside its value type.
type knownTimeoutsType struct {
	tf  tftypes.Type
	typ timeouts.Type
}

// knownTimeoutsTypes are the timeouts types of svc_job and svc_job_batch.
var knownTimeoutsTypes = func() []knownTimeoutsType {
	var out []knownTimeoutsType
	for _, tf := range []tftypes.Type{jobObjectType.AttributeTypes[jobAttrTimeouts], jobBatchObjectType.AttributeTypes["timeouts"]} {
		out = append(out, knownTimeoutsType{tf: tf, typ: timeouts.Type{ObjectType: types.ObjectType{AttrTypes: timeoutsAttrTypesOf(tf)}}})
	}
	return out
}()

// timeoutsAttrTypesOf is the attribute types of a timeouts object type: every attribute a string.
func timeoutsAttrTypesOf(typ tftypes.Type) map[string]attr.Type {
	object, _ := typ.(tftypes.Object)
	out := make(map[string]attr.Type, len(object.AttributeTypes))
	for name := range object.AttributeTypes {
		out[name] = types.StringType
	}
	return out
}

func timeoutsTerraformValue(t timeouts.Value, typ tftypes.Type) (tftypes.Value, error) {
	switch {
	case t.IsUnknown():
		return tftypes.NewValue(typ, tftypes.UnknownValue), nil
	case t.IsNull():
		return tftypes.NewValue(typ, nil), nil
	}
	return t.ToTerraformValue(context.Background())
}

// jobOutputsOf reads svc_job's outputs list.
func jobOutputsOf(v tftypes.Value) (jobOutputList, error) {
	switch {
	case !v.IsKnown():
		return jobOutputList{State: attr.ValueStateUnknown}, nil
	case v.IsNull():
		return jobOutputList{State: attr.ValueStateNull}, nil
	}
	var elems []tftypes.Value
	if err := v.As(&elems); err != nil {
		return jobOutputList{}, err
	}
	out := jobOutputList{State: attr.ValueStateKnown, Elems: make([]jobOutput, 0, len(elems))}
	for _, e := range elems {
		attrs, ok := objectAttrs(e)
		if !ok {
			return jobOutputList{}, errors.New("an output is not a known object")
		}
		var o jobOutput
		if err := decodeFields(attrs, o.fields()); err != nil {
			return jobOutputList{}, err
		}
		out.Elems = append(out.Elems, o)
	}
	return out, nil
}

// fields are an output's attributes by name (outputAttrTypes), each a pointer to its field.
func (o *jobOutput) fields() map[string]any {
	return map[string]any{
		"node_id": &o.NodeID, "name": &o.Name, "type": &o.Type, "content_type": &o.ContentType,
		"size_bytes": &o.SizeBytes, "id": &o.ID, "hash": &o.Hash, "job_id": &o.JobID,
	}
}

// fields are the failure detail's attributes by name (jobErrorAttrTypes).
func (e *jobErrorObject) fields() map[string]any {
	return map[string]any{"code": &e.Code, "message": &e.Message, "node_id": &e.NodeID, "class_type": &e.ClassType, "traceback": &e.Traceback}
}

func decodeFields(attrs map[string]tftypes.Value, fields map[string]any) error {
	for name, p := range fields {
		if err := decodeField(p, attrs[name]); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	return nil
}

// encodeFields is fields as an object of type typ.
func encodeFields(fields map[string]any, typ tftypes.Object) tftypes.Value {
	attrs := make(map[string]tftypes.Value, len(fields))
	for name, p := range fields {
		attrs[name], _ = encodeField(p, typ.AttributeTypes[name]) // every field is a primitive: no error
	}
	return tftypes.NewValue(typ, attrs)
}

func (l *jobOutputList) terraformValue(typ tftypes.Type) tftypes.Value {
	switch l.State {
	case attr.ValueStateUnknown:
		return tftypes.NewValue(typ, tftypes.UnknownValue)
	case attr.ValueStateNull:
		return tftypes.NewValue(typ, nil)
	}
	elemType := typ.(tftypes.List).ElementType.(tftypes.Object)
	elems := make([]tftypes.Value, 0, len(l.Elems))
	for i := range l.Elems {
		elems = append(elems, encodeFields(l.Elems[i].fields(), elemType))
	}
	return tftypes.NewValue(typ, elems)
}

func jobErrorObjectOf(v tftypes.Value) (jobErrorObject, error) {
	switch {
	case !v.IsKnown():
		return jobErrorObject{State: attr.ValueStateUnknown}, nil
	case v.IsNull():
		return jobErrorObject{State: attr.ValueStateNull}, nil
	}
	attrs, ok := objectAttrs(v)
	if !ok {
		return jobErrorObject{}, errors.New("error is not an object")
	}
	e := jobErrorObject{State: attr.ValueStateKnown}
	return e, decodeFields(attrs, e.fields())
}

func (e *jobErrorObject) terraformValue(typ tftypes.Type) tftypes.Value {
	switch e.State {
	case attr.ValueStateUnknown:
		return tftypes.NewValue(typ, tftypes.UnknownValue)
	case attr.ValueStateNull:
		return tftypes.NewValue(typ, nil)
	}
	return encodeFields(e.fields(), typ.(tftypes.Object))
}

// objectAttrs is the attributes of v, an object; ok is false when v is null, unknown or not an
// object. The map is v's own (tftypes hands it over): it is cloned before any change.
func objectAttrs(v tftypes.Value) (attrs map[string]tftypes.Value, ok bool) {
	if !v.IsKnown() || v.IsNull() || v.As(&attrs) != nil {
		return nil, false
	}
	return attrs, true
}

// stringAttr is attrs[name] as a string; "" when missing, null, unknown or not a string.
func stringAttr(attrs map[string]tftypes.Value, name string) string {
	var s string
	if v, ok := attrs[name]; ok && v.IsKnown() && !v.IsNull() && v.As(&s) == nil {
		return s
	}
	return ""
}

// jobIdentityType is the type of svc_job's identity.
var jobIdentityType = tftypes.Object{AttributeTypes: map[string]tftypes.Type{"id": tftypes.String}}

func jobIdentityValue(id string) tftypes.Value {
	return tftypes.NewValue(jobIdentityType, map[string]tftypes.Value{"id": tftypes.NewValue(tftypes.String, id)})
}

// jobStateV0ToV1 is version 0's state, as Terraform stored it (JSON), as a value of version 1's
// type typ.
func jobStateV0ToV1(raw *tfprotov6.RawState, typ tftypes.Type) (tftypes.Value, error) {
	if raw == nil || len(raw.JSON) == 0 {
		return tftypes.Value{}, errors.New("no JSON state (a state written by Terraform 0.11 or older)")
	}
	value, err := raw.UnmarshalWithOpts(typ, tfprotov6.UnmarshalOpts{
		ValueFromJSONOpts: tftypes.ValueFromJSONOpts{IgnoreUndefinedAttributes: true},
	})
	if err != nil {
		return tftypes.Value{}, err
	}
	attrs, ok := objectAttrs(value)
	if !ok {
		return tftypes.Value{}, errors.New("the state is not a known object")
	}
	attrs = maps.Clone(attrs)
	for _, name := range []string{jobAttrCompletedAt, jobAttrExpiresAt} {
		if t := stringAttr(attrs, name); t != "" {
			attrs[name] = tftypes.NewValue(tftypes.String, recordTime(t))
		}
	}
	return tftypes.NewValue(typ, attrs), nil
}

// The job record as the svc_job data source reads it, live, and as the tests hold svc_job's
// state to: built straight from the service's record.

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

// progressTerraformValue is the progress snapshot; null until the job runs.
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
		fields["url"], fields["url_expires_at"] = &url, &expires
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
