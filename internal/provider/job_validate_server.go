package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/attr/xattr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// jobValidateServer answers svc_job's ValidateResourceConfig itself when the framework's answer
// is "valid, nothing to say", and passes every other call on. Terraform validates each
// instance's configuration once per plan and twice per apply; for a valid configuration the
// framework spent most of that call finding each attribute again by path (a schema walk, a value
// walk and a logging context per attribute) around validators that had nothing to say.
//
// It runs the checks the framework runs, read once from svc_job's schema:
//   - per attribute, those of its flags: a read-only attribute set, a required one null, a
//     write-only one set while the client does not take write-only values, a deprecated one set;
//   - the value's own validation (xattr.ValidateableAttribute, or its type's), then the
//     attribute's validators, given the request the framework builds (the whole configuration,
//     the path and its expression, the client's capabilities);
//   - the same for each attribute of a single nested object that is set.
//
// When any of them says anything (an error or a warning), or the call holds anything it does not
// follow (a configuration null or unknown as a whole, a nested list, set or map that is set), the
// framework answers, so the user gets the framework's diagnostics word for word.
// svc_job's Configure, which the framework calls before validating, reports only provider data
// of a type this provider never gives.
//
// TestJobValidateServerAnswersAsTheFramework holds the two paths to the same answers.
type jobValidateServer struct {
	tfprotov6.ProviderServer
	schema     schema.Schema
	configType tftypes.Type
	attributes []attributeChecks
}

// newJobValidateServer wraps next with the validations of svc_job.
func newJobValidateServer(next tfprotov6.ProviderServer) tfprotov6.ProviderServer {
	return newValidateServerFor(next, NewJobResource())
}

// newValidateServerFor wraps next with the validations of r, svc_job's resource. Should r have
// validation this server does not run (see validationOf), it answers nothing itself: next is
// returned as it is.
func newValidateServerFor(next tfprotov6.ProviderServer, r resource.Resource) tfprotov6.ProviderServer {
	ctx := context.Background()
	s, checks, ok := validationOf(ctx, r)
	if !ok {
		return next
	}
	return &jobValidateServer{ProviderServer: next, schema: s, configType: s.Type().TerraformType(ctx), attributes: checks}
}

func (s *jobValidateServer) ValidateResourceConfig(ctx context.Context, req *tfprotov6.ValidateResourceConfigRequest) (*tfprotov6.ValidateResourceConfigResponse, error) {
	if req.TypeName == jobTypeName && s.nothingToSay(ctx, req) {
		return &tfprotov6.ValidateResourceConfigResponse{}, nil
	}
	return s.ProviderServer.ValidateResourceConfig(ctx, req)
}

// nothingToSay reports whether every check the framework makes of req's configuration passes
// without a word.
func (s *jobValidateServer) nothingToSay(ctx context.Context, req *tfprotov6.ValidateResourceConfigRequest) bool {
	if req.Config == nil || req.Config.MsgPack == nil {
		return false
	}
	config, err := req.Config.Unmarshal(s.configType)
	if err != nil || !config.IsKnown() || config.IsNull() {
		return false
	}
	var values map[string]tftypes.Value
	if config.As(&values) != nil {
		return false
	}
	// A client that states no capabilities takes no write-only values.
	capabilities := validator.ValidateSchemaClientCapabilities{
		WriteOnlyAttributesAllowed: req.ClientCapabilities != nil && req.ClientCapabilities.WriteOnlyAttributesAllowed,
	}
	base := validationRequest{config: tfsdk.Config{Raw: config, Schema: s.schema}, capabilities: capabilities}
	return allQuiet(ctx, s.attributes, values, base)
}

// validationOf reads r's schema and the checks of its attributes; ok is false when r has
// validation these checks do not run: resource-level validators, blocks, a deprecated schema,
// or an attribute for which attributeChecksOf says so.
func validationOf(ctx context.Context, r resource.Resource) (s schema.Schema, checks []attributeChecks, ok bool) {
	if _, has := r.(resource.ResourceWithConfigValidators); has {
		return s, nil, false
	}
	if _, has := r.(resource.ResourceWithValidateConfig); has {
		return s, nil, false
	}
	var resp resource.SchemaResponse
	r.Schema(ctx, resource.SchemaRequest{}, &resp)
	s = resp.Schema
	if resp.Diagnostics.HasError() || len(s.Blocks) > 0 || s.DeprecationMessage != "" {
		return s, nil, false
	}
	checks, ok = attributeChecksOf(ctx, s.Attributes, func(name string) (path.Path, path.Expression) {
		return path.Root(name), path.MatchRoot(name)
	})
	return s, checks, ok
}

