package provider

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/svc-org/terraform-provider-svc/internal/client"
	"github.com/svc-org/terraform-provider-svc/internal/emulator"
)

// createTestWorkflow is a workflow of a new job that the reference server's object_info accepts
// and that it runs.
const createTestWorkflow = `{"1":{"class_type":"EmptyImage","inputs":{"width":8,"height":8,"batch_size":1,"color":0}},` +
	`"2":{"class_type":"SaveImage","inputs":{"images":["1",0],"filename_prefix":"t"}}}`

// newJobPlan is the plan of a new svc_job as Terraform sends it to apply: the id, the record and
// an unset key unknown, write-only values null, the settings at their defaults; then set.
func newJobPlan(typ tftypes.Object, set map[string]tftypes.Value) tftypes.Value {
	attrs := map[string]tftypes.Value{}
	for name, at := range typ.AttributeTypes {
		attrs[name] = tftypes.NewValue(at, tftypes.UnknownValue)
	}
	for name, v := range map[string]any{"workflow": createTestWorkflow, "partner_api_key_wo": nil, "partner_auth_token_wo": nil, "timeouts": nil,
		"wait_for_completion": true, "cancel_on_destroy": true, "rerun_on_expiry": false, "validate": false} {
		attrs[name] = tftypes.NewValue(typ.AttributeTypes[name], v)
	}
	maps.Copy(attrs, set)
	return tftypes.NewValue(typ, attrs)
}

// newJobConfig is the configuration of that plan: everything null but the workflow and
// validate = false; then set.
func newJobConfig(typ tftypes.Object, set map[string]tftypes.Value) tftypes.Value {
	attrs := map[string]tftypes.Value{}
	for name, at := range typ.AttributeTypes {
		attrs[name] = tftypes.NewValue(at, nil)
	}
	attrs["workflow"] = tftypes.NewValue(tftypes.String, createTestWorkflow)
	attrs["validate"] = tftypes.NewValue(tftypes.Bool, false)
	maps.Copy(attrs, set)
	return tftypes.NewValue(typ, attrs)
}

// jobResourceModel is svc_job's attributes as the model the provider read and wrote by
// reflection before it read and wrote values directly: the reference path's model.
type jobResourceModel struct {
	ID                 types.String   `tfsdk:"id"`
	Workflow           jsonSemantic   `tfsdk:"workflow"`
	IdempotencyKey     types.String   `tfsdk:"idempotency_key"`
	PartnerAPIKeyWO    types.String   `tfsdk:"partner_api_key_wo"`
	PartnerAuthTokenWO types.String   `tfsdk:"partner_auth_token_wo"`
	WaitForCompletion  types.Bool     `tfsdk:"wait_for_completion"`
	CancelOnDestroy    types.Bool     `tfsdk:"cancel_on_destroy"`
	RerunOnExpiry      types.Bool     `tfsdk:"rerun_on_expiry"`
	Validate           types.Bool     `tfsdk:"validate"`
	Timeouts           timeouts.Value `tfsdk:"timeouts"`
	jobStateRecordModel
}

// stateByModelPath is the state Create saved before it read and wrote values directly: the plan
// read into the model by reflection, the id, the key and the record (built by reflection) set,
// and the model written back by reflection.
func stateByModelPath(t *testing.T, plan tfsdk.Plan, key string, job *client.Job) tftypes.Value {
	t.Helper()
	ctx := context.Background()
	var m jobResourceModel
	if d := plan.Get(ctx, &m); d.HasError() {
		t.Fatal(d)
	}
	m.ID, m.IdempotencyKey = types.StringValue(job.ID), types.StringValue(key)
	m.jobStateRecordModel = reflectedJobRecordModel(t, job, stateRecord).jobStateRecordModel
	state := tfsdk.State{Schema: plan.Schema, Raw: tftypes.NewValue(plan.Raw.Type(), nil)}
	if d := state.Set(ctx, &m); d.HasError() {
		t.Fatal(d)
	}
	return state.Raw
}

