package provider

import (
	"context"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/svc-org/terraform-provider-svc/internal/client"
)

func TestJobRecordWarningsAreDiagnostics(t *testing.T) {
	t.Parallel()
	job := &client.Job{ID: "j1", Status: client.JobSucceeded, DecodeWarnings: []string{"progress.value = 1e400 does not fit a finite number; it was left empty"}}
	schema, typ := jobSchemaForTest(t)
	state := tfsdk.State{Schema: schema.Schema, Raw: tftypes.NewValue(typ, nil)}
	var diags diag.Diagnostics
	m, ok := decodeJob(tftypes.NewValue(typ, newJobAttrs(t, typ, nil)))
	if !ok {
		t.Fatal("the test's values do not decode")
	}
	m.setRecord(job, &diags)
	saveJob(&state, &m, &diags)
	if diags.HasError() || diags.WarningsCount() != 1 || !strings.Contains(diags.Warnings()[0].Detail(), "progress.value = 1e400") {
		t.Fatalf("diagnostics %v, want one warning naming the value", diags)
	}
	if saved, _ := objectAttrs(state.Raw); stringAttr(saved, "status") != client.JobSucceeded {
		t.Fatalf("state %v, want the record saved beside the warning", state.Raw)
	}
}

// The job record's models, its attribute types and the svc_job resource's and data source's
// schemas name the same attributes with the same types: the data source the whole record, the
// resource the part its state keeps (jobStateRecordAttrTypes). Both schemas show Terraform the
// same attribute where both have it, but for the outputs' signed URLs, which only the data
// source has: one that drifted from the others fails here rather than at the first read.
func TestJobRecordSchemasAgree(t *testing.T) {
	t.Parallel()
	schemas := protocolSchemas(t)
	res := protocolAttributes(t, schemas.ResourceSchemas["svc_job"])
	ds := protocolAttributes(t, schemas.DataSourceSchemas["svc_job"])
	names, kept := sortedKeys(jobRecordAttrTypes), sortedKeys(jobStateRecordAttrTypes)
	modelNames := append(tfsdkNames(jobRecordModel{}), tfsdkNames(jobStateRecordModel{})...)
	slices.Sort(modelNames)
	assertSameNames(t, "jobRecordModel", modelNames, names)
	assertSameNames(t, "jobStateRecordModel", tfsdkNames(jobStateRecordModel{}), kept)
	assertSameNames(t, "resource svc_job's read-only attributes but id", readOnlyNames(res, "id"), kept)
	assertSameNames(t, "data source svc_job's read-only attributes", readOnlyNames(ds), names)
	resAttrs, dsAttrs := jobRecordResourceAttributes(), jobRecordDataSourceAttributes()
	for _, name := range names {
		want, wantDS := jobRecordAttrTypes[name], jobRecordAttrTypes[name]
		if name == jobAttrOutputs {
			wantDS = types.ListType{ElemType: types.ObjectType{AttrTypes: dataSourceOutputAttrTypes}}
		}
		if got := typeOf(dsAttrs[name]); got == nil || !got.Equal(wantDS) {
			t.Errorf("data source attribute %s: type %v, want %v", name, got, wantDS)
		}
		if _, inState := jobStateRecordAttrTypes[name]; !inState {
			continue
		}
		if got := typeOf(resAttrs[name]); got == nil || !got.Equal(want) || !got.Equal(jobStateRecordAttrTypes[name]) {
			t.Errorf("resource attribute %s: type %v, want %v", name, got, want)
		}
		if name != jobAttrOutputs && !reflect.DeepEqual(res[name], ds[name]) {
			t.Errorf("%s differs:\n resource    %s\n data source %s", name, attributeJSON(res[name]), attributeJSON(ds[name]))
		}
	}
}

// Each nested object's model struct names the attributes of its attribute types.
func TestJobRecordNestedModelsMatchTheirTypes(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		model any
		types map[string]attr.Type
	}{
		{progressModel{}, progressAttrTypes},
		{outputModel{}, outputAttrTypes},
		{dataSourceOutputModel{}, dataSourceOutputAttrTypes},
		{jobErrorModel{}, jobErrorAttrTypes},
		{jobURLsModel{}, jobURLsAttrTypes},
	} {
		assertSameNames(t, reflect.TypeOf(tt.model).Name(), tfsdkNames(tt.model), sortedKeys(tt.types))
	}
}

