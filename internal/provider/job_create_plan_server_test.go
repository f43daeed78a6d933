package provider

import (
	"context"
	"maps"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/boolplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64default"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/svc-org/terraform-provider-svc/internal/emulator"
)

// createTestWorkflow is a workflow of a new job that the reference server's object_info accepts
// and that it runs.
const createTestWorkflow = `{"1":{"class_type":"EmptyImage","inputs":{"width":8,"height":8,"batch_size":1,"color":0}},` +
	`"2":{"class_type":"SaveImage","inputs":{"images":["1",0],"filename_prefix":"t"}}}`

// TestJobCreatePlanServerAnswersAsTheFramework holds jobCreatePlanServer to the framework's
// answers: for each configuration of a new job, the plan it returns (planned state, private
// data, diagnostics, replacements) is the one the framework path returns, and it answers itself
// exactly where it should.
func TestJobCreatePlanServerAnswersAsTheFramework(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name            string
		config          func(map[string]any) // changes to a configuration that sets the workflow only
		unknown         string               // an attribute unknown in the configuration
		prior           bool                 // a job in state (an update, not a create)
		settingsUnknown bool                 // a provider setting unknown at plan time
		objectInfoCold  bool                 // no plan has read object_info yet
		objectInfoDown  bool                 // object_info answers 500
		answered        bool                 // the plan is answered without the framework
		diagnostics     bool                 // the plan has diagnostics
	}{
		{name: "defaults unset, workflow checked", answered: true},
		{name: "defaults set true", config: func(c map[string]any) {
			c["wait_for_completion"], c["cancel_on_destroy"], c["rerun_on_expiry"], c["validate"] = true, true, true, true
		}, answered: true},
		{name: "defaults set false", config: func(c map[string]any) {
			c["wait_for_completion"], c["cancel_on_destroy"], c["rerun_on_expiry"], c["validate"] = false, false, false, false
		}, answered: true},
		{name: "idempotency_key set", config: func(c map[string]any) { c["idempotency_key"] = "batch-0001" }, answered: true},
		{name: "timeouts set", config: func(c map[string]any) {
			c["timeouts"] = map[string]any{"create": "5m", "delete": nil}
		}, answered: true},
		{name: "write-only key set", config: func(c map[string]any) { c["partner_api_key_wo"] = "pk-secret" }, answered: true},
		{name: "unknown class", config: func(c map[string]any) {
			c["workflow"] = `{"1":{"class_type":"NoSuchNode","inputs":{}}}`
		}, diagnostics: true},
		{name: "unknown class, validate false", config: func(c map[string]any) {
			c["workflow"], c["validate"] = `{"1":{"class_type":"NoSuchNode","inputs":{}}}`, false
		}, answered: true},
		{name: "object_info not read yet", objectInfoCold: true},
		{name: "object_info unavailable", objectInfoDown: true, diagnostics: true},
		{name: "object_info unavailable, validate false", config: func(c map[string]any) { c["validate"] = false },
			objectInfoDown: true, answered: true},
		{name: "workflow unknown", unknown: "workflow"},
		{name: "idempotency_key unknown", unknown: "idempotency_key"},
		{name: "cancel_on_destroy unknown", unknown: "cancel_on_destroy"},
		{name: "provider settings unknown", settingsUnknown: true},
		{name: "update of a job in state", prior: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := newTestServer(t, emulator.Options{})
			if tt.objectInfoDown {
				srv.Inject(emulator.Fault{Op: emulator.OpV1ObjectInfo, Status: 500, Body: `{"error":{"code":"internal","message":"down"}}`})
			}
			p := newSvcProvider("test", time.Now)
			counted := &countingServer{ProviderServer: releasingServer{providerserver.NewProtocol6(p)()}}
			shortcut := newJobCreatePlanServer(counted, p.configuredData)
			framework := releasingServer{providerserver.NewProtocol6(New("test")())()}
			jobType := shortcut.(*jobCreatePlanServer).jobType
			for _, s := range []tfprotov6.ProviderServer{shortcut, framework} {
				configureAt(t, s, srv.URL(), tt.settingsUnknown)
			}
			config := jobConfigOf(settledJobAttributes())
			config["workflow"] = createTestWorkflow
			if !tt.objectInfoCold {
				// A first plan reads object_info (through the framework); later plans use it.
				callPlan(t, shortcut, createPlanRequest(t, jobType, config, ""))
				counted.plans = 0
			}
			if tt.config != nil {
				tt.config(config)
			}
			plan := createPlanRequest(t, jobType, config, tt.unknown)
			if tt.prior {
				plan.PriorState = jobValue(t, jobType, settledJobAttributes())
			}
			requestsBefore := srv.Requests(emulator.OpV1ObjectInfo)
			got := callPlan(t, shortcut, plan)
			sent := srv.Requests(emulator.OpV1ObjectInfo) - requestsBefore
			compareAnswers(t, jobType, "plan", got, callPlan(t, framework, plan))
			if answered := counted.plans == 0; answered != tt.answered {
				t.Errorf("plan answered without the framework: %v, want %v", answered, tt.answered)
			}
			if tt.answered && sent != 0 {
				t.Errorf("plan answered without the framework sent %d object_info requests, want 0", sent)
			}
			if (len(got.diagnostics) > 0) != tt.diagnostics {
				t.Errorf("diagnostics %q, want some: %v", got.diagnostics, tt.diagnostics)
			}
		})
	}
}