// The state Create builds directly is the one the model path built, for every shape of record
// and every plan Create receives; what Create reads of the plan and the configuration is what
// they hold.
func TestJobCreateStateMatchesTheModelPath(t *testing.T) {
	t.Parallel()
	schema, typ := jobSchemaForTest(t)
	str := func(s string) tftypes.Value { return tftypes.NewValue(tftypes.String, s) }
	timeoutsType := typ.AttributeTypes["timeouts"].(tftypes.Object)
	plans := []struct {
		name                    string
		plan, config            map[string]tftypes.Value
		wantKey                 string // "" when Create draws one
		wantWait                bool
		wantTimeout             time.Duration
		wantAPIKey, wantToken   string
		wantDefaultTimeoutDiags int
	}{
		{name: "defaults", wantWait: true, wantTimeout: defaultJobCreateTimeout},
		{name: "key configured, not waited for", plan: map[string]tftypes.Value{
			"idempotency_key": str("k-1"), "wait_for_completion": tftypes.NewValue(tftypes.Bool, false),
			"cancel_on_destroy": tftypes.NewValue(tftypes.Bool, false), "rerun_on_expiry": tftypes.NewValue(tftypes.Bool, true),
		}, wantKey: "k-1", wantTimeout: defaultJobCreateTimeout},
		{name: "timeouts and credentials", plan: map[string]tftypes.Value{
			"timeouts": tftypes.NewValue(timeoutsType, map[string]tftypes.Value{"create": str("90s"), "delete": tftypes.NewValue(tftypes.String, nil)}),
		}, config: map[string]tftypes.Value{"partner_api_key_wo": str("wo-key"), "partner_auth_token_wo": str("wo-token")},
			wantWait: true, wantTimeout: 90 * time.Second, wantAPIKey: "wo-key", wantToken: "wo-token"},
		{name: "timeouts without create", plan: map[string]tftypes.Value{
			"timeouts": tftypes.NewValue(timeoutsType, map[string]tftypes.Value{"create": tftypes.NewValue(tftypes.String, nil), "delete": str("1m")}),
		}, wantWait: true, wantTimeout: defaultJobCreateTimeout},
	}
	for _, p := range plans {
		for name, job := range recordsForTest() {
			t.Run(p.name+"/"+name, func(t *testing.T) {
				t.Parallel()
				ctx := context.Background()
				plan := tfsdk.Plan{Schema: schema.Schema, Raw: newJobPlan(typ, p.plan)}
				config := tfsdk.Config{Schema: schema.Schema, Raw: newJobConfig(typ, p.config)}
				in, diags := readJobCreateInput(ctx, plan, config)
				if diags.HasError() {
					t.Fatal(diags)
				}
				if in.workflow != createTestWorkflow || in.key != p.wantKey || in.waitForCompletion != p.wantWait ||
					in.createTimeout != p.wantTimeout || in.apiKeyWO.ValueString() != p.wantAPIKey || in.authTokenWO.ValueString() != p.wantToken {
					t.Fatalf("read %+v; want key %q, wait %v, timeout %s, credentials %q %q", in, p.wantKey, p.wantWait, p.wantTimeout, p.wantAPIKey, p.wantToken)
				}
				if in.key == "" {
					in.key = uuid.NewString()
				}
				state := tfsdk.State{Schema: schema.Schema, Raw: tftypes.NewValue(typ, nil)}
				var got diag.Diagnostics
				m, omitted := in.stateOf(job, &got)
				saveJob(&state, &m, &got)
				want := stateByModelPath(t, plan, in.key, job)
				if !state.Raw.Equal(want) {
					diffs, _ := state.Raw.Diff(want)
					t.Fatalf("state differs from the model path's: %v", diffs)
				}
				if wantOmitted := reflectedJobRecordModel(t, job, stateRecord).OutputsOmitted.ValueInt64(); int64(omitted) != wantOmitted {
					t.Errorf("omitted = %d, want %d", omitted, wantOmitted)
				}
				if got.HasError() || got.WarningsCount() != len(recordWarnings(job)) {
					t.Errorf("diagnostics %v, want the record's warnings %v", got, recordWarnings(job))
				}
			})
		}
	}
}