// recordsForTest are service records of every shape a job record takes in state.
func recordsForTest() map[string]*client.Job {
	str := func(s string) *string { return &s }
	num := func(n int64) *int64 { return &n }
	urls := client.JobURLs{Self: "http://svc.test/api/v2/jobs/j1", Events: "http://svc.test/api/v2/jobs/j1/events",
		Cancel: "http://svc.test/api/v2/jobs/j1/cancel"}
	withLogs := urls
	withLogs.Logs = "http://svc.test/api/v2/jobs/j1/logs"
	out := func(id string, hash, jobID *string) client.Output {
		return client.Output{NodeID: "3", Type: "image", Asset: client.Asset{ID: id, Name: id + ".png", ContentType: "image/png",
			SizeBytes: 1 << 40, Hash: hash, URL: "http://svc.test/api/v2/assets/" + id + "/content?sig=1",
			URLExpiresAt: "2026-11-23T13:00:00Z", JobID: jobID}}
	}
	var many []client.Output
	for i := range maxOutputsInState + 200 {
		many = append(many, out(strconv.Itoa(i), str("blake3:00"), nil))
	}
	long := strings.Repeat("frame\n", 20000) + "ValueError: x"
	return map[string]*client.Job{
		"queued": {ID: "j1", Status: client.JobQueued, CreatedAt: "2026-11-23T10:00:00Z", ExpiresAt: "2026-11-24T10:00:00Z",
			QueuePosition: num(3), URLs: urls},
		"queued first": {ID: "j1", Status: client.JobQueued, QueuePosition: num(0), URLs: urls},
		"running with progress": {ID: "j1", Status: client.JobRunning, CreatedAt: "2026-11-23T10:00:00Z", StartedAt: str("2026-11-23T10:00:01Z"),
			ExpiresAt: "2026-11-24T10:00:00Z", Progress: &client.Progress{Value: 0.37, NodesDone: 1, NodesTotal: 3, CurrentNode: str("2"),
				CurrentNodeClass: str("ImageNoiseSampler"), Step: num(4), Steps: num(20), Message: str("sampling")},
			Metrics: map[string]*int64{"queue_ms": num(12), "execution_ms": nil}, URLs: withLogs},
		"running, progress without a node": {ID: "j1", Status: client.JobRunning, Progress: &client.Progress{}, URLs: urls},
		"succeeded with outputs": {ID: "j1", Status: client.JobSucceeded, CreatedAt: "2026-11-23T10:00:00Z",
			StartedAt: str("2026-11-23T10:00:01Z"), CompletedAt: str("2026-11-23T10:00:02Z"), ExpiresAt: "2026-11-24T10:00:02Z",
			Progress: &client.Progress{Value: 1, NodesDone: 3, NodesTotal: 3, Message: str("done")},
			Outputs: []client.Output{out("a1", str("blake3:ed2c"), nil), out("a2", nil, str("j1")), out("a1", str("blake3:ed2c"), nil),
				out("a3", str(strings.Repeat("h", 2*maxTextInState)), str(strings.Repeat("j", 2*maxTextInState)))},
			Metrics: map[string]*int64{"queue_ms": num(0), "execution_ms": num(1500)}, URLs: withLogs},
		"outputs omitted": {ID: "j1", Status: client.JobSucceeded, Outputs: many, URLs: urls},
		"failed with error and traceback": {ID: "j1", Status: client.JobFailed, CompletedAt: str("2026-11-23T10:00:02Z"),
			Error: &client.JobError{Code: "node_execution_error", Message: strings.Repeat("m", 3*maxTextInState), NodeID: str("2"),
				ClassType: str("RaiseError"), Traceback: &long}, URLs: urls},
		"failed without detail":               {ID: "j1", Status: client.JobFailed, Error: &client.JobError{Code: "internal", Message: "boom"}, URLs: urls},
		"canceled, no metrics":                {ID: "j1", Status: client.JobCanceled, Metrics: map[string]*int64{}, URLs: urls},
		"record refused (id and status only)": {ID: "j1", Status: client.JobQueued},
		"values left out": {ID: "j1", Status: client.JobSucceeded, URLs: urls,
			DecodeWarnings: []string{"progress.value = 1e400 does not fit a finite number; it was left empty"}},
	}
}