// nesting is how an attribute holds nested attributes.
type nesting int

const (
	notNested        nesting = iota
	singleNested             // one object, whose attributes are checked when it is set
	collectionNested         // a list, set or map of objects: followed only while null or unknown
)

// attributeChecks is what the framework checks of one attribute's configured value.
type attributeChecks struct {
	name       string
	flags      attributeFlags
	typ        attr.Type
	path       path.Path
	expression path.Expression
	validators validatorRun
	// quietWhenNull is whether a null value passes every check but the flags' (see
	// attributeChecksFor).
	quietWhenNull bool
	nesting       nesting
	nested        []attributeChecks
}

// attributeFlags are the flags of an attribute that the framework checks a value against.
type attributeFlags struct {
	required, optional, computed, writeOnly, deprecated bool
}

// validationRequest is what every validator of a configuration is given; path and expression
// are set per attribute.
type validationRequest struct {
	config       tfsdk.Config
	capabilities validator.ValidateSchemaClientCapabilities
	path         path.Path
	expression   path.Expression
}

// validatorRun runs an attribute's validators on its value; it is true when none said anything.
type validatorRun func(ctx context.Context, value attr.Value, req validationRequest) bool

// attributeChecksOf reads the checks of attrs, each named at at(name); ok is false when one of
// them has validation these checks do not run.
func attributeChecksOf(ctx context.Context, attrs map[string]schema.Attribute, at func(name string) (path.Path, path.Expression)) ([]attributeChecks, bool) {
	checks := make([]attributeChecks, 0, len(attrs))
	for name, a := range attrs {
		p, e := at(name)
		c, ok := attributeChecksFor(ctx, name, a, p, e)
		if !ok {
			return nil, false
		}
		checks = append(checks, c)
	}
	return checks, true
}

// attributeChecksFor reads the checks of attribute a; ok is false when its definition is one the
// framework refuses, its type is dynamic, it has validators of a kind validatorsOf does not
// run, or it nests attributes in a way not followed here.
//
// An attribute without validators is checked here once with a null value: what the framework
// then does with a null value besides checking the flags (converting it, and its own
// validation, given the path only) depends on nothing but the attribute, so a null value that
// passes once passes every time. Most of svc_job's attributes are null in a configuration.
func attributeChecksFor(ctx context.Context, name string, a schema.Attribute, p path.Path, e path.Expression) (attributeChecks, bool) {
	c := attributeChecks{name: name, typ: a.GetType(), path: p, expression: e, flags: attributeFlags{
		required: a.IsRequired(), optional: a.IsOptional(), computed: a.IsComputed(),
		writeOnly: a.IsWriteOnly(), deprecated: a.GetDeprecationMessage() != "",
	}}
	if !c.flags.wellDefined() {
		return c, false
	}
	if _, dynamic := c.typ.(basetypes.DynamicTypable); dynamic {
		return c, false
	}
	run, count := validatorsOf(a)
	if run == nil && count > 0 {
		return c, false
	}
	c.validators = run
	if count == 0 {
		c.quietWhenNull = c.valueQuiet(ctx, tftypes.NewValue(c.typ.TerraformType(ctx), nil), validationRequest{})
	}
	switch a := a.(type) {
	case schema.SingleNestedAttribute:
		var ok bool
		c.nesting = singleNested
		c.nested, ok = attributeChecksOf(ctx, a.Attributes, func(name string) (path.Path, path.Expression) {
			return p.AtName(name), e.AtName(name)
		})
		return c, ok
	case schema.ListNestedAttribute, schema.SetNestedAttribute, schema.MapNestedAttribute:
		c.nesting = collectionNested
	default:
		if _, nested := a.(schema.NestedAttribute); nested {
			return c, false
		}
	}
	return c, true
}