// An unparseable timeouts.create is reported, as the framework's timeouts value reports it.
func TestJobCreateTimeoutUnparseable(t *testing.T) {
	t.Parallel()
	schema, typ := jobSchemaForTest(t)
	timeouts := tftypes.NewValue(typ.AttributeTypes["timeouts"], map[string]tftypes.Value{
		"create": tftypes.NewValue(tftypes.String, "soon"), "delete": tftypes.NewValue(tftypes.String, nil)})
	plan := tfsdk.Plan{Schema: schema.Schema, Raw: newJobPlan(typ, map[string]tftypes.Value{"timeouts": timeouts})}
	config := tfsdk.Config{Schema: schema.Schema, Raw: newJobConfig(typ, nil)}
	_, diags := readJobCreateInput(context.Background(), plan, config)
	if !diags.HasError() || !strings.Contains(diags.Errors()[0].Summary(), "Timeout Cannot Be Parsed") {
		t.Fatalf("diagnostics %v, want Timeout Cannot Be Parsed", diags)
	}
}

// On every way out of Create, the job the service named is in state with the key it was
// submitted under, the write-only credentials are not, and the diagnostics say what happened.
func TestJobCreateKeepsTheJobOnEveryPath(t *testing.T) {
	t.Parallel()
	_, typ := jobSchemaForTest(t)
	str := func(s string) tftypes.Value { return tftypes.NewValue(tftypes.String, s) }
	const refusedID = "88888888-8888-4888-8888-888888888888"
	tests := []struct {
		name         string
		opts         emulator.Options
		fault        *emulator.Fault
		plan, config map[string]tftypes.Value
		wantStatus   []string // any of
		wantID       string   // "" for the id the service holds
		wantDiags    []string
	}{
		{name: "succeeded", wantStatus: []string{client.JobSucceeded}},
		{name: "not waited for", plan: map[string]tftypes.Value{"wait_for_completion": tftypes.NewValue(tftypes.Bool, false)},
			opts: emulator.Options{QueueDelay: time.Minute}, wantStatus: []string{client.JobQueued}},
		{name: "key configured, credentials write-only", plan: map[string]tftypes.Value{"idempotency_key": str("k-create-1")},
			config:     map[string]tftypes.Value{"idempotency_key": str("k-create-1"), "partner_api_key_wo": str("wo-secret")},
			wantStatus: []string{client.JobSucceeded}},
		{name: "failed", plan: map[string]tftypes.Value{"workflow": str(`{"1":{"class_type":"RaiseError","inputs":{"message":"boom"}}}`)},
			config:     map[string]tftypes.Value{"workflow": str(`{"1":{"class_type":"RaiseError","inputs":{"message":"boom"}}}`)},
			wantStatus: []string{client.JobFailed}, wantDiags: []string{"ERROR: Job failed"}},
		{name: "timed out", opts: emulator.Options{QueueDelay: time.Minute},
			plan: map[string]tftypes.Value{"timeouts": tftypes.NewValue(typ.AttributeTypes["timeouts"], map[string]tftypes.Value{
				"create": str("200ms"), "delete": tftypes.NewValue(tftypes.String, nil)})},
			wantStatus: []string{client.JobQueued}, wantDiags: []string{"ERROR: Job did not finish"}},
		{name: "record refused", fault: &emulator.Fault{Op: emulator.OpSubmitJob, AfterHandling: true, Status: http.StatusCreated,
			Body: `{"id":"` + refusedID + `","status":"queued","urls":{"self":"https://user:pw@example.net/j"}}`},
			wantStatus: []string{client.JobQueued}, wantID: refusedID, wantDiags: []string{"ERROR: Job submission failed"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := emulator.New(tt.opts)
			if err := srv.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(srv.Close)
			if tt.fault != nil {
				srv.Inject(*tt.fault)
			}
			s := releasingServer{providerserver.NewProtocol6(New("test")())()}
			configureAt(t, s, srv.URL(), false)
			planned, err := tfprotov6.NewDynamicValue(typ, newJobPlan(typ, tt.plan))
			if err != nil {
				t.Fatal(err)
			}
			config, err := tfprotov6.NewDynamicValue(typ, newJobConfig(typ, tt.config))
			if err != nil {
				t.Fatal(err)
			}
			prior, err := tfprotov6.NewDynamicValue(typ, tftypes.NewValue(typ, nil))
			if err != nil {
				t.Fatal(err)
			}
			resp, err := s.ApplyResourceChange(context.Background(), &tfprotov6.ApplyResourceChangeRequest{
				TypeName: "svc_job", PriorState: &prior, PlannedState: &planned, Config: &config})
			if err != nil {
				t.Fatal(err)
			}
			if got := summaries(resp.Diagnostics); strings.Join(got, "\n") != strings.Join(tt.wantDiags, "\n") {
				t.Errorf("diagnostics %q, want %q", got, tt.wantDiags)
			}
			if resp.NewState == nil {
				t.Fatal("no state")
			}
			value, err := resp.NewState.Unmarshal(typ)
			if err != nil {
				t.Fatal(err)
			}
			var attrs map[string]tftypes.Value
			if err := value.As(&attrs); err != nil || attrs == nil {
				t.Fatalf("state %v: %v", value, err)
			}
			wantID := tt.wantID
			if ids := srv.JobIDs(); wantID == "" && len(ids) == 1 {
				wantID = ids[0]
			}
			key := stringAttr(attrs, "idempotency_key")
			if configured := stringAttr(newJobAttrs(t, typ, tt.plan), "idempotency_key"); configured != "" && key != configured {
				t.Errorf("idempotency_key = %q, want the configured %q", key, configured)
			}
			if sent := srv.LastRequestHeader(emulator.OpSubmitJob).Get("Idempotency-Key"); key == "" || key != sent {
				t.Errorf("idempotency_key = %q; the submission was sent with %q", key, sent)
			}
			if id, status := stringAttr(attrs, "id"), stringAttr(attrs, "status"); id == "" || id != wantID || !slices.Contains(tt.wantStatus, status) {
				t.Errorf("state id %q, status %q; want %q, one of %q", id, status, wantID, tt.wantStatus)
			}
			for _, wo := range []string{"partner_api_key_wo", "partner_auth_token_wo"} {
				if !attrs[wo].IsNull() {
					t.Errorf("%s = %v in state, want null", wo, attrs[wo])
				}
			}
			if !value.IsFullyKnown() {
				t.Error("state holds unknown values")
			}
		})
	}
}

