package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/defaults"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// countingServer counts the refreshes and plans that reach the server it wraps.
type countingServer struct {
	tfprotov6.ProviderServer
	reads, plans int
}

func (c *countingServer) ReadResource(ctx context.Context, req *tfprotov6.ReadResourceRequest) (*tfprotov6.ReadResourceResponse, error) {
	c.reads++
	return c.ProviderServer.ReadResource(ctx, req)
}

func (c *countingServer) PlanResourceChange(ctx context.Context, req *tfprotov6.PlanResourceChangeRequest) (*tfprotov6.PlanResourceChangeResponse, error) {
	c.plans++
	return c.ProviderServer.PlanResourceChange(ctx, req)
}

// TestSettledJobServerAnswersAsTheFramework holds settledJobServer to the framework's answers:
// for each state and configuration, the refresh and the plan it returns are the ones the
// framework path returns, and it answers itself exactly where it should (a settled record, a
// plan that changes nothing, a destroy).
func TestSettledJobServerAnswersAsTheFramework(t *testing.T) {
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	tests := []settledCase{
		{name: "settled and unchanged", answerRead: true, answerPlan: true},
		{name: "provider settings unknown", unknown: true, answerRead: true, answerPlan: true},
		{name: "destroy", proposed: func(map[string]any) bool { return false }, answerRead: true, answerPlan: true},
		{name: "failed job", state: func(s map[string]any) {
			s["status"], s["outputs"] = "failed", []any{}
			s["error"] = map[string]any{"code": "node_execution_error", "message": "boom", "node_id": "1", "class_type": "SaveImage", "traceback": nil}
		}, answerRead: true, answerPlan: true},
		{name: "still running", state: func(s map[string]any) {
			s["status"], s["completed_at"], s["outputs"] = "running", nil, []any{}
		}},
		{name: "running, not waited for", state: func(s map[string]any) {
			s["status"], s["completed_at"], s["wait_for_completion"] = "running", nil, false
		}, config: func(c map[string]any) { c["wait_for_completion"] = false }},
		{name: "expired", state: func(s map[string]any) { s["expires_at"] = "2026-11-23T11:00:00Z" }, answerRead: true, answerPlan: true},
		{name: "output without its hash", state: func(s map[string]any) { output(s)["hash"] = nil }, answerRead: true, answerPlan: true},
		{name: "canceled", state: func(s map[string]any) { s["status"], s["outputs"] = "canceled", []any{} }, answerRead: true, answerPlan: true},
		{name: "rerun_on_expiry", state: func(s map[string]any) { s["rerun_on_expiry"] = true },
			config: func(c map[string]any) { c["rerun_on_expiry"] = true }, answerRead: true, answerPlan: true},
		{name: "rerun_on_expiry, expired", state: func(s map[string]any) {
			s["rerun_on_expiry"], s["expires_at"] = true, "2026-11-23T11:00:00Z"
		}, config: func(c map[string]any) { c["rerun_on_expiry"] = true }, answerPlan: true},
		{name: "a default no longer held", state: func(s map[string]any) { s["validate"] = false }, answerRead: true},
		{name: "a non-default value configured", state: func(s map[string]any) { s["cancel_on_destroy"] = false },
			config: func(c map[string]any) { c["cancel_on_destroy"] = false }, answerRead: true, answerPlan: true},
		{name: "workflow reformatted", proposed: func(p map[string]any) bool {
			p["workflow"] = "{ \"1\": {\"inputs\": {}, \"class_type\": \"SaveImage\"} }"
			return true
		}, config: func(c map[string]any) {
			c["workflow"] = "{ \"1\": {\"inputs\": {}, \"class_type\": \"SaveImage\"} }"
		}, answerRead: true},
		{name: "workflow changed", proposed: func(p map[string]any) bool {
			p["workflow"] = `{"1":{"class_type":"PreviewImage","inputs":{}}}`
			return true
		}, config: func(c map[string]any) { c["workflow"] = `{"1":{"class_type":"PreviewImage","inputs":{}}}` }, answerRead: true},
	}
	for _, tt := range tests {
		for _, sent := range []bool{false, true} { // whether Terraform sends the identity held (Terraform 1.12 and later)
			t.Run(fmt.Sprintf("%s, identity sent %v", tt.name, sent), func(t *testing.T) {
				t.Parallel()
				tt.compare(t, clock, sent)
			})
		}
	}
}

// settledCase is one case of TestSettledJobServerAnswersAsTheFramework.
type settledCase struct {
	name       string
	state      func(map[string]any)      // changes to a settled record
	config     func(map[string]any)      // changes to the configuration (workflow only)
	proposed   func(map[string]any) bool // changes to the proposed new state; false: destroy
	unknown    bool                      // a provider setting is unknown (from a resource not applied yet)
	answerRead bool                      // the refresh is answered without the framework
	answerPlan bool                      // the plan is answered without the framework
}

