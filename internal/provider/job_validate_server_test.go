package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/resourcevalidator"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// validateCountingServer counts the validations that reach the server it wraps.
type validateCountingServer struct {
	tfprotov6.ProviderServer
	validations int
}

func (c *validateCountingServer) ValidateResourceConfig(ctx context.Context, req *tfprotov6.ValidateResourceConfigRequest) (*tfprotov6.ValidateResourceConfigResponse, error) {
	c.validations++
	return c.ProviderServer.ValidateResourceConfig(ctx, req)
}

// TestJobValidateServerAnswersAsTheFramework holds jobValidateServer to the framework's answers:
// for each configuration, the diagnostics it returns are the framework's, and it answers itself
// exactly where the framework has nothing to say and nothing in the call is unusual.
func TestJobValidateServerAnswersAsTheFramework(t *testing.T) {
	const validWorkflow = `{"1":{"class_type":"SaveImage","inputs":{"images":["2",0]}},"2":{"class_type":"EmptyImage","inputs":{}}}`
	allowed := &tfprotov6.ValidateResourceConfigClientCapabilities{WriteOnlyAttributesAllowed: true}
	_, typ := jobSchemaForTest(t)
	unknownString := tftypes.NewValue(tftypes.String, tftypes.UnknownValue)
	tests := []struct {
		name         string
		attrs        map[string]any // the configuration's attributes over a valid workflow; nil: null
		capabilities *tfprotov6.ValidateResourceConfigClientCapabilities
		config       func(typ tftypes.Object) *tfprotov6.DynamicValue // the configuration instead of attrs
		frameworkSay string                                           // a summary the framework's answer holds; "": none
		answered     bool                                             // answered without the framework
	}{
		{name: "valid workflow", capabilities: allowed, answered: true},
		{name: "valid workflow, every argument set", capabilities: allowed, attrs: map[string]any{
			"idempotency_key": "key-1", "partner_api_key_wo": "secret", "wait_for_completion": false,
			"cancel_on_destroy": false, "rerun_on_expiry": true, "validate": false,
			"timeouts": map[string]any{"create": "2h", "delete": "5m"},
		}, answered: true},
		{name: "invalid JSON", capabilities: allowed, attrs: map[string]any{"workflow": `{"1": {`}, frameworkSay: "Invalid JSON"},
		{name: "UI-format workflow", capabilities: allowed, attrs: map[string]any{"workflow": `{"nodes":[],"links":[]}`},
			frameworkSay: "Invalid workflow"},
		{name: "non-object JSON", capabilities: allowed, attrs: map[string]any{"workflow": `[1,2]`}, frameworkSay: "Invalid workflow"},
		{name: "node without class_type", capabilities: allowed, attrs: map[string]any{"workflow": `{"1":{"inputs":{}}}`},
			frameworkSay: "Invalid workflow"},
		{name: "idempotency_key empty", capabilities: allowed, attrs: map[string]any{"idempotency_key": ""},
			frameworkSay: "Invalid Attribute Value Length"},
		{name: "idempotency_key too long", capabilities: allowed, attrs: map[string]any{"idempotency_key": strings.Repeat("k", 256)},
			frameworkSay: "Invalid Attribute Value Length"},
		{name: "idempotency_key fine", capabilities: allowed, attrs: map[string]any{"idempotency_key": strings.Repeat("k", 255)},
			answered: true},
		{name: "both write-only attributes", capabilities: allowed,
			attrs:        map[string]any{"partner_api_key_wo": "key", "partner_auth_token_wo": "token"},
			frameworkSay: "Invalid Attribute Combination"},
		{name: "api key write-only", capabilities: allowed, attrs: map[string]any{"partner_api_key_wo": "key"}, answered: true},
		{name: "auth token write-only", capabilities: allowed, attrs: map[string]any{"partner_auth_token_wo": "token"}, answered: true},
		{name: "write-only, client does not allow it", capabilities: &tfprotov6.ValidateResourceConfigClientCapabilities{},
			attrs: map[string]any{"partner_api_key_wo": "key"}, frameworkSay: "WriteOnly Attribute Not Allowed"},
		{name: "write-only unknown, client states no capabilities", attrs: map[string]any{"partner_auth_token_wo": unknownString},
			frameworkSay: "WriteOnly Attribute Not Allowed"},
		{name: "client states no capabilities, no write-only", answered: true},
		{name: "timeouts valid", capabilities: allowed, attrs: map[string]any{"timeouts": map[string]any{"create": "90m", "delete": nil}},
			answered: true},
		{name: "timeouts invalid", capabilities: allowed, attrs: map[string]any{"timeouts": map[string]any{"create": "soon", "delete": nil}},
			frameworkSay: "Invalid Attribute Value Time Duration"},
		{name: "timeouts unknown", capabilities: allowed,
			attrs:    map[string]any{"timeouts": tftypes.NewValue(typ.AttributeTypes["timeouts"], tftypes.UnknownValue)},
			answered: true},
		{name: "timeout unknown", capabilities: allowed, attrs: map[string]any{"timeouts": tftypes.NewValue(
			typ.AttributeTypes["timeouts"], map[string]tftypes.Value{"create": unknownString, "delete": tftypes.NewValue(tftypes.String, nil)})},
			answered: true},
		{name: "workflow unknown", capabilities: allowed, attrs: map[string]any{"workflow": unknownString}, answered: true},
		{name: "idempotency_key unknown", capabilities: allowed, attrs: map[string]any{"idempotency_key": unknownString}, answered: true},
		{name: "workflow null", capabilities: allowed, attrs: map[string]any{"workflow": nil},
			frameworkSay: "Missing Configuration for Required Attribute"},
		{name: "read-only attribute set", capabilities: allowed, attrs: map[string]any{"status": "succeeded"},
			frameworkSay: "Invalid Configuration for Read-Only Attribute"},
		{name: "read-only attribute unknown", capabilities: allowed, attrs: map[string]any{"id": unknownString},
			frameworkSay: "Invalid Configuration for Read-Only Attribute"},
		{name: "read-only nested list set", capabilities: allowed, attrs: map[string]any{"outputs": []any{}},
			frameworkSay: "Invalid Configuration for Read-Only Attribute"},
		{name: "null config", capabilities: allowed, config: func(typ tftypes.Object) *tfprotov6.DynamicValue {
			dv, err := tfprotov6.NewDynamicValue(typ, tftypes.NewValue(typ, nil))
			if err != nil {
				t.Fatal(err)
			}
			return &dv
		}, frameworkSay: "Missing Configuration for Required Attribute"},
		{name: "no config", capabilities: allowed, config: func(tftypes.Object) *tfprotov6.DynamicValue { return nil }},
		{name: "config not msgpack", capabilities: allowed, config: func(tftypes.Object) *tfprotov6.DynamicValue {
			return &tfprotov6.DynamicValue{MsgPack: []byte{0xc1}}
		}, frameworkSay: "Unable to Convert Configuration"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			counted := &validateCountingServer{ProviderServer: releasingServer{providerserver.NewProtocol6(New("test")())()}}
			shortcut := newJobValidateServer(counted)
			framework := releasingServer{providerserver.NewProtocol6(New("test")())()}
			attrs := map[string]any{"workflow": validWorkflow}
			for name, v := range tt.attrs {
				attrs[name] = v
			}
			req := &tfprotov6.ValidateResourceConfigRequest{TypeName: "svc_job", ClientCapabilities: tt.capabilities}
			if tt.config != nil {
				req.Config = tt.config(typ)
			} else {
				req.Config = jobConfigValue(t, typ, attrs)
			}
			got, want := callValidate(t, shortcut, req), callValidate(t, framework, req)
			if !slices.Equal(got, want) {
				t.Errorf("diagnostics %q, the framework's %q", got, want)
			}
			if says := slices.ContainsFunc(want, func(d string) bool { return tt.frameworkSay != "" && strings.Contains(d, tt.frameworkSay) }); says != (tt.frameworkSay != "") || (tt.frameworkSay == "" && len(want) > 0) {
				t.Errorf("the framework says %q, want it to say %q", want, tt.frameworkSay)
			}
			if answered := counted.validations == 0; answered != tt.answered {
				t.Errorf("answered without the framework: %v, want %v", answered, tt.answered)
			}
		})
	}
}