func newJobAttrs(t *testing.T, typ tftypes.Object, set map[string]tftypes.Value) map[string]tftypes.Value {
	t.Helper()
	var attrs map[string]tftypes.Value
	if err := newJobPlan(typ, set).As(&attrs); err != nil {
		t.Fatal(err)
	}
	return attrs
}

// jobValueWithRecord is values, svc_job's attributes, with the service's record of job in place
// of the record they hold, as Read and the resumed wait save it: decoded into the model, the
// record set, encoded; omitted counts the outputs left out of the record.
func jobValueWithRecord(typ tftypes.Object, values map[string]tftypes.Value, job *client.Job) (v tftypes.Value, omitted int, err error) {
	m, ok := decodeJob(tftypes.NewValue(typ, values))
	if !ok {
		return tftypes.Value{}, 0, errors.New("the values do not decode into svc_job's model")
	}
	var diags diag.Diagnostics
	omitted = m.setRecord(job, &diags)
	v, err = encodeJob(&m)
	return v, omitted, err
}

// A refresh keeps every held value but the record, which it replaces with the service's, as
// the model path did (state read into the model, the record set, the model written back), for
// every shape of record.
func TestJobRefreshStateMatchesTheModelPath(t *testing.T) {
	t.Parallel()
	schema, typ := jobSchemaForTest(t)
	held := settledJobAttributes()
	held["idempotency_key"], held["wait_for_completion"], held["timeouts"] = "k-held", false, map[string]any{"create": "5m", "delete": nil}
	heldValue, err := jobValue(t, typ, held).Unmarshal(typ)
	if err != nil {
		t.Fatal(err)
	}
	var heldAttrs map[string]tftypes.Value
	if err := heldValue.As(&heldAttrs); err != nil {
		t.Fatal(err)
	}
	for name, job := range recordsForTest() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			got, _, err := jobValueWithRecord(typ, heldAttrs, job)
			if err != nil {
				t.Fatal(err)
			}
			state := tfsdk.State{Schema: schema.Schema, Raw: heldValue}
			var m jobResourceModel
			if d := state.Get(ctx, &m); d.HasError() {
				t.Fatal(d)
			}
			m.jobStateRecordModel = reflectedJobRecordModel(t, job, stateRecord).jobStateRecordModel
			if d := state.Set(ctx, &m); d.HasError() {
				t.Fatal(d)
			}
			if !got.Equal(state.Raw) {
				diffs, _ := got.Diff(state.Raw)
				t.Fatalf("state differs from the model path's: %v", diffs)
			}
		})
	}
}