// compare asks both paths to refresh and plan the case's job, sending the identity the job
// holds when sent, and compares their answers.
func (tt settledCase) compare(t *testing.T, clock func() time.Time, sent bool) {
	counted, shortcut, framework, jobType := settledAndFramework(clock)
	state := settledJobAttributes()
	if tt.state != nil {
		tt.state(state)
	}
	config := jobConfigOf(state)
	if tt.config != nil {
		tt.config(config)
	}
	proposed, destroy := maps.Clone(state), false
	if tt.proposed != nil {
		destroy = !tt.proposed(proposed)
	}
	read := &tfprotov6.ReadResourceRequest{TypeName: "svc_job", CurrentState: jobValue(t, jobType, state)}
	plan := &tfprotov6.PlanResourceChangeRequest{TypeName: "svc_job", PriorState: read.CurrentState,
		Config: jobValue(t, jobType, config), ProposedNewState: jobValue(t, jobType, proposed)}
	if sent {
		identity, err := tfprotov6.NewDynamicValue(jobIdentityType, jobIdentityValue(state["id"].(string)))
		if err != nil {
			t.Fatal(err)
		}
		read.CurrentIdentity = &tfprotov6.ResourceIdentityData{IdentityData: &identity}
		plan.PriorIdentity = read.CurrentIdentity
	}
	if destroy {
		plan.ProposedNewState = nullJobValue(t, jobType)
	}
	for _, s := range []tfprotov6.ProviderServer{shortcut, framework} {
		configureAt(t, s, "http://127.0.0.1:1", tt.unknown)
	}
	gotRead, wantRead := callRead(t, shortcut, read), callRead(t, framework, read)
	compareAnswers(t, jobType, "refresh", gotRead, wantRead)
	gotPlan, wantPlan := callPlan(t, shortcut, plan), callPlan(t, framework, plan)
	compareAnswers(t, jobType, "plan", gotPlan, wantPlan)
	if answered := counted.reads == 0; answered != tt.answerRead {
		t.Errorf("refresh answered without the framework: %v, want %v", answered, tt.answerRead)
	}
	if answered := counted.plans == 0; answered != tt.answerPlan {
		t.Errorf("plan answered without the framework: %v, want %v", answered, tt.answerPlan)
	}
}

// settledAndFramework returns the two paths a test compares, on providers of their own with the
// clock now: settledJobServer over a framework server whose calls are counted (a call the layer
// answers itself is not), the framework server alone, and svc_job's type.
func settledAndFramework(now func() time.Time) (counted *countingServer, shortcut, framework tfprotov6.ProviderServer, jobType tftypes.Type) {
	p := newSvcProvider("test", now)
	counted = &countingServer{ProviderServer: releasingServer{providerserver.NewProtocol6(p)()}}
	shortcut = newSettledJobServer(counted, now, p.configuredData)
	framework = releasingServer{providerserver.NewProtocol6(newWithClock("test", now)())()}
	return counted, shortcut, framework, shortcut.(*settledJobServer).jobType
}

// answer is what a refresh or a plan returns that Terraform acts on.
type answer struct {
	state       *tfprotov6.DynamicValue
	identity    *tfprotov6.ResourceIdentityData
	private     []byte
	replace     int
	diagnostics []string
}