// recordKind says which of the job's two records is built: the one svc_job's state keeps, or
// the whole record the data source reads live, with its outputs' signed URLs.
type recordKind bool

const (
	stateRecord recordKind = false // svc_job's state: what lasts (jobStateRecordAttrTypes), no credential
	liveRecord  recordKind = true  // the svc_job data source, read at every plan (jobRecordAttrTypes)
)

// reflectedJobRecordModel is the job record's model built by the framework's reflection, as the
// provider built it before its codec: the reference the codec is held to. kind says whether
// the outputs carry their signed URLs (the data source's record) or not (the resource's).
func reflectedJobRecordModel(t *testing.T, job *client.Job, kind recordKind) jobRecordModel {
	t.Helper()
	ctx := context.Background()
	var diags, d diag.Diagnostics
	m := jobRecordModel{
		jobStateRecordModel: jobStateRecordModel{Status: types.StringValue(job.Status),
			CompletedAt: types.StringPointerValue(recordTimePtr(job.CompletedAt)), ExpiresAt: types.StringValue(recordTime(job.ExpiresAt)),
			Error: types.ObjectNull(jobErrorAttrTypes)},
		CreatedAt: types.StringValue(recordTime(job.CreatedAt)), StartedAt: types.StringPointerValue(recordTimePtr(job.StartedAt)),
		QueuePosition: types.Int64PointerValue(job.QueuePosition), Progress: types.ObjectNull(progressAttrTypes),
	}
	if p := job.Progress; p != nil {
		m.Progress, d = types.ObjectValueFrom(ctx, progressAttrTypes, progressModel{
			Value: types.Float64Value(p.Value), NodesDone: types.Int64Value(p.NodesDone), NodesTotal: types.Int64Value(p.NodesTotal),
			CurrentNode: types.StringPointerValue(p.CurrentNode), CurrentNodeClass: types.StringPointerValue(p.CurrentNodeClass),
			Step: types.Int64PointerValue(p.Step), Steps: types.Int64PointerValue(p.Steps), Message: types.StringPointerValue(p.Message),
		})
		diags.Append(d...)
	}
	kept, omitted := uniqueBounded(job.Outputs, func(o client.Output) string { return o.ID })
	outputs, dsOutputs := []outputModel{}, []dataSourceOutputModel{}
	for _, o := range kept {
		output := outputModel{
			NodeID: types.StringValue(boundText(o.NodeID)), Name: types.StringValue(boundText(o.Name)),
			Type: types.StringValue(boundText(o.Type)), ContentType: types.StringValue(boundText(o.ContentType)),
			SizeBytes: types.Int64Value(o.SizeBytes), ID: types.StringValue(boundText(o.ID)),
			Hash: types.StringPointerValue(boundTextPtr(o.Hash)), JobID: types.StringPointerValue(boundTextPtr(o.JobID)),
		}
		outputs = append(outputs, output)
		dsOutputs = append(dsOutputs, dataSourceOutputModel{NodeID: output.NodeID, Name: output.Name, Type: output.Type,
			ContentType: output.ContentType, SizeBytes: output.SizeBytes, ID: output.ID, Hash: output.Hash,
			URL: types.StringValue(boundText(o.URL)), URLExpiresAt: types.StringValue(boundText(o.URLExpiresAt)), JobID: output.JobID})
	}
	if kind == liveRecord {
		m.Outputs, d = types.ListValueFrom(ctx, types.ObjectType{AttrTypes: dataSourceOutputAttrTypes}, dsOutputs)
	} else {
		m.Outputs, d = types.ListValueFrom(ctx, types.ObjectType{AttrTypes: outputAttrTypes}, outputs)
	}
	diags.Append(d...)
	m.OutputsOmitted = types.Int64Value(int64(omitted))
	if e := job.Error; e != nil {
		m.Error, d = types.ObjectValueFrom(ctx, jobErrorAttrTypes, jobErrorModel{
			Code: types.StringValue(boundText(e.Code)), Message: types.StringValue(boundText(e.Message)),
			NodeID: types.StringPointerValue(boundTextPtr(e.NodeID)), ClassType: types.StringPointerValue(boundTextPtr(e.ClassType)),
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
		Self: types.StringValue(job.URLs.Self), Events: types.StringValue(job.URLs.Events),
		Cancel: types.StringValue(job.URLs.Cancel), Logs: nullIfEmpty(job.URLs.Logs),
	})
	diags.Append(d...)
	if client.JobTerminal(job.Status) {
		endedRunInFlight(t, &m, job.URLs.Logs)
	}
	if diags.HasError() {
		t.Fatal(diags)
	}
	return m
}

// endedRunInFlight nulls in m what describes a run in flight, as a job that ended keeps it:
// no queue position, no progress, and of its links only the logs link, when there is one.
func endedRunInFlight(t *testing.T, m *jobRecordModel, logs string) {
	t.Helper()
	m.QueuePosition, m.Progress, m.URLs = types.Int64Null(), types.ObjectNull(progressAttrTypes), types.ObjectNull(jobURLsAttrTypes)
	if logs == "" {
		return
	}
	var d diag.Diagnostics
	m.URLs, d = types.ObjectValueFrom(context.Background(), jobURLsAttrTypes, jobURLsModel{
		Self: types.StringNull(), Events: types.StringNull(), Cancel: types.StringNull(), Logs: types.StringValue(logs),
	})
	if d.HasError() {
		t.Fatal(d)
	}
}

// The model the provider builds from a record (jobModel.setRecord) holds the values the
// framework's reflection built from it, for every shape of record.
func TestNewJobRecordModelMatchesReflection(t *testing.T) {
	t.Parallel()
	for name, job := range recordsForTest() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got, diags := newJobRecordModel(context.Background(), job)
			if diags.HasError() {
				t.Fatal(diags)
			}
			if want := len(job.DecodeWarnings) > 0; (diags.WarningsCount() == 1) != want {
				t.Errorf("warnings %v; want one: %v", diags, want)
			}
			want := reflectedJobRecordModel(t, job, stateRecord).jobStateRecordModel
			g, w := reflect.ValueOf(got), reflect.ValueOf(want)
			for i := range g.NumField() {
				gv, wv := g.Field(i).Interface().(attr.Value), w.Field(i).Interface().(attr.Value)
				if !gv.Equal(wv) {
					t.Errorf("%s = %s; reflection built %s", g.Type().Field(i).Name, gv, wv)
				}
			}
		})
	}
}