// wellDefined reports whether f passes the framework's checks of an attribute's definition:
// required, optional or computed; and if write-only, neither computed nor both required and
// optional.
func (f attributeFlags) wellDefined() bool {
	if !f.required && !f.optional && !f.computed {
		return false
	}
	if !f.writeOnly {
		return true
	}
	return !f.computed && (!f.required || !f.optional)
}

// allQuiet reports whether every check in checks passes without a word on values, the
// attributes of one object.
func allQuiet(ctx context.Context, checks []attributeChecks, values map[string]tftypes.Value, base validationRequest) bool {
	for _, c := range checks {
		v, ok := values[c.name]
		if !ok || !c.quiet(ctx, v, base) {
			return false
		}
	}
	return true
}

// quiet reports whether the framework would say nothing of v, the attribute's configured value.
func (c attributeChecks) quiet(ctx context.Context, v tftypes.Value, base validationRequest) bool {
	null, unknown := v.IsNull(), !v.IsKnown()
	if !c.flags.allow(null, unknown, base.capabilities.WriteOnlyAttributesAllowed) {
		return false
	}
	if null && c.quietWhenNull {
		return true
	}
	if !c.valueQuiet(ctx, v, base) {
		return false
	}
	if null || unknown || c.nesting == notNested {
		return true // the framework visits no nested attribute of a null or unknown value
	}
	var nested map[string]tftypes.Value
	if c.nesting != singleNested || v.As(&nested) != nil {
		return false
	}
	return allQuiet(ctx, c.nested, nested, base)
}

// valueQuiet reports whether v converts to the attribute's type, and its own validation and the
// attribute's validators say nothing of it.
func (c attributeChecks) valueQuiet(ctx context.Context, v tftypes.Value, base validationRequest) bool {
	value, err := c.typ.ValueFromTerraform(ctx, v)
	if err != nil || !ownValidationQuiet(ctx, c.typ, v, value, c.path) {
		return false
	}
	base.path, base.expression = c.path, c.expression
	return c.validators == nil || c.validators(ctx, value, base)
}

// allow reports whether the flags allow a value that is null or unknown as given: the framework
// refuses a read-only attribute that is set, a required one that is null, a write-only one that
// is set when the client does not take write-only values, and warns of a deprecated one that is
// set to a known value.
func (f attributeFlags) allow(null, unknown, writeOnlyAllowed bool) bool {
	switch {
	case f.computed && !f.optional && !null:
		return false
	case f.required && null:
		return false
	case f.writeOnly && !null && !writeOnlyAllowed:
		return false
	case f.deprecated && !null && !unknown:
		return false
	}
	return true
}

// ownValidationQuiet runs a value's own validation as the framework does when it reads a value
// from the configuration: the value's (xattr.ValidateableAttribute, given the path only), or
// else its type's (xattr.TypeWithValidate, deprecated but still run: the framework's number
// types check there that an integer is one).
func ownValidationQuiet(ctx context.Context, typ attr.Type, v tftypes.Value, value attr.Value, p path.Path) bool {
	if validateable, ok := value.(xattr.ValidateableAttribute); ok {
		var resp xattr.ValidateAttributeResponse
		validateable.ValidateAttribute(ctx, xattr.ValidateAttributeRequest{Path: p}, &resp)
		return len(resp.Diagnostics) == 0
	}
	//nolint:staticcheck // deprecated, and still run by the framework
	if validateable, ok := typ.(xattr.TypeWithValidate); ok {
		return len(validateable.Validate(ctx, v, p)) == 0
	}
	return true
}

// validatorsOf returns what runs a's validators, and how many it has. Only the validators of a
// string, bool or object attribute (a single nested one) are run, the kinds svc_job uses: run
// is nil for another kind. The run converts the value as the framework does even when there is
// no validator.
func validatorsOf(a schema.Attribute) (run validatorRun, count int) {
	switch a := a.(type) {
	case interface{ StringValidators() []validator.String }:
		return stringValidatorRun(a.StringValidators()), len(a.StringValidators())
	case interface{ BoolValidators() []validator.Bool }:
		return boolValidatorRun(a.BoolValidators()), len(a.BoolValidators())
	case interface{ ObjectValidators() []validator.Object }:
		return objectValidatorRun(a.ObjectValidators()), len(a.ObjectValidators())
	}
	return nil, otherValidatorCount(a)
}