// TestCreatePlanRulesRefuseWhatTheyDoNotKnow shows the guard of jobCreatePlanServer: svc_job's
// schema is planned by its rules, and a schema with anything they do not cover is not.
func TestCreatePlanRulesRefuseWhatTheyDoNotKnow(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tests := []struct {
		name   string
		change func(attrs map[string]schema.Attribute, s *schema.Schema)
		ok     bool
	}{
		{name: "svc_job as it is", ok: true},
		{name: "a string default", change: func(attrs map[string]schema.Attribute, _ *schema.Schema) {
			attrs["mode"] = schema.StringAttribute{Optional: true, Computed: true, Default: stringdefault.StaticString("fast")}
		}},
		{name: "a default on a nested attribute", change: func(attrs map[string]schema.Attribute, _ *schema.Schema) {
			attrs["limits"] = schema.SingleNestedAttribute{Optional: true, Attributes: map[string]schema.Attribute{
				"max": schema.Int64Attribute{Optional: true, Computed: true, Default: int64default.StaticInt64(3)},
			}}
		}},
		{name: "a computed attribute nested in a configurable one", change: func(attrs map[string]schema.Attribute, _ *schema.Schema) {
			attrs["limits"] = schema.SingleNestedAttribute{Optional: true, Attributes: map[string]schema.Attribute{
				"max": schema.Int64Attribute{Computed: true},
			}}
		}},
		{name: "RequiresReplace on a string: nothing to replace in a create", change: func(attrs map[string]schema.Attribute, _ *schema.Schema) {
			id := attrs["id"].(schema.StringAttribute)
			id.PlanModifiers = append(id.PlanModifiers, stringplanmodifier.RequiresReplace())
			attrs["id"] = id
		}, ok: true},
		{name: "a plan modifier the rules do not know", change: func(attrs map[string]schema.Attribute, _ *schema.Schema) {
			validate := attrs["validate"].(schema.BoolAttribute)
			validate.PlanModifiers = append(validate.PlanModifiers, boolplanmodifier.RequiresReplace())
			attrs["validate"] = validate
		}},
		{name: "a plan modifier that plans a new id", change: func(attrs map[string]schema.Attribute, _ *schema.Schema) {
			id := attrs["id"].(schema.StringAttribute)
			id.PlanModifiers = append(id.PlanModifiers, idFromConfig{from: []string{"idempotency_key"},
				build: func(v []string) (string, error) { return v[0], nil }})
			attrs["id"] = id
		}},
		{name: "a block", change: func(_ map[string]schema.Attribute, s *schema.Schema) {
			s.Blocks = map[string]schema.Block{"retry": schema.SingleNestedBlock{}}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var resp resource.SchemaResponse
			NewJobResource().Schema(ctx, resource.SchemaRequest{}, &resp)
			s := resp.Schema
			if tt.change != nil {
				tt.change(s.Attributes, &s)
			}
			if _, ok := createPlanRulesOf(ctx, s); ok != tt.ok {
				t.Errorf("createPlanRulesOf ok = %v, want %v", ok, tt.ok)
			}
		})
	}
	if _, installed := newJobCreatePlanServer(nil, nil).(*jobCreatePlanServer); !installed {
		t.Error("svc_job's schema is not planned by jobCreatePlanServer's rules: the server is not installed")
	}
}

// createPlanRequest is Terraform's request to plan a new svc_job from config: the proposed new
// state is the configuration (nothing in state to keep), with unknown, when set, unknown in both.
func createPlanRequest(t *testing.T, typ tftypes.Object, config map[string]any, unknown string) *tfprotov6.PlanResourceChangeRequest {
	t.Helper()
	attrs := maps.Clone(config)
	if unknown != "" {
		attrs[unknown] = tftypes.NewValue(typ.AttributeTypes[unknown], tftypes.UnknownValue)
	}
	value := jobConfigValue(t, typ, attrs)
	return &tfprotov6.PlanResourceChangeRequest{TypeName: "svc_job", PriorState: nullJobValue(t, typ), Config: value, ProposedNewState: value}
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