// An update of a job state holds as still running waits for it and saves, with the plan's
// settings, the record the service ends with, as the model path did; one that only changes
// settings saves the plan as it is; one whose job cannot be read keeps the held record.
func TestJobUpdateStateMatchesTheModelPath(t *testing.T) {
	t.Parallel()
	schema, typ := jobSchemaForTest(t)
	tests := []struct {
		name        string
		heldStatus  string
		purge       bool
		wantRecord  bool // the service's record replaces the held one
		wantSummary []string
	}{
		{name: "running in state, finished on the service", heldStatus: client.JobRunning, wantRecord: true},
		{name: "finished in state: settings only", heldStatus: client.JobSucceeded},
		{name: "running in state, gone from the service", heldStatus: client.JobRunning, purge: true,
			wantSummary: []string{"ERROR: Reading job failed"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			srv, submitted, done := finishedTestJob(t, "k-update")
			// The state an interrupted apply left: the job as it was first seen, running.
			stale := *submitted
			stale.Status, stale.Outputs = tt.heldStatus, nil
			heldValues := newJobAttrs(t, typ, map[string]tftypes.Value{
				"id": tftypes.NewValue(tftypes.String, stale.ID), "idempotency_key": tftypes.NewValue(tftypes.String, "k-update")})
			held, _, err := jobValueWithRecord(typ, heldValues, &stale)
			if err != nil {
				t.Fatal(err)
			}
			plannedValues := maps.Clone(heldValues)
			plannedValues["cancel_on_destroy"] = tftypes.NewValue(tftypes.Bool, false)
			plannedKnown, _, err := jobValueWithRecord(typ, plannedValues, &stale)
			if err != nil {
				t.Fatal(err)
			}
			planned := plannedKnown
			if tt.heldStatus == client.JobRunning {
				// As planJobResume plans a wait: the record unknown.
				var known map[string]tftypes.Value
				if err := plannedKnown.As(&known); err != nil {
					t.Fatal(err)
				}
				attrs := maps.Clone(known) // As hands over the value's own map
				for name := range jobStateRecordAttrTypes {
					attrs[name] = tftypes.NewValue(attrs[name].Type(), tftypes.UnknownValue)
				}
				planned = tftypes.NewValue(typ, attrs)
			}
			if tt.purge {
				srv.PurgeJob(stale.ID)
			}
			s := releasingServer{providerserver.NewProtocol6(New("test")())()}
			configureAt(t, s, srv.URL(), false)
			dv := func(v tftypes.Value) *tfprotov6.DynamicValue {
				d, err := tfprotov6.NewDynamicValue(typ, v)
				if err != nil {
					t.Fatal(err)
				}
				return &d
			}
			config := newJobConfig(typ, map[string]tftypes.Value{"cancel_on_destroy": tftypes.NewValue(tftypes.Bool, false)})
			resp, err := s.ApplyResourceChange(ctx, &tfprotov6.ApplyResourceChangeRequest{
				TypeName: "svc_job", PriorState: dv(held), PlannedState: dv(planned), Config: dv(config)})
			if err != nil {
				t.Fatal(err)
			}
			if got := summaries(resp.Diagnostics); strings.Join(got, "\n") != strings.Join(tt.wantSummary, "\n") {
				t.Errorf("diagnostics %q, want %q", got, tt.wantSummary)
			}
			got, err := resp.NewState.Unmarshal(typ)
			if err != nil {
				t.Fatal(err)
			}
			want := plannedKnown // the plan's settings, the record held
			if tt.wantRecord {
				plan := tfsdk.Plan{Schema: schema.Schema, Raw: planned}
				want = stateByModelPath(t, plan, "k-update", done)
			}
			if !got.Equal(want) {
				diffs, _ := got.Diff(want)
				t.Fatalf("state differs from the model path's: %v", diffs)
			}
		})
	}
}

