package provider

import (
	"context"
	"fmt"
	"math/big"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64default"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// jobBatchModel is svc_job_batch's values (a state, a plan or a configuration) as one typed
// struct, read and written by its codec (below, after the table) through
// jobBatchAttributeTable, without reflection: a batch holds 10,000 rows.
type jobBatchModel struct {
	ID              types.String
	Workflow        types.String
	Rows            batchRowsValue
	MaxInFlight     types.Int64
	CancelOnDestroy types.Bool
	RerunFailed     types.Bool
	OutputDir       types.String
	Validate        types.Bool
	PartnerAPIKeyWO types.String
	Results         batchResults
	Succeeded       types.Int64
	Failed          types.Int64
	Timeouts        timeouts.Value
}

// batchRowsValue is the configured rows (write-only: only a configuration holds them) as plain
// Go values that encode to the equivalent JSON. Known is false when any part is not known yet.
type batchRowsValue struct {
	Known bool
	Value any
	Err   error // why the rows could not be read
}

// batchResults is the results map: null, unknown (a new batch's plan), or each row's result by
// row key.
type batchResults struct {
	State attr.ValueState
	Rows  map[string]batchResult
}

// batchResult is one row's element of results: null, unknown (a row an apply runs), or its job
// id, status, output asset ids by node id (nil for null) and error.
type batchResult struct {
	State             attr.ValueState
	ID, Status, Error types.String
	Outputs           map[string][]string
}

// jobBatchAttribute is a row of svc_job_batch's attribute table.
type jobBatchAttribute = modelAttribute[jobBatchModel]

// jobBatchAttributeTable is svc_job_batch's attributes, in one place: the schema
// (jobBatchAttributes), the batch layer's defaults and the codec follow from it.
// TestJobBatchAttributeTableSchemaAndCodecAgree fails when they disagree.
var jobBatchAttributeTable = []jobBatchAttribute{
	{name: jobBatchAttrID, attr: schema.StringAttribute{
		Computed: true, MarkdownDescription: "Batch id, drawn by the provider (the service has no batch object).",
		PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
	}, field: func(m *jobBatchModel) any { return &m.ID }},
	{name: jobBatchAttrWorkflow, attr: schema.StringAttribute{
		Required: true, CustomType: jsonSemanticType{},
		MarkdownDescription: "API-format workflow template as JSON, stored once. Formatting differences (whitespace, key " +
			"order, number spelling) are no change. A change in meaning runs every row again, in place.",
		Validators:    []validator.String{apiWorkflowValidator{}},
		PlanModifiers: []planmodifier.String{jsonKeepEquivalentState()},
	}, field: func(m *jobBatchModel) any { return &m.Workflow }},
	{name: jobBatchAttrRows, attr: schema.DynamicAttribute{Required: true, WriteOnly: true, MarkdownDescription: batchRowsDoc},
		field: func(m *jobBatchModel) any { return &m.Rows }},
	{name: jobBatchAttrMaxInFlight, def: int64(defaultBatchMaxInFlight), attr: schema.Int64Attribute{
		Optional: true, Computed: true, Default: int64default.StaticInt64(defaultBatchMaxInFlight),
		MarkdownDescription: batchMaxInFlightDoc, Validators: []validator.Int64{int64validator.Between(1, 1024)},
	}, field: func(m *jobBatchModel) any { return &m.MaxInFlight }},
	boolSetting(jobBatchAttrCancelOnDestroy, true, "Cancel a row's job that still runs when the row or the batch is destroyed (default `true`). Finished rows are just forgotten.",
		func(m *jobBatchModel) any { return &m.CancelOnDestroy }),
	boolSetting(jobBatchAttrRerunFailed, false, batchRerunFailedDoc, func(m *jobBatchModel) any { return &m.RerunFailed }),
	{name: jobBatchAttrOutputDir, attr: schema.StringAttribute{Optional: true, MarkdownDescription: batchOutputDirDoc},
		field: func(m *jobBatchModel) any { return &m.OutputDir }},
	boolSetting(jobBatchAttrValidate, defaultValidate, batchValidateDoc, func(m *jobBatchModel) any { return &m.Validate }),
	{name: jobBatchAttrPartnerAPIKeyWO, attr: schema.StringAttribute{
		Optional: true, WriteOnly: true,
		MarkdownDescription: "API key for partner nodes, sent as `extra_data.api_key_svc_org` with every row. Write-only: " +
			"never stored. Defaults to the provider's `partner_api_key`.",
	}, field: func(m *jobBatchModel) any { return &m.PartnerAPIKeyWO }},
	{name: jobBatchAttrResults, attr: batchResultsAttribute(), field: func(m *jobBatchModel) any { return &m.Results }},
	{name: jobBatchAttrSucceeded, attr: schema.Int64Attribute{Computed: true, MarkdownDescription: "How many rows succeeded."},
		field: func(m *jobBatchModel) any { return &m.Succeeded }},
	{name: jobBatchAttrFailed, attr: schema.Int64Attribute{Computed: true, MarkdownDescription: "How many rows ended without success " +
		"(`failed`, `canceled`, `expired`, `rejected`, `unknown`). Rows still running or not submitted count in neither."},
		field: func(m *jobBatchModel) any { return &m.Failed }},
	{name: jobBatchAttrTimeouts, attr: timeouts.Attributes(context.Background(), batchTimeoutsOpts), field: func(m *jobBatchModel) any { return &m.Timeouts }},
}

// jobBatchAttributes is svc_job_batch's schema attributes, from its table.
func jobBatchAttributes() map[string]schema.Attribute {
	return schemaAttributes(jobBatchAttributeTable)
}

// What svc_job_batch's settings do, as its schema says.
const (
	batchRowsDoc = "Map from a row key to that row's input overrides, in the shape `provider::svc::workflow_set_inputs` " +
		"takes: `{ node_id = { input = value } }`. Each row is the template with its overrides applied (see " +
		"[Rows](#rows) for an example). A row naming a node the template lacks is an error at plan time. Write-only: " +
		"state and plans keep each row's digest (what tells a changed row), not the rows, so 10,000 rows cost Terraform " +
		"little to plan, and a row may hold an ephemeral value."
	batchRerunFailedDoc = "Submit the rows that did not succeed (`failed`, `canceled`, `expired`, `rejected`) again on the " +
		"next apply, each under a new key, and nothing else; a row whose outcome was `unknown` is resent under its " +
		"own key, so it never runs twice. Default `false`. Turn it off again once they succeeded: while it is on, a " +
		"row that keeps failing is planned again at every apply."
	// The rest of what output_dir does is prose for svc_job_batch's page (templates/resources/job_batch.md.tmpl).
	batchOutputDirDoc = "Where every output is written, by row: a directory (`<output_dir>/<row key>/<name>`) or an " +
		"S3-compatible bucket URL (`s3://bucket/prefix`, each output the object `<prefix>/<row key>/<name>`). Each output " +
		"is verified against its `hash`; one missing (or changed) at plan time is drift, fetched again by the next apply " +
		"without running the row. Removing a row, or destroying the batch, deletes its files. See " +
		"[Outputs in a directory or a bucket](#outputs-in-a-directory-or-a-bucket) for the rest."
	batchValidateDoc = "Check the workflow of each row an apply submits (added, changed, run again) at plan time " +
		"against the service's node classes, read from the v1 `GET /api/object_info` where the surface serves it: " +
		workflowCheckDoc + " A row's override of an input that neither the template's node nor its class has (a " +
		"misspelled input name, which the engine would ignore) is an error too. Each problem is reported once, with " +
		"the first rows that have it. When the surface does not serve object_info, the check is skipped with a " +
		"warning. " + validateDefaultDoc
)

// batchMaxInFlightDoc is what max_in_flight does.
var batchMaxInFlightDoc = fmt.Sprintf("Rows submitted or waited for at once (default %d). To keep the service "+
	"busy, set it above the number of jobs the service runs at once: its queue then holds the next jobs while "+
	"the provider notices that the last ones ended. Without an event stream it notices an end at its next "+
	"read, a second or more later, so short jobs need more: with jobs of half a second, four times the "+
	"service's number kept an apply within 15 %% of the time the service needs for its rows.", defaultBatchMaxInFlight)

// svc_job_batch's codec: its values as Terraform sends them (tftypes.Value) to and from
// jobBatchModel, attribute by attribute through jobBatchAttributeTable and the typed resources'
// codec (typed_codec.go), without reflection; its own fields (rows, results) code themselves
// here. This codec and the server_*.go layers are the only code of svc_job_batch that handles
// Terraform's raw values.

// The results element is flat on purpose: Terraform walks every value of the resource several
// times in each plan (decoding, comparing, checking, encoding, rendering), so the cost of a
// 10,000-row batch is in the number of values per row. Four attributes and one asset id per
// output cost a third of the values an object per output with an error object did.
var (
	batchRowType     = types.ObjectType{AttrTypes: batchRowAttrTypes}.TerraformType(context.Background()).(tftypes.Object)
	batchOutputsType = batchRowType.AttributeTypes[batchResultAttrOutputs].(tftypes.Map)
	batchAssetsType  = batchOutputsType.ElementType.(tftypes.List)
	batchResultsTyp  = tftypes.Map{ElementType: batchRowType}
	// jobBatchObjectType is svc_job_batch's type, from its schema.
	jobBatchObjectType = schema.Schema{Attributes: jobBatchAttributes()}.Type().TerraformType(context.Background()).(tftypes.Object)
)

// decodeJobBatch reads svc_job_batch's value v into a model; ok is false when v is null,
// unknown, not an object, or holds a value that does not fit its attribute.
func decodeJobBatch(v tftypes.Value) (m jobBatchModel, ok bool) {
	return decodeModel(v, jobBatchAttributeTable)
}

// encodeJobBatch is m as a value of svc_job_batch's type (its rows null: write-only).
func encodeJobBatch(m *jobBatchModel) (tftypes.Value, error) {
	return encodeModel(m, jobBatchAttributeTable, jobBatchObjectType)
}

func (rs *batchRowsValue) fromTerraform(v tftypes.Value) error {
	*rs = batchRowsValueOf(v)
	return nil
}

// toTerraform is null: the rows are write-only, never in a plan or a state.
func (rs *batchRowsValue) toTerraform(typ tftypes.Type) tftypes.Value {
	return tftypes.NewValue(typ, nil)
}

func (rs *batchResults) fromTerraform(v tftypes.Value) (err error) {
	*rs, err = batchResultsOf(v)
	return err
}

// toTerraform is the results map, of its one type (batchResultsTyp).
func (rs *batchResults) toTerraform(tftypes.Type) tftypes.Value { return rs.terraformValue() }

// batchRowsValueOf reads the rows value (goValueOf).
func batchRowsValueOf(v tftypes.Value) batchRowsValue {
	if !v.IsFullyKnown() {
		return batchRowsValue{Err: fmt.Errorf("value is not known yet")}
	}
	value, err := goValueOf(v)
	return batchRowsValue{Known: true, Value: value, Err: err}
}

// batchResultsOf reads the results map.
func batchResultsOf(v tftypes.Value) (batchResults, error) {
	switch {
	case v.Type() == nil:
		return batchResults{}, nil // absent: null
	case !v.IsKnown():
		return batchResults{State: attr.ValueStateUnknown}, nil
	case v.IsNull():
		return batchResults{}, nil
	}
	var elems map[string]tftypes.Value
	if err := v.As(&elems); err != nil {
		return batchResults{}, err
	}
	out := batchResults{State: attr.ValueStateKnown, Rows: make(map[string]batchResult, len(elems))}
	for key, e := range elems {
		r, err := batchResultOf(e)
		if err != nil {
			return batchResults{}, fmt.Errorf("results[%q]: %w", key, err)
		}
		out.Rows[key] = r
	}
	return out, nil
}

// batchResultOf reads one row's element of results.
func batchResultOf(v tftypes.Value) (r batchResult, err error) {
	switch {
	case !v.IsKnown():
		return batchResult{State: attr.ValueStateUnknown}, nil
	case v.IsNull():
		return batchResult{}, nil
	}
	attrs, ok := objectAttrs(v)
	if !ok {
		return r, fmt.Errorf("not an object")
	}
	r.State = attr.ValueStateKnown
	if err := decodeFields(attrs, map[string]any{batchResultAttrID: &r.ID, batchResultAttrStatus: &r.Status, batchResultAttrError: &r.Error}); err != nil {
		return r, err
	}
	r.Outputs, err = batchOutputsOf(attrs[batchResultAttrOutputs])
	return r, err
}

// batchOutputsOf reads a row's outputs: asset ids by node id; nil for null.
func batchOutputsOf(v tftypes.Value) (map[string][]string, error) {
	if v.Type() == nil || v.IsNull() {
		return nil, nil
	}
	var byNode map[string]tftypes.Value
	if err := v.As(&byNode); err != nil {
		return nil, err
	}
	out := make(map[string][]string, len(byNode))
	for node, list := range byNode {
		var ids []tftypes.Value
		if err := list.As(&ids); err != nil {
			return nil, err
		}
		out[node] = make([]string, 0, len(ids))
		for _, id := range ids {
			var s string
			if err := id.As(&s); err != nil {
				return nil, err
			}
			out[node] = append(out[node], s)
		}
	}
	return out, nil
}

func (rs *batchResults) terraformValue() tftypes.Value {
	switch rs.State {
	case attr.ValueStateUnknown:
		return tftypes.NewValue(batchResultsTyp, tftypes.UnknownValue)
	case attr.ValueStateNull:
		return tftypes.NewValue(batchResultsTyp, nil)
	}
	elems := make(map[string]tftypes.Value, len(rs.Rows))
	for key, r := range rs.Rows {
		elems[key] = r.terraformValue()
	}
	return tftypes.NewValue(batchResultsTyp, elems)
}

func (r batchResult) terraformValue() tftypes.Value {
	switch r.State {
	case attr.ValueStateUnknown:
		return tftypes.NewValue(batchRowType, tftypes.UnknownValue)
	case attr.ValueStateNull:
		return tftypes.NewValue(batchRowType, nil)
	}
	outputs := tftypes.NewValue(batchOutputsType, nil)
	if r.Outputs != nil {
		byNode := make(map[string]tftypes.Value, len(r.Outputs))
		for node, ids := range r.Outputs {
			list := make([]tftypes.Value, 0, len(ids))
			for _, id := range ids {
				list = append(list, tftypes.NewValue(tftypes.String, id))
			}
			byNode[node] = tftypes.NewValue(batchAssetsType, list)
		}
		outputs = tftypes.NewValue(batchOutputsType, byNode)
	}
	return tftypes.NewValue(batchRowType, map[string]tftypes.Value{
		batchResultAttrID: stringTerraformValue(r.ID), batchResultAttrStatus: stringTerraformValue(r.Status),
		batchResultAttrOutputs: outputs, batchResultAttrError: stringTerraformValue(r.Error),
	})
}

// goValueOf converts a Terraform value into plain Go values that encode to the equivalent JSON;
// an unknown value anywhere is an error.
func goValueOf(v tftypes.Value) (any, error) {
	if !v.IsFullyKnown() {
		return nil, fmt.Errorf("value is not known yet")
	}
	if v.IsNull() {
		return nil, nil
	}
	typ := v.Type()
	switch {
	case typ.Is(tftypes.String):
		var s string
		return s, v.As(&s)
	case typ.Is(tftypes.Bool):
		var b bool
		return b, v.As(&b)
	case typ.Is(tftypes.Number):
		f := new(big.Float)
		if err := v.As(&f); err != nil {
			return nil, err
		}
		return jsonNumber(f), nil
	case typ.Is(tftypes.List{}), typ.Is(tftypes.Tuple{}), typ.Is(tftypes.Set{}):
		var elems []tftypes.Value
		if err := v.As(&elems); err != nil {
			return nil, err
		}
		return goListOf(elems)
	case typ.Is(tftypes.Map{}), typ.Is(tftypes.Object{}):
		var elems map[string]tftypes.Value
		if err := v.As(&elems); err != nil {
			return nil, err
		}
		return goMapOf(elems)
	}
	return nil, fmt.Errorf("unsupported value type %s", typ)
}

func goListOf(elems []tftypes.Value) ([]any, error) {
	out := make([]any, 0, len(elems))
	for _, e := range elems {
		g, err := goValueOf(e)
		if err != nil {
			return nil, err
		}
		out = append(out, g)
	}
	return out, nil
}

func goMapOf(elems map[string]tftypes.Value) (map[string]any, error) {
	out := make(map[string]any, len(elems))
	for k, e := range elems {
		g, err := goValueOf(e)
		if err != nil {
			return nil, err
		}
		out[k] = g
	}
	return out, nil
}