// otherValidatorCount is the number of validators of a of the kinds validatorsOf does not run.
func otherValidatorCount(a schema.Attribute) int {
	switch a := a.(type) {
	case interface{ Int64Validators() []validator.Int64 }:
		return len(a.Int64Validators())
	case interface{ Int32Validators() []validator.Int32 }:
		return len(a.Int32Validators())
	case interface{ Float64Validators() []validator.Float64 }:
		return len(a.Float64Validators())
	case interface{ Float32Validators() []validator.Float32 }:
		return len(a.Float32Validators())
	case interface{ NumberValidators() []validator.Number }:
		return len(a.NumberValidators())
	case interface{ ListValidators() []validator.List }:
		return len(a.ListValidators())
	case interface{ SetValidators() []validator.Set }:
		return len(a.SetValidators())
	case interface{ MapValidators() []validator.Map }:
		return len(a.MapValidators())
	case interface{ DynamicValidators() []validator.Dynamic }:
		return len(a.DynamicValidators())
	}
	return 0
}

// runValidators returns what runs validators of one kind: request converts the attribute's
// value to the kind's and builds the request the framework gives each validator (false when the
// value does not convert, which the framework reports), and validate runs one validator on it.
func runValidators[V, R any](validators []V, request func(context.Context, attr.Value, validationRequest) (R, bool),
	validate func(context.Context, V, R) diag.Diagnostics,
) validatorRun {
	return func(ctx context.Context, value attr.Value, base validationRequest) bool {
		req, ok := request(ctx, value, base)
		if !ok {
			return false
		}
		for _, each := range validators {
			if len(validate(ctx, each, req)) > 0 {
				return false
			}
		}
		return true
	}
}

// converted is value as the value type a validator kind takes, by to, the conversion of the
// kind's valuable interface I (such as basetypes.StringValuable.ToStringValue); ok is false
// when value is not an I or the conversion says anything.
func converted[I, T any](ctx context.Context, value attr.Value, to func(I, context.Context) (T, diag.Diagnostics)) (v T, ok bool) {
	valuable, ok := value.(I)
	if !ok {
		return v, false
	}
	v, diags := to(valuable, ctx)
	return v, len(diags) == 0
}

func stringValidatorRun(validators []validator.String) validatorRun {
	return runValidators(validators, func(ctx context.Context, value attr.Value, base validationRequest) (validator.StringRequest, bool) {
		v, ok := converted(ctx, value, basetypes.StringValuable.ToStringValue)
		return validator.StringRequest{ClientCapabilities: base.capabilities, Config: base.config, ConfigValue: v,
			Path: base.path, PathExpression: base.expression}, ok
	}, func(ctx context.Context, each validator.String, req validator.StringRequest) diag.Diagnostics {
		var resp validator.StringResponse
		each.ValidateString(ctx, req, &resp)
		return resp.Diagnostics
	})
}

func boolValidatorRun(validators []validator.Bool) validatorRun {
	return runValidators(validators, func(ctx context.Context, value attr.Value, base validationRequest) (validator.BoolRequest, bool) {
		v, ok := converted(ctx, value, basetypes.BoolValuable.ToBoolValue)
		return validator.BoolRequest{ClientCapabilities: base.capabilities, Config: base.config, ConfigValue: v,
			Path: base.path, PathExpression: base.expression}, ok
	}, func(ctx context.Context, each validator.Bool, req validator.BoolRequest) diag.Diagnostics {
		var resp validator.BoolResponse
		each.ValidateBool(ctx, req, &resp)
		return resp.Diagnostics
	})
}

// objectValidatorRun runs a single nested attribute's validators; the framework runs them a
// second time on a set object's nested object, on the same value, which can say nothing new.
func objectValidatorRun(validators []validator.Object) validatorRun {
	return runValidators(validators, func(ctx context.Context, value attr.Value, base validationRequest) (validator.ObjectRequest, bool) {
		v, ok := converted(ctx, value, basetypes.ObjectValuable.ToObjectValue)
		return validator.ObjectRequest{ClientCapabilities: base.capabilities, Config: base.config, ConfigValue: v,
			Path: base.path, PathExpression: base.expression}, ok
	}, func(ctx context.Context, each validator.Object, req validator.ObjectRequest) diag.Diagnostics {
		var resp validator.ObjectResponse
		each.ValidateObject(ctx, req, &resp)
		return resp.Diagnostics
	})
}