func callRead(t *testing.T, s tfprotov6.ProviderServer, req *tfprotov6.ReadResourceRequest) answer {
	t.Helper()
	resp, err := s.ReadResource(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	return answer{state: resp.NewState, identity: resp.NewIdentity, private: resp.Private, diagnostics: summaries(resp.Diagnostics)}
}

func callPlan(t *testing.T, s tfprotov6.ProviderServer, req *tfprotov6.PlanResourceChangeRequest) answer {
	t.Helper()
	resp, err := s.PlanResourceChange(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	return answer{state: resp.PlannedState, identity: resp.PlannedIdentity, private: resp.PlannedPrivate, replace: len(resp.RequiresReplace), diagnostics: summaries(resp.Diagnostics)}
}

func summaries(diags []*tfprotov6.Diagnostic) []string {
	var out []string
	for _, d := range diags {
		out = append(out, d.Severity.String()+": "+d.Summary)
	}
	return out
}

func compareAnswers(t *testing.T, typ tftypes.Type, call string, got, want answer) {
	t.Helper()
	if len(got.private) != len(want.private) || got.replace != want.replace || len(got.diagnostics) != len(want.diagnostics) {
		t.Errorf("%s: got private %q, %d replacements, diagnostics %q; the framework: %q, %d, %q", call,
			got.private, got.replace, got.diagnostics, want.private, want.replace, want.diagnostics)
	}
	for i := range min(len(got.diagnostics), len(want.diagnostics)) {
		if got.diagnostics[i] != want.diagnostics[i] {
			t.Errorf("%s: diagnostic %q, the framework %q", call, got.diagnostics[i], want.diagnostics[i])
		}
	}
	if g, w := identityOf(t, got.identity), identityOf(t, want.identity); !g.Equal(w) {
		t.Errorf("%s: identity %v, the framework's %v", call, g, w)
	}
	if (got.state == nil) != (want.state == nil) {
		t.Fatalf("%s: state %v, the framework %v", call, got.state, want.state)
	}
	if got.state == nil {
		return
	}
	g, err := got.state.Unmarshal(typ)
	if err != nil {
		t.Fatal(err)
	}
	w, err := want.state.Unmarshal(typ)
	if err != nil {
		t.Fatal(err)
	}
	if !g.Equal(w) {
		diffs, _ := g.Diff(w)
		t.Errorf("%s: state differs from the framework's: %v", call, diffs)
	}
}

// identityOf is svc_job's identity as a value; a null one when none was returned.
func identityOf(t *testing.T, d *tfprotov6.ResourceIdentityData) tftypes.Value {
	t.Helper()
	if d == nil || d.IdentityData == nil {
		return tftypes.NewValue(jobIdentityType, nil)
	}
	v, err := d.IdentityData.Unmarshal(jobIdentityType)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// settledJobAttributes is the state of a job that succeeded with one output, settled at
// 2026-11-23T12:00:00Z.
func settledJobAttributes() map[string]any {
	return map[string]any{
		"id": "cfd3475c-521f-4ce3-8430-549ea8a6dac0", "workflow": `{"1":{"class_type":"SaveImage","inputs":{}}}`,
		"idempotency_key": "f57199cf-800c-403f-9e91-6ae8341fb67b", "partner_api_key_wo": nil, "partner_auth_token_wo": nil,
		"wait_for_completion": true, "cancel_on_destroy": true, "rerun_on_expiry": false, "validate": true, "timeouts": nil,
		"status": "succeeded", "completed_at": "2026-11-23T10:00:02Z", "expires_at": "2026-11-24T10:00:02Z",
		"outputs": []any{map[string]any{"node_id": "1", "name": "job_00001_.png", "type": "image", "content_type": "image/png",
			"size_bytes": 194, "id": "8ab7c361-015a-491c-a2ee-b6ee819b2663", "hash": "blake3:ed2c", "job_id": nil}},
		"error": nil,
	}
}

// jobStateV0Attributes is settledJobAttributes as schema version 0 held them (the record
// whole, times as the service wrote them), then changed by held when not nil.
func jobStateV0Attributes(held func(map[string]any)) map[string]any {
	s := settledJobAttributes()
	s["created_at"], s["started_at"] = "2026-11-23T10:00:00.123456Z", "2026-11-23T10:00:01.5Z"
	s["completed_at"], s["expires_at"] = "2026-11-23T10:00:02.999999Z", "2026-11-24T10:00:02.000001Z"
	s["queue_position"], s["progress"], s["outputs_omitted"], s["urls"] = nil, nil, 0, nil
	s["metrics"] = map[string]any{"queue_ms": 0}
	if held != nil {
		held(s)
	}
	return s
}

// withSignedURLsHeld sets in state what the outputs held before svc_job dropped their signed
// URLs.
func withSignedURLsHeld(s map[string]any) {
	output(s)["url"] = "http://127.0.0.1:1/api/v2/assets/8ab7c361-015a-491c-a2ee-b6ee819b2663/content?sig=1"
	output(s)["url_expires_at"] = "2026-11-23T13:00:00Z"
}

// heldRunInFlight sets in state what an ended job held of its run in flight before those values
// were nulled once it ended.
func heldRunInFlight(s map[string]any) {
	s["progress"] = map[string]any{"value": 1, "nodes_done": 1, "nodes_total": 1, "current_node": nil,
		"current_node_class": nil, "step": nil, "steps": nil, "message": "done"}
	s["urls"] = map[string]any{"self": "http://127.0.0.1:1/api/v2/jobs/cfd3475c-521f-4ce3-8430-549ea8a6dac0",
		"events": "http://127.0.0.1:1/api/v2/jobs/cfd3475c-521f-4ce3-8430-549ea8a6dac0/events",
		"cancel": "http://127.0.0.1:1/api/v2/jobs/cfd3475c-521f-4ce3-8430-549ea8a6dac0/cancel", "logs": "http://127.0.0.1:1/logs"}
}

// output is the first output of a state made by settledJobAttributes.
func output(state map[string]any) map[string]any {
	return state["outputs"].([]any)[0].(map[string]any)
}

// jobConfigOf is the configuration that leaves everything but the workflow unset.
func jobConfigOf(state map[string]any) map[string]any {
	config := map[string]any{}
	for name := range state {
		config[name] = nil
	}
	config["workflow"] = state["workflow"]
	return config
}

func jobValue(t *testing.T, typ tftypes.Type, attrs map[string]any) *tfprotov6.DynamicValue {
	t.Helper()
	doc, err := json.Marshal(attrs)
	if err != nil {
		t.Fatal(err)
	}
	v, err := (&tfprotov6.RawState{JSON: doc}).UnmarshalWithOpts(typ, tfprotov6.UnmarshalOpts{})
	if err != nil {
		t.Fatal(err)
	}
	dv, err := tfprotov6.NewDynamicValue(typ, v)
	if err != nil {
		t.Fatal(err)
	}
	return &dv
}

func nullJobValue(t *testing.T, typ tftypes.Type) *tfprotov6.DynamicValue {
	t.Helper()
	dv, err := tfprotov6.NewDynamicValue(typ, tftypes.NewValue(typ, nil))
	if err != nil {
		t.Fatal(err)
	}
	return &dv
}

// configureAt configures s as Terraform does, against endpoint, without retries; with
// settingsUnknown, api_key is unknown (it comes from a resource not applied yet).
func configureAt(t *testing.T, s tfprotov6.ProviderServer, endpoint string, settingsUnknown bool) {
	t.Helper()
	ctx := context.Background()
	schemaResp, err := s.GetProviderSchema(ctx, &tfprotov6.GetProviderSchemaRequest{})
	if err != nil {
		t.Fatal(err)
	}
	typ := schemaResp.Provider.ValueType().(tftypes.Object)
	settings := map[string]tftypes.Value{}
	for name, at := range typ.AttributeTypes {
		settings[name] = tftypes.NewValue(at, nil)
	}
	settings["endpoint"] = tftypes.NewValue(tftypes.String, endpoint)
	settings["max_retries"] = tftypes.NewValue(tftypes.Number, 0)
	if settingsUnknown {
		settings["api_key"] = tftypes.NewValue(tftypes.String, tftypes.UnknownValue)
	}
	config, err := tfprotov6.NewDynamicValue(typ, tftypes.NewValue(typ, settings))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := s.ConfigureProvider(ctx, &tfprotov6.ConfigureProviderRequest{TerraformVersion: "1.11.4", Config: &config})
	if err != nil || len(resp.Diagnostics) > 0 {
		t.Fatalf("configure: %v %v", err, summaries(resp.Diagnostics))
	}
}

// settledJobServer plans a no-change plan by jobBoolDefaults: the schema's defaults are those,
// and svc_job has no other. An attribute given a default elsewhere fails here.
func TestJobBoolDefaultsAreTheSchemas(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var resp resource.SchemaResponse
	NewJobResource().Schema(ctx, resource.SchemaRequest{}, &resp)
	seen := 0
	for name, a := range resp.Schema.Attributes {
		var has bool
		switch a := a.(type) {
		case schema.BoolAttribute:
			if a.Default == nil {
				continue
			}
			var def defaults.BoolResponse
			a.Default.DefaultBool(ctx, defaults.BoolRequest{Path: path.Root(name)}, &def)
			if want, listed := jobBoolDefaults[name]; !listed || def.PlanValue.IsNull() || def.PlanValue.ValueBool() != want {
				t.Errorf("%s: the schema's default %v, jobBoolDefaults %v (listed %v)", name, def.PlanValue, want, listed)
			}
			seen++
			continue
		case schema.StringAttribute:
			has = a.Default != nil
		case schema.Int64Attribute:
			has = a.Default != nil
		case schema.Float64Attribute:
			has = a.Default != nil
		case schema.MapAttribute:
			has = a.Default != nil
		case schema.ListNestedAttribute:
			has = a.Default != nil
		case schema.SingleNestedAttribute:
			has = a.Default != nil
		default:
			t.Errorf("%s is a %T: this test does not know whether it has a default", name, a)
		}
		if has {
			t.Errorf("%s has a default that jobBoolDefaults does not list", name)
		}
	}
	if seen != len(jobBoolDefaults) {
		t.Errorf("the schema has %d defaults, jobBoolDefaults %d", seen, len(jobBoolDefaults))
	}
}