// TestJobValidateServerPassesOtherTypesOn checks that a validation of another resource type
// reaches the framework.
func TestJobValidateServerPassesOtherTypesOn(t *testing.T) {
	t.Parallel()
	counted := &validateCountingServer{ProviderServer: releasingServer{providerserver.NewProtocol6(New("test")())()}}
	s := newJobValidateServer(counted)
	_, typ := jobSchemaForTest(t)
	req := &tfprotov6.ValidateResourceConfigRequest{TypeName: "svc_prompt", Config: jobConfigValue(t, typ, map[string]any{"workflow": `{}`})}
	if _, err := s.ValidateResourceConfig(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	if counted.validations != 1 {
		t.Errorf("%d validations reached the framework, want 1", counted.validations)
	}
}

// TestJobValidateServerGuard checks that the layer answers nothing for a resource whose
// validation it does not know how to run, and answers for the same resource without it.
func TestJobValidateServerGuard(t *testing.T) {
	known := func() map[string]schema.Attribute {
		return map[string]schema.Attribute{
			"name":  schema.StringAttribute{Required: true},
			"count": schema.Int64Attribute{Optional: true},
			"timeouts": schema.SingleNestedAttribute{Optional: true, Attributes: map[string]schema.Attribute{
				"tags": schema.ListAttribute{ElementType: types.StringType, Optional: true},
			}},
		}
	}
	with := func(name string, a schema.Attribute) schema.Schema {
		attrs := known()
		attrs[name] = a
		return schema.Schema{Attributes: attrs}
	}
	tests := []struct {
		name     string
		resource resource.Resource
		answers  bool
	}{
		{name: "svc_job", resource: NewJobResource(), answers: true},
		{name: "known validation only", resource: schemaOnlyResource{schema.Schema{Attributes: known()}}, answers: true},
		{name: "int64 validators", resource: schemaOnlyResource{with("count", schema.Int64Attribute{Optional: true,
			Validators: []validator.Int64{int64validator.AtLeast(1)}})}},
		{name: "list validators in a nested object", resource: schemaOnlyResource{with("timeouts", schema.SingleNestedAttribute{
			Optional: true, Attributes: map[string]schema.Attribute{"tags": schema.ListAttribute{ElementType: types.StringType,
				Optional: true, Validators: []validator.List{listvalidator.SizeAtMost(2)}}}})}},
		{name: "dynamic attribute", resource: schemaOnlyResource{with("any", schema.DynamicAttribute{Optional: true})}},
		{name: "attribute neither required, optional nor computed", resource: schemaOnlyResource{with("lost", schema.StringAttribute{})}},
		{name: "write-only and computed", resource: schemaOnlyResource{with("secret", schema.StringAttribute{WriteOnly: true,
			Optional: true, Computed: true})}},
		{name: "write-only, required and optional", resource: schemaOnlyResource{with("secret", schema.StringAttribute{WriteOnly: true,
			Required: true, Optional: true})}},
		{name: "write-only and optional", resource: schemaOnlyResource{with("secret", schema.StringAttribute{WriteOnly: true,
			Optional: true})}, answers: true},
		{name: "block", resource: schemaOnlyResource{schema.Schema{Attributes: known(),
			Blocks: map[string]schema.Block{"b": schema.SingleNestedBlock{}}}}},
		{name: "deprecated schema", resource: schemaOnlyResource{schema.Schema{Attributes: known(), DeprecationMessage: "old"}}},
		{name: "config validators", resource: withConfigValidators{schemaOnlyResource{schema.Schema{Attributes: known()}}}},
		{name: "ValidateConfig", resource: withValidateConfig{schemaOnlyResource{schema.Schema{Attributes: known()}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			next := &validateCountingServer{}
			_, answers := newValidateServerFor(next, tt.resource).(*jobValidateServer)
			if answers != tt.answers {
				t.Errorf("the layer answers: %v, want %v", answers, tt.answers)
			}
		})
	}
}

// schemaOnlyResource is a resource with the given schema and nothing else.
type schemaOnlyResource struct{ schema schema.Schema }

func (r schemaOnlyResource) Metadata(_ context.Context, _ resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = "svc_guarded"
}

func (r schemaOnlyResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = r.schema
}

func (schemaOnlyResource) Create(context.Context, resource.CreateRequest, *resource.CreateResponse) {}
func (schemaOnlyResource) Read(context.Context, resource.ReadRequest, *resource.ReadResponse)       {}
func (schemaOnlyResource) Update(context.Context, resource.UpdateRequest, *resource.UpdateResponse) {}
func (schemaOnlyResource) Delete(context.Context, resource.DeleteRequest, *resource.DeleteResponse) {}

type withConfigValidators struct{ schemaOnlyResource }

func (withConfigValidators) ConfigValidators(context.Context) []resource.ConfigValidator {
	return []resource.ConfigValidator{resourcevalidator.Conflicting(path.MatchRoot("name"), path.MatchRoot("count"))}
}

type withValidateConfig struct{ schemaOnlyResource }

func (withValidateConfig) ValidateConfig(context.Context, resource.ValidateConfigRequest, *resource.ValidateConfigResponse) {
}

// callValidate returns the diagnostics of s's answer to req, each as severity, summary, detail
// and attribute path, sorted: the framework visits attributes in no set order.
func callValidate(t *testing.T, s tfprotov6.ProviderServer, req *tfprotov6.ValidateResourceConfigRequest) []string {
	t.Helper()
	resp, err := s.ValidateResourceConfig(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, d := range resp.Diagnostics {
		out = append(out, fmt.Sprintf("%s: %s: %s (at %v)", d.Severity, d.Summary, d.Detail, d.Attribute))
	}
	slices.Sort(out)
	return out
}

// jobConfigValue is the configuration of typ holding attrs, every other attribute null; a
// tftypes.Value in attrs is taken as it is, anything else as its JSON.
func jobConfigValue(t testing.TB, typ tftypes.Object, attrs map[string]any) *tfprotov6.DynamicValue {
	t.Helper()
	values := map[string]tftypes.Value{}
	for name, at := range typ.AttributeTypes {
		switch v := attrs[name].(type) {
		case nil:
			values[name] = tftypes.NewValue(at, nil)
		case tftypes.Value:
			values[name] = v
		default:
			doc, err := json.Marshal(v)
			if err != nil {
				t.Fatal(err)
			}
			if values[name], err = (&tfprotov6.RawState{JSON: doc}).UnmarshalWithOpts(at, tfprotov6.UnmarshalOpts{}); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
		}
	}
	dv, err := tfprotov6.NewDynamicValue(typ, tftypes.NewValue(typ, values))
	if err != nil {
		t.Fatal(err)
	}
	return &dv
}

// BenchmarkJobValidateServer compares one validation of a valid svc_job configuration, as
// Terraform sends it for each instance, through the framework and through jobValidateServer.
func BenchmarkJobValidateServer(b *testing.B) {
	_, typ := jobSchemaForTest(b)
	req := &tfprotov6.ValidateResourceConfigRequest{TypeName: "svc_job",
		ClientCapabilities: &tfprotov6.ValidateResourceConfigClientCapabilities{WriteOnlyAttributesAllowed: true},
		Config: jobConfigValue(b, typ, map[string]any{"workflow": `{"1":{"class_type":"EmptyImage","inputs":{"width":8,"height":8,"batch_size":1,"color":7}},` +
			`"2":{"class_type":"ImageNoiseSampler","inputs":{"image":["1",0],"seed":7,"steps":1,"denoise":0.5}},` +
			`"3":{"class_type":"SaveImage","inputs":{"images":["2",0],"filename_prefix":"job"}}}`})}
	framework := releasingServer{providerserver.NewProtocol6(New("test")())()}
	for _, s := range []struct {
		name   string
		server tfprotov6.ProviderServer
	}{{"framework", framework}, {"layer", newJobValidateServer(framework)}} {
		b.Run(s.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				resp, err := s.server.ValidateResourceConfig(context.Background(), req)
				if err != nil || len(resp.Diagnostics) > 0 {
					b.Fatal(err, resp.Diagnostics)
				}
			}
		})
	}
}