// jobRecordModel holds the job record's attributes as the provider's models did before the record
// was built by its codec: the reference the tests hold the codec to.
type jobRecordModel struct {
	jobStateRecordModel
	CreatedAt      types.String `tfsdk:"created_at"`
	StartedAt      types.String `tfsdk:"started_at"`
	QueuePosition  types.Int64  `tfsdk:"queue_position"`
	Progress       types.Object `tfsdk:"progress"`
	OutputsOmitted types.Int64  `tfsdk:"outputs_omitted"`
	Metrics        types.Map    `tfsdk:"metrics"`
	URLs           types.Object `tfsdk:"urls"`
}

// jobStateRecordModel is the part of the job record the svc_job resource keeps in state.
type jobStateRecordModel struct {
	Status      types.String `tfsdk:"status"`
	CompletedAt types.String `tfsdk:"completed_at"`
	ExpiresAt   types.String `tfsdk:"expires_at"`
	Outputs     types.List   `tfsdk:"outputs"`
	Error       types.Object `tfsdk:"error"`
}

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

// outputModel is one committed output of the job: an asset, as svc_job's state holds it.
type outputModel struct {
	NodeID      types.String `tfsdk:"node_id"`
	Name        types.String `tfsdk:"name"`
	Type        types.String `tfsdk:"type"`
	ContentType types.String `tfsdk:"content_type"`
	SizeBytes   types.Int64  `tfsdk:"size_bytes"`
	ID          types.String `tfsdk:"id"`
	Hash        types.String `tfsdk:"hash"`
	JobID       types.String `tfsdk:"job_id"`
}

