package provider

import (
	"context"
	"reflect"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/boolplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/defaults"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/float64planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/listplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/mapplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/objectplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// jobCreatePlanServer plans a new svc_job itself (PlanResourceChange with a null prior state),
// without the framework. Terraform plans each new resource twice (at plan, and again at apply),
// and the framework spent about 1 ms on each: decoding, walking every attribute of the record
// through transforms and plan modifiers, and setting the plan back attribute by attribute, to
// arrive at a plan made by a handful of rules. Those rules, as the framework applies them to a
// create, in order:
//   - an attribute the configuration leaves null gets its default, where it has one;
//   - a write-only attribute is null;
//   - a computed attribute the configuration leaves null (and without a default) is unknown;
//   - the attribute plan modifiers run, and none of svc_job's does anything without a prior
//     state (createNoOpModifiers says why for each);
//   - jobResource.ModifyPlan runs: planJobResume does nothing without a prior state, and
//     checkWorkflowOnPlan checks the new workflow against object_info when validate is set.
//
// Every other call, and every create plan this server cannot be sure of, goes on to the
// framework: a configuration not wholly known, provider settings not known or not configured,
// prior private data, object_info not read yet, or a workflow check with anything to say (an
// error or a warning: the framework then reports it its own way). Should svc_job's schema gain
// a default or a plan modifier these rules do not cover, the server is not installed at all
// (createPlanRulesOf). TestJobCreatePlanServerAnswersAsTheFramework holds both paths to the
// same answers.
type jobCreatePlanServer struct {
	tfprotov6.ProviderServer
	configured func() *providerData
	jobType    tftypes.Object
	rules      map[string]attributeCreatePlan
}

// attributeCreatePlan is what the framework plans for one attribute of a new job.
type attributeCreatePlan struct {
	// writeOnly: the plan holds null, whatever the configuration says.
	writeOnly bool
	null      tftypes.Value
	// unset is planned when the configuration leaves the attribute null: its default, or
	// unknown for a computed attribute. Nil: the proposed value stands.
	unset *tftypes.Value
}

// newJobCreatePlanServer wraps next; it returns next itself when svc_job's schema has anything
// createPlanRulesOf does not know to plan.
func newJobCreatePlanServer(next tfprotov6.ProviderServer, configured func() *providerData) tfprotov6.ProviderServer {
	ctx := context.Background()
	r := NewJobResource()
	if _, hasIdentity := r.(resource.ResourceWithIdentity); hasIdentity {
		return next // the framework would plan an identity too
	}
	var resp resource.SchemaResponse
	r.Schema(ctx, resource.SchemaRequest{}, &resp)
	rules, ok := createPlanRulesOf(ctx, resp.Schema)
	jobType, isObject := resp.Schema.Type().TerraformType(ctx).(tftypes.Object)
	if !ok || !isObject {
		return next
	}
	return &jobCreatePlanServer{ProviderServer: next, configured: configured, jobType: jobType, rules: rules}
}

func (s *jobCreatePlanServer) PlanResourceChange(ctx context.Context, req *tfprotov6.PlanResourceChangeRequest) (*tfprotov6.PlanResourceChangeResponse, error) {
	if req.TypeName == jobTypeName {
		if resp := s.planCreate(ctx, req); resp != nil {
			return resp, nil
		}
	}
	return s.ProviderServer.PlanResourceChange(ctx, req)
}

// planCreate returns the framework's plan of a new job, or nil when req is not a create or the
// answer is not certain.
func (s *jobCreatePlanServer) planCreate(ctx context.Context, req *tfprotov6.PlanResourceChangeRequest) *tfprotov6.PlanResourceChangeResponse {
	data := s.configured()
	if data == nil || data.configUnknown || len(req.PriorPrivate) > 0 {
		return nil
	}
	if prior, ok := decodeJobValue(s.jobType, req.PriorState); !ok || prior != nil {
		return nil
	}
	config, ok := s.decodeKnownJob(req.Config)
	if !ok {
		return nil
	}
	proposed, ok := s.decodeKnownJob(req.ProposedNewState)
	if !ok {
		return nil
	}
	planned, ok := s.plannedAttributes(config, proposed)
	if !ok || !s.workflowCheckSilent(ctx, data, planned) {
		return nil
	}
	state, err := tfprotov6.NewDynamicValue(s.jobType, tftypes.NewValue(s.jobType, planned))
	if err != nil {
		return nil
	}
	return &tfprotov6.PlanResourceChangeResponse{PlannedState: &state}
}

// plannedAttributes applies the create rules (defaults, write-only, unknown computed) to the
// proposed new state; ok is false when either value lacks an attribute of svc_job or has one
// it does not know.
func (s *jobCreatePlanServer) plannedAttributes(config, proposed map[string]tftypes.Value) (planned map[string]tftypes.Value, ok bool) {
	if len(config) != len(s.rules) || len(proposed) != len(s.rules) {
		return nil, false
	}
	planned = make(map[string]tftypes.Value, len(s.rules))
	for name, rule := range s.rules {
		configured, inConfig := config[name]
		value, inProposed := proposed[name]
		if !inConfig || !inProposed {
			return nil, false
		}
		switch {
		case rule.writeOnly:
			value = rule.null
		case configured.IsNull() && rule.unset != nil:
			value = *rule.unset
		}
		planned[name] = value
	}
	return planned, true
}

// workflowCheckSilent runs jobResource.ModifyPlan's workflow check on the planned attributes
// and reports whether it has nothing to say. Only object_info already read is used: a plan
// that would have to read it is left to the framework, which keeps it for the next plans (and,
// should the read fail, reads once per plan as before rather than twice).
func (s *jobCreatePlanServer) workflowCheckSilent(ctx context.Context, data *providerData, planned map[string]tftypes.Value) bool {
	var validate bool // known and not null: planned holds its default when unset
	if planned["validate"].As(&validate) != nil {
		return false
	}
	workflow := jsonSemantic{StringValue: stringValueOf(planned["workflow"])}
	if !workflowToCheck(ctx, types.BoolValue(validate), workflow, newJSONSemanticNull()) {
		return true
	}
	if data.objectInfoCache == nil || !data.objectInfoCache.holds() {
		return false
	}
	var diags diag.Diagnostics
	data.validateWorkflowAtPlan(ctx, path.Root("workflow"), workflow.ValueString(), jobSubmitSurface, &diags)
	return len(diags) == 0
}

// decodeKnownJob returns v's attributes when v decodes as a svc_job object that is wholly
// known.
func (s *jobCreatePlanServer) decodeKnownJob(v *tfprotov6.DynamicValue) (map[string]tftypes.Value, bool) {
	attrs, ok := decodeJobValue(s.jobType, v)
	if !ok || attrs == nil {
		return nil, false
	}
	for _, a := range attrs {
		if !a.IsFullyKnown() {
			return nil, false
		}
	}
	return attrs, true
}

// createPlanRulesOf returns, for each attribute of s, what the framework plans for it in a
// create; ok is false when s has anything these rules do not cover: blocks, an attribute kind
// not listed in attributeFactsOf, a default other than a static bool, a plan modifier not known
// to do nothing without a prior state (createNoOpModifiers), or nested attributes that the
// framework could plan on their own (see nestedPlannedAsProposed).
func createPlanRulesOf(ctx context.Context, s schema.Schema) (rules map[string]attributeCreatePlan, ok bool) {
	if len(s.Blocks) > 0 {
		return nil, false
	}
	rules = make(map[string]attributeCreatePlan, len(s.Attributes))
	for name, a := range s.Attributes {
		rule, ok := attributeCreatePlanOf(ctx, name, a)
		if !ok {
			return nil, false
		}
		rules[name] = rule
	}
	return rules, true
}

// attributeCreatePlanOf is createPlanRulesOf for one top-level attribute.
func attributeCreatePlanOf(ctx context.Context, name string, a schema.Attribute) (attributeCreatePlan, bool) {
	facts, ok := attributeFactsOf(a)
	if !ok || facts.otherDefault || !createNoOps(facts.modifiers) || !createNoOps(facts.nestedModifiers) ||
		!nestedPlannedAsProposed(facts.nested, a.IsComputed() && !a.IsOptional()) {
		return attributeCreatePlan{}, false
	}
	typ := a.GetType().TerraformType(ctx)
	rule := attributeCreatePlan{writeOnly: a.IsWriteOnly(), null: tftypes.NewValue(typ, nil)}
	switch {
	case facts.boolDefault != nil:
		def, ok := staticBoolDefault(ctx, name, facts.boolDefault)
		if !ok || rule.writeOnly {
			return attributeCreatePlan{}, false
		}
		rule.unset = &def
	case a.IsComputed():
		unknown := tftypes.NewValue(typ, tftypes.UnknownValue)
		rule.unset = &unknown
	}
	return rule, true
}

// staticBoolDefault is the value of a booldefault.StaticBool; ok is false for any other default.
func staticBoolDefault(ctx context.Context, name string, d defaults.Bool) (tftypes.Value, bool) {
	if reflect.TypeOf(d) != reflect.TypeOf(booldefault.StaticBool(false)) {
		return tftypes.Value{}, false
	}
	var resp defaults.BoolResponse
	d.DefaultBool(ctx, defaults.BoolRequest{Path: path.Root(name)}, &resp)
	if resp.Diagnostics.HasError() || resp.PlanValue.IsNull() || resp.PlanValue.IsUnknown() {
		return tftypes.Value{}, false
	}
	return tftypes.NewValue(tftypes.Bool, resp.PlanValue.ValueBool()), true
}

// attributeFacts is what the framework's create plan of an attribute depends on, besides its
// flags (computed, optional, write-only).
type attributeFacts struct {
	modifiers       []any
	boolDefault     defaults.Bool
	otherDefault    bool // a default of another kind than bool
	nested          map[string]schema.Attribute
	nestedModifiers []any // plan modifiers of a nested attribute's object
}

// attributeFactsOf reads attributeFacts from the attribute kinds svc_job uses; ok is false for
// any other kind.
func attributeFactsOf(a schema.Attribute) (attributeFacts, bool) {
	switch a := a.(type) {
	case schema.StringAttribute:
		return attributeFacts{modifiers: anys(a.PlanModifiers), otherDefault: a.Default != nil}, true
	case schema.BoolAttribute:
		return attributeFacts{modifiers: anys(a.PlanModifiers), boolDefault: a.Default}, true
	case schema.Int64Attribute:
		return attributeFacts{modifiers: anys(a.PlanModifiers), otherDefault: a.Default != nil}, true
	case schema.Float64Attribute:
		return attributeFacts{modifiers: anys(a.PlanModifiers), otherDefault: a.Default != nil}, true
	case schema.MapAttribute:
		return attributeFacts{modifiers: anys(a.PlanModifiers), otherDefault: a.Default != nil}, true
	case schema.ListNestedAttribute:
		return attributeFacts{modifiers: anys(a.PlanModifiers), otherDefault: a.Default != nil,
			nested: a.NestedObject.Attributes, nestedModifiers: anys(a.NestedObject.PlanModifiers)}, true
	case schema.SingleNestedAttribute:
		return attributeFacts{modifiers: anys(a.PlanModifiers), otherDefault: a.Default != nil, nested: a.Attributes}, true
	}
	return attributeFacts{}, false
}

// nestedPlannedAsProposed reports whether the framework leaves every attribute nested in a
// parent as proposed in a create: none has a default, a plan modifier, nested attributes of
// its own or is write-only, and none is computed unless the parent is computed only (whose
// configuration is always null, so the parent as a whole is planned unknown).
func nestedPlannedAsProposed(nested map[string]schema.Attribute, parentComputedOnly bool) bool {
	for _, a := range nested {
		facts, ok := attributeFactsOf(a)
		if !ok || facts.otherDefault || facts.boolDefault != nil || len(facts.modifiers) > 0 || facts.nested != nil ||
			a.IsWriteOnly() || (a.IsComputed() && !parentComputedOnly) {
			return false
		}
	}
	return true
}

// createNoOpModifiers are the plan modifiers known to change nothing in a create, when the
// prior state is null:
//   - UseStateForUnknown (each kind) copies the prior state's value, and returns at once
//     without one;
//   - stringplanmodifier.RequiresReplaceIf (hence RequiresReplaceIfConfigured and
//     replaceUnlessImported) never asks to replace a resource being created;
//   - jsonKeepEquivalentState plans the prior state's value only when it is JSON equivalent
//     to the configuration, and a null value is equivalent to nothing.
var createNoOpModifiers = map[reflect.Type]bool{
	reflect.TypeOf(stringplanmodifier.UseStateForUnknown()):           true,
	reflect.TypeOf(boolplanmodifier.UseStateForUnknown()):             true,
	reflect.TypeOf(int64planmodifier.UseStateForUnknown()):            true,
	reflect.TypeOf(float64planmodifier.UseStateForUnknown()):          true,
	reflect.TypeOf(mapplanmodifier.UseStateForUnknown()):              true,
	reflect.TypeOf(listplanmodifier.UseStateForUnknown()):             true,
	reflect.TypeOf(objectplanmodifier.UseStateForUnknown()):           true,
	reflect.TypeOf(stringplanmodifier.RequiresReplaceIf(nil, "", "")): true,
	reflect.TypeOf(jsonKeepEquivalentState()):                         true,
}

// createNoOps reports whether every modifier in modifiers is in createNoOpModifiers.
func createNoOps(modifiers []any) bool {
	for _, m := range modifiers {
		if !createNoOpModifiers[reflect.TypeOf(m)] {
			return false
		}
	}
	return true
}

func anys[T any](values []T) []any {
	out := make([]any, len(values))
	for i, v := range values {
		out[i] = v
	}
	return out
}