// objectAttrs gives an object's attributes, and refuses what has none: tftypes reads a null
// object as an empty map, which would pass for a job with no id.
func TestObjectAttrs(t *testing.T) {
	t.Parallel()
	typ := tftypes.Object{AttributeTypes: map[string]tftypes.Type{"id": tftypes.String}}
	for _, tt := range []struct {
		name   string
		value  tftypes.Value
		wantOK bool
	}{
		{"object", tftypes.NewValue(typ, map[string]tftypes.Value{"id": tftypes.NewValue(tftypes.String, "j1")}), true},
		{"null", tftypes.NewValue(typ, nil), false},
		{"unknown", tftypes.NewValue(typ, tftypes.UnknownValue), false},
		{"not an object", tftypes.NewValue(tftypes.String, "j1"), false},
	} {
		attrs, ok := objectAttrs(tt.value)
		if ok != tt.wantOK || (ok && stringAttr(attrs, "id") != "j1") {
			t.Errorf("%s: attrs %v, ok %v; want ok %v", tt.name, attrs, ok, tt.wantOK)
		}
	}
}

// A plan of a job state holds as still running, with wait_for_completion true, plans an update
// that waits for it: the record unknown but what cannot change, and a warning naming the job.
// Any other plan is left as it is, a replacement too (the framework tells a resource's ModifyPlan
// nothing of the replacements its attributes plan).
func TestPlanJobResume(t *testing.T) {
	t.Parallel()
	schema, typ := jobSchemaForTest(t)
	tests := []struct {
		name       string
		id, status string
		wait       bool
		replace    map[string]tftypes.Value // planned values that replace the job
		wantResume bool
	}{
		{name: "running, waited for", id: "j1", status: client.JobRunning, wait: true, wantResume: true},
		{name: "queued, waited for", id: "j1", status: client.JobQueued, wait: true, wantResume: true},
		{name: "succeeded", id: "j1", status: client.JobSucceeded, wait: true},
		{name: "running, not waited for", id: "j1", status: client.JobRunning},
		{name: "no status read", id: "j1", wait: true},
		{name: "running, workflow changed", id: "j1", status: client.JobRunning, wait: true,
			replace: map[string]tftypes.Value{"workflow": tftypes.NewValue(tftypes.String, `{"9":{"class_type":"X","inputs":{}}}`)}},
		{name: "running, key changed", id: "j1", status: client.JobRunning, wait: true,
			replace: map[string]tftypes.Value{"idempotency_key": tftypes.NewValue(tftypes.String, "k2")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			values := newJobAttrs(t, typ, map[string]tftypes.Value{
				"id": tftypes.NewValue(tftypes.String, tt.id), "idempotency_key": tftypes.NewValue(tftypes.String, "k"),
				"wait_for_completion": tftypes.NewValue(tftypes.Bool, tt.wait)})
			held, _, err := jobValueWithRecord(typ, values, &client.Job{ID: tt.id, Status: tt.status, CreatedAt: "2026-11-23T10:00:00Z"})
			if err != nil {
				t.Fatal(err)
			}
			heldAttrs, _ := objectAttrs(held)
			planAttrs := maps.Clone(heldAttrs) // As shares the value's own map
			maps.Copy(planAttrs, tt.replace)
			planned := tftypes.NewValue(typ, planAttrs)
			req := resource.ModifyPlanRequest{State: tfsdk.State{Schema: schema.Schema, Raw: held}, Plan: tfsdk.Plan{Schema: schema.Schema, Raw: planned}}
			resp := resource.ModifyPlanResponse{Plan: req.Plan}
			planJobResume(context.Background(), req, &resp)
			if resp.Diagnostics.HasError() {
				t.Fatal(resp.Diagnostics)
			}
			if !tt.wantResume {
				if !resp.Plan.Raw.Equal(planned) || len(resp.Diagnostics) != 0 {
					t.Fatalf("plan changed (%v) or diagnostics %v; want the plan as it was", !resp.Plan.Raw.Equal(held), resp.Diagnostics)
				}
				return
			}
			if resp.Diagnostics.WarningsCount() != 1 || !strings.Contains(resp.Diagnostics.Warnings()[0].Detail(), "Job "+tt.id+" is "+tt.status) {
				t.Errorf("diagnostics %v, want one warning naming the job and its status", resp.Diagnostics)
			}
			resumed, _ := objectAttrs(resp.Plan.Raw)
			for name := range jobStateRecordAttrTypes {
				if resumed[name].IsKnown() {
					t.Errorf("%s known in the plan, want unknown until the wait ends", name)
				}
			}
		})
	}
}