// dataSourceOutputModel is one output as the svc_job data source holds it: with the signed URL
// of the read.
type dataSourceOutputModel struct {
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

// jobErrorModel is the job's execution failure detail.
type jobErrorModel struct {
	Code      types.String `tfsdk:"code"`
	Message   types.String `tfsdk:"message"`
	NodeID    types.String `tfsdk:"node_id"`
	ClassType types.String `tfsdk:"class_type"`
	Traceback types.String `tfsdk:"traceback"`
}

// jobURLsModel holds the job's links.
type jobURLsModel struct {
	Self   types.String `tfsdk:"self"`
	Events types.String `tfsdk:"events"`
	Cancel types.String `tfsdk:"cancel"`
	Logs   types.String `tfsdk:"logs"`
}

// newJobRecordModel is the codec's values of the record svc_job's state keeps for job (set by
// jobModel.setRecord), read into the model by the framework (for assertions), with the record's
// warnings.
func newJobRecordModel(ctx context.Context, job *client.Job) (jobStateRecordModel, diag.Diagnostics) {
	var diags diag.Diagnostics
	var record jobModel
	record.setRecord(job, &diags)
	attrs := make(map[string]tftypes.Value, len(jobStateRecordAttrTypes))
	for _, a := range jobAttributeTable {
		if _, ok := jobStateRecordAttrTypes[a.name]; ok {
			attrs[a.name], _ = encodeField(a.field(&record), jobObjectType.AttributeTypes[a.name]) // every record field has a codec
		}
	}
	typ := types.ObjectType{AttrTypes: jobStateRecordAttrTypes}
	v, err := typ.ValueFromTerraform(ctx, tftypes.NewValue(typ.TerraformType(ctx), attrs))
	if err != nil {
		diags.AddError("Converting the job record failed", err.Error())
		return jobStateRecordModel{}, diags
	}
	var m jobStateRecordModel
	diags.Append(v.(types.Object).As(ctx, &m, basetypes.ObjectAsOptions{})...)
	return m, diags
}

// The data source's state is the configured id and the record the model path built from the
// service's record (the model written by reflection), and it carries the record's warnings.
func TestJobDataSourceStateMatchesTheModelPath(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv, _, done := finishedTestJob(t, "k-data-source")
	var sresp datasource.SchemaResponse
	NewJobDataSource().Schema(ctx, datasource.SchemaRequest{}, &sresp)
	typ := sresp.Schema.Type().TerraformType(ctx)
	config := tfsdk.State{Schema: sresp.Schema, Raw: tftypes.NewValue(typ, nil)} // a state sets values as a configuration holds them
	if d := config.SetAttribute(ctx, path.Root("id"), done.ID); d.HasError() {
		t.Fatal(d)
	}
	configValue, err := tfprotov6.NewDynamicValue(typ, config.Raw)
	if err != nil {
		t.Fatal(err)
	}
	s := releasingServer{providerserver.NewProtocol6(New("test")())()}
	configureAt(t, s, srv.URL(), false)
	resp, err := s.ReadDataSource(ctx, &tfprotov6.ReadDataSourceRequest{TypeName: "svc_job", Config: &configValue})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Diagnostics) != 0 || resp.State == nil {
		t.Fatalf("diagnostics %v, state %v", summaries(resp.Diagnostics), resp.State)
	}
	got, err := resp.State.Unmarshal(typ)
	if err != nil {
		t.Fatal(err)
	}
	reference := struct {
		ID types.String `tfsdk:"id"`
		jobRecordModel
	}{types.StringValue(done.ID), reflectedJobRecordModel(t, done, liveRecord)}
	want := tfsdk.State{Schema: sresp.Schema, Raw: tftypes.NewValue(typ, nil)}
	if d := want.Set(ctx, &reference); d.HasError() {
		t.Fatal(d)
	}
	if !got.Equal(want.Raw) {
		diffs, _ := got.Diff(want.Raw)
		t.Fatalf("state differs from the model path's: %v", diffs)
	}
}