// finishedTestJob runs createTestWorkflow under key on a reference server of the test's own and
// returns the server, the job as submitted and the job finished.
func finishedTestJob(t *testing.T, key string) (srv *emulator.Server, submitted, done *client.Job) {
	t.Helper()
	ctx := context.Background()
	srv = emulator.New(emulator.Options{})
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	c, err := client.New(client.Config{Endpoint: srv.URL(), MaxRetries: 0})
	if err != nil {
		t.Fatal(err)
	}
	if submitted, err = c.SubmitJob(ctx, client.SubmitJobInput{Workflow: []byte(createTestWorkflow), IdempotencyKey: key}); err != nil {
		t.Fatal(err)
	}
	if done, err = c.WaitJob(ctx, submitted, client.WaitOptions{}); err != nil {
		t.Fatal(err)
	}
	return srv, submitted, done
}

// A state of schema version 0 is upgraded from itself alone (the endpoint answers nothing):
// what version 1 no longer keeps is dropped (the outputs' signed URLs of the oldest states, an
// ended job's run in flight, its timing, the count of outputs left out), the kept times are cut
// to the second, and every other value is kept as it was.
func TestJobStateV0Upgrades(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := serverStack(newSvcProvider("test", time.Now))
	configureAt(t, s, "http://127.0.0.1:1", false)
	schemas, err := s.GetProviderSchema(ctx, &tfprotov6.GetProviderSchemaRequest{})
	if err != nil {
		t.Fatal(err)
	}
	jobSchema := schemas.ResourceSchemas["svc_job"]
	if jobSchema.Version != 1 {
		t.Fatalf("svc_job's schema version %d, want 1", jobSchema.Version)
	}
	typ := jobSchema.ValueType()
	want, err := jobValue(t, typ, settledJobAttributes()).Unmarshal(typ)
	if err != nil {
		t.Fatal(err)
	}
	for name, v0 := range map[string]map[string]any{
		"with signed URLs":     jobStateV0Attributes(withSignedURLsHeld),
		"with a run in flight": jobStateV0Attributes(heldRunInFlight),
		"ended as v0 kept it":  jobStateV0Attributes(nil),
	} {
		doc, err := json.Marshal(v0)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := s.UpgradeResourceState(ctx, &tfprotov6.UpgradeResourceStateRequest{
			TypeName: "svc_job", Version: 0, RawState: &tfprotov6.RawState{JSON: doc}})
		if err != nil || len(resp.Diagnostics) > 0 || resp.UpgradedState == nil {
			t.Fatalf("%s: upgrade: %v %v", name, err, summaries(resp.Diagnostics))
		}
		got, err := resp.UpgradedState.Unmarshal(typ)
		if err != nil {
			t.Fatal(err)
		}
		if !got.Equal(want) {
			diffs, _ := got.Diff(want)
			t.Errorf("%s: upgraded state differs from version 1's: %v", name, diffs)
		}
	}
}
