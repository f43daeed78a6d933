package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/svc-org/terraform-provider-svc/internal/client"
)

// jobModel is svc_job's values (a state, a plan or a configuration) as one typed struct. The
// codec (resource_job_codec.go) reads it from, and writes it to, the values Terraform sends,
// attribute by attribute through jobAttributeTable, without reflection: converting through the
// framework's reflection cost more than the rest of a call in a plan or an apply of many jobs.
// A null attribute is a null field; an unknown one (in a plan) an unknown field.
type jobModel struct {
	ID                 types.String
	Workflow           types.String
	IdempotencyKey     types.String
	PartnerAPIKeyWO    types.String
	PartnerAuthTokenWO types.String
	WaitForCompletion  types.Bool
	CancelOnDestroy    types.Bool
	RerunOnExpiry      types.Bool
	Validate           types.Bool
	Timeouts           timeouts.Value
	jobStateRecord
}

// jobStateRecord is the part of the service's job record that svc_job's state keeps
// (jobStateRecordAttrTypes): what a finished job's users need and what lasts.
type jobStateRecord struct {
	Status      types.String
	CompletedAt types.String
	ExpiresAt   types.String
	Outputs     jobOutputList
	Error       jobErrorObject
}

// jobOutputList is the outputs list of svc_job's state: null, unknown (planned), or its
// elements.
type jobOutputList struct {
	State attr.ValueState
	Elems []jobOutput
}

// jobOutput is one output in svc_job's state (outputAttrTypes): what lasts of an asset.
type jobOutput struct {
	NodeID, Name, Type, ContentType types.String
	SizeBytes                       types.Int64
	ID, Hash, JobID                 types.String
}

// jobErrorObject is the failure detail in svc_job's state (jobErrorAttrTypes): null, unknown
// (planned), or its attributes.
type jobErrorObject struct {
	State                                       attr.ValueState
	Code, Message, NodeID, ClassType, Traceback types.String
}

// modelAttribute is one row of a resource's attribute table: its name, its schema (type,
// default, description, validators, plan modifiers) and the field of the resource's model M
// that holds it. def is the default of a setting that has one (nil otherwise); the schema's
// Default is made from it.
type modelAttribute[M any] struct {
	name  string
	attr  schema.Attribute
	def   any
	field func(*M) any // a pointer to the field
}

// jobAttribute is a row of svc_job's attribute table.
type jobAttribute = modelAttribute[jobModel]

// jobAttributeTable is svc_job's attributes, in one place: the schema (jobAttributes), the
// defaults (jobBoolDefaults) and the codec (decodeJob, encodeJob) follow from it.
// TestJobAttributeTableSchemaAndCodecAgree fails when they disagree.
var jobAttributeTable = newJobAttributeTable()

func newJobAttributeTable() []jobAttribute {
	record := jobRecordResourceAttributes()
	return []jobAttribute{
		{name: jobAttrID, attr: jobIDAttribute(), field: func(m *jobModel) any { return &m.ID }},
		{name: jobAttrWorkflow, attr: jobWorkflowAttribute(), field: func(m *jobModel) any { return &m.Workflow }},
		{name: jobAttrIdempotencyKey, attr: jobIdempotencyKeyAttribute(), field: func(m *jobModel) any { return &m.IdempotencyKey }},
		{name: jobAttrPartnerAPIKeyWO, attr: jobPartnerAPIKeyAttribute(), field: func(m *jobModel) any { return &m.PartnerAPIKeyWO }},
		{name: jobAttrPartnerAuthTokenWO, attr: schema.StringAttribute{Optional: true, WriteOnly: true, MarkdownDescription: jobPartnerAuthTokenDoc},
			field: func(m *jobModel) any { return &m.PartnerAuthTokenWO }},
		boolSetting(jobAttrWaitForCompletion, true, jobWaitForCompletionDoc, func(m *jobModel) any { return &m.WaitForCompletion }),
		boolSetting(jobAttrCancelOnDestroy, true, jobCancelOnDestroyDoc, func(m *jobModel) any { return &m.CancelOnDestroy }),
		boolSetting(jobAttrRerunOnExpiry, false, jobRerunOnExpiryDoc, func(m *jobModel) any { return &m.RerunOnExpiry }),
		boolSetting(jobAttrValidate, defaultValidate, jobValidateDoc, func(m *jobModel) any { return &m.Validate }),
		{name: jobAttrTimeouts, attr: timeouts.Attributes(context.Background(), jobTimeoutsOpts), field: func(m *jobModel) any { return &m.Timeouts }},
		{name: jobAttrStatus, attr: record[jobAttrStatus], field: func(m *jobModel) any { return &m.Status }},
		{name: jobAttrCompletedAt, attr: record[jobAttrCompletedAt], field: func(m *jobModel) any { return &m.CompletedAt }},
		{name: jobAttrExpiresAt, attr: record[jobAttrExpiresAt], field: func(m *jobModel) any { return &m.ExpiresAt }},
		{name: jobAttrOutputs, attr: record[jobAttrOutputs], field: func(m *jobModel) any { return &m.Outputs }},
		{name: jobAttrError, attr: record[jobAttrError], field: func(m *jobModel) any { return &m.Error }},
	}
}

// boolSetting is a row of a resource's attribute table for a bool setting with a default.
func boolSetting[M any](name string, def bool, doc string, field func(*M) any) modelAttribute[M] {
	return modelAttribute[M]{name: name, def: def, field: field, attr: schema.BoolAttribute{
		Optional: true, Computed: true, Default: booldefault.StaticBool(def), MarkdownDescription: doc,
	}}
}

// holdsDefaultsLeftNull reports whether prior (a prior state) holds its attribute table's
// default of each setting that configuredNull says the configuration leaves null: the framework
// plans the default otherwise.
func holdsDefaultsLeftNull[M any](table []modelAttribute[M], prior *M, configuredNull func(modelAttribute[M]) bool) bool {
	for _, a := range table {
		if a.def == nil || !configuredNull(a) {
			continue
		}
		switch def := a.def.(type) {
		case bool:
			if !a.field(prior).(*types.Bool).Equal(types.BoolValue(def)) {
				return false
			}
		case int64:
			if !a.field(prior).(*types.Int64).Equal(types.Int64Value(def)) {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// jobAttributes is svc_job's schema attributes, from its table.
func jobAttributes() map[string]schema.Attribute { return schemaAttributes(jobAttributeTable) }

// schemaAttributes is a schema's attributes, from its attribute table.
func schemaAttributes[M any](table []modelAttribute[M]) map[string]schema.Attribute {
	attrs := make(map[string]schema.Attribute, len(table))
	for _, a := range table {
		attrs[a.name] = a.attr
	}
	return attrs
}

// jobBoolDefaults are the defaults of svc_job's settings, from its table: the schema plans
// them, an import sets them, and settledJobServer checks that a state holds them. svc_job has no
// other default (TestJobBoolDefaultsAreTheSchemas).
var jobBoolDefaults = func() map[string]bool {
	defaults := map[string]bool{}
	for _, a := range jobAttributeTable {
		if def, ok := a.def.(bool); ok {
			defaults[a.name] = def
		}
	}
	return defaults
}()

func jobIDAttribute() schema.Attribute {
	return schema.StringAttribute{
		Computed:            true,
		MarkdownDescription: "Job id (a UUID), in state as soon as the service accepted the job.",
		PlanModifiers:       []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
	}
}

func jobWorkflowAttribute() schema.Attribute {
	return schema.StringAttribute{
		Required:   true,
		CustomType: jsonSemanticType{},
		MarkdownDescription: "API-format workflow graph as JSON (node id to `{class_type, inputs}`), sent verbatim. " +
			"Formatting differences (whitespace, key order, number spelling such as `1`, `1.0`, `1e0`) are not changes: they plan nothing and send nothing. A UI-format export, a non-object or invalid JSON is rejected at " +
			"plan time. Changing it replaces the job.",
		Validators:    []validator.String{apiWorkflowValidator{}},
		PlanModifiers: []planmodifier.String{jsonKeepEquivalentState(), replaceUnlessImported("Changing the workflow replaces the job.")},
	}
}

func jobIdempotencyKeyAttribute() schema.Attribute {
	return schema.StringAttribute{
		Optional: true,
		Computed: true,
		MarkdownDescription: "`Idempotency-Key` of the submission. Left unset, a random UUID is chosen before the first " +
			"attempt and reused on every retry, so a retried submission can never run the workflow twice. The key is " +
			"single-use on the service (for 24 hours): setting it yourself to a key used before makes the submission fail. " +
			"Changing it replaces the job. A workflow change, which replaces the job, is refused at plan time while a " +
			"configured key stays the same: change the key with it, or remove it.",
		Validators: []validator.String{stringvalidator.LengthBetween(1, 255)},
		PlanModifiers: []planmodifier.String{
			stringplanmodifier.UseStateForUnknown(),
			stringplanmodifier.RequiresReplaceIfConfigured(),
		},
	}
}

// jobPartnerAPIKeyAttribute is the write-only API key. The write-only credentials are not marked
// Sensitive: Terraform never puts their value in a plan or in state and shows them as
// "(write-only attribute)", so the mark hides nothing. It would record a sensitive path in every
// job's state, bytes Terraform copies and rewrites for each resource it changes: 9% of the CPU
// of a plan of 1,000 jobs. (A value from a sensitive variable is still marked, by Terraform,
// from the configuration.)
func jobPartnerAPIKeyAttribute() schema.Attribute {
	return schema.StringAttribute{
		Optional:  true,
		WriteOnly: true,
		MarkdownDescription: "API key for partner nodes, sent as `extra_data.api_key_svc_org`. Write-only: never stored. " +
			"Defaults to the provider's `partner_api_key`. Conflicts with `partner_auth_token_wo`.",
		Validators: []validator.String{stringvalidator.ConflictsWith(path.MatchRoot(jobAttrPartnerAuthTokenWO))},
	}
}

// What svc_job's settings do, as its schema says.
const (
	jobPartnerAuthTokenDoc  = "Session bearer token for partner nodes, sent as `extra_data.auth_token_svc_org`. Write-only. Short-lived: one that expires while the job is queued fails the partner node."
	jobWaitForCompletionDoc = "Wait for a terminal status during apply (default `true`). When `false`, apply returns once the job is queued and later refreshes fill in `status` and `outputs`. Turned on while the job in state still runs, the next apply waits for that same job, in place."
	jobCancelOnDestroyDoc   = "On destroy, cancel a job that is not finished and wait for it to stop (default `true`). A finished job is just forgotten."
	jobRerunOnExpiryDoc     = "Once the job is past its `expires_at`, remove it from state so the next apply runs it again. Decided from `expires_at` alone: a finished job is not read again to see the service expire it. Default `false`: an expired job is not drift, and state keeps what it held."
	jobValidateDoc          = "Check a new or changed workflow at plan time against the service's node classes, read from the v1 " +
		"`GET /api/object_info` where the surface serves it: " + workflowCheckDoc + " When the surface " +
		"does not serve object_info, the check is skipped with a warning. " + validateDefaultDoc
)

// heldJob is the job these values hold, as far as waiting for it or cancelling it needs: its
// id and last known status. State keeps no link of the job: one still in flight is read by its
// id, and that record's links are followed (to cancel it, to follow its events).
func (m *jobModel) heldJob() *client.Job {
	return &client.Job{ID: m.ID.ValueString(), Status: m.Status.ValueString()}
}

// setRecord puts the service's record of job, as svc_job's state keeps it, in place of the
// record m holds, reports the record's warnings (values the client could not read) in diags,
// and returns how many distinct outputs were left out of the outputs kept.
func (m *jobModel) setRecord(job *client.Job, diags *diag.Diagnostics) (omitted int) {
	diags.Append(recordWarnings(job)...)
	m.jobStateRecord, omitted = stateRecordOf(job)
	return omitted
}

// stateRecordOf is the part of the service's record of job that svc_job's state keeps: times to
// the second, in UTC (recordTime), each output once and at most maxOutputsInState, every text
// bounded, no signed URL; omitted counts the distinct outputs left out.
func stateRecordOf(job *client.Job) (rec jobStateRecord, omitted int) {
	rec.Status = types.StringValue(job.Status)
	rec.CompletedAt = types.StringPointerValue(recordTimePtr(job.CompletedAt))
	rec.ExpiresAt = types.StringValue(recordTime(job.ExpiresAt))
	kept, omitted := uniqueBounded(job.Outputs, func(o client.Output) string { return o.ID })
	rec.Outputs = jobOutputList{State: attr.ValueStateKnown, Elems: make([]jobOutput, 0, len(kept))}
	for _, o := range kept {
		rec.Outputs.Elems = append(rec.Outputs.Elems, jobOutputOf(o))
	}
	rec.Error = jobErrorOf(job.Error)
	return rec, omitted
}

func jobOutputOf(o client.Output) jobOutput {
	return jobOutput{
		NodeID: types.StringValue(boundText(o.NodeID)), Name: types.StringValue(boundText(o.Name)),
		Type: types.StringValue(boundText(o.Type)), ContentType: types.StringValue(boundText(o.ContentType)),
		SizeBytes: types.Int64Value(o.SizeBytes), ID: types.StringValue(boundText(o.ID)),
		Hash: types.StringPointerValue(boundTextPtr(o.Hash)), JobID: types.StringPointerValue(boundTextPtr(o.JobID)),
	}
}

// jobErrorOf is the failure detail in state, its texts bounded; null unless the job failed.
func jobErrorOf(e *client.JobError) jobErrorObject {
	if e == nil {
		return jobErrorObject{State: attr.ValueStateNull}
	}
	return jobErrorObject{
		State: attr.ValueStateKnown, Code: types.StringValue(boundText(e.Code)), Message: types.StringValue(boundText(e.Message)),
		NodeID: types.StringPointerValue(boundTextPtr(e.NodeID)), ClassType: types.StringPointerValue(boundTextPtr(e.ClassType)),
		Traceback: types.StringPointerValue(boundTracebackPtr(e.Traceback)),
	}
}

// unknownStateRecord is the record planned for an update that waits for the job: unknown, so
// that Terraform shows "known after apply" and whatever uses it waits for the update.
func unknownStateRecord() jobStateRecord {
	return jobStateRecord{
		Status: types.StringUnknown(), CompletedAt: types.StringUnknown(), ExpiresAt: types.StringUnknown(),
		Outputs: jobOutputList{State: attr.ValueStateUnknown}, Error: jobErrorObject{State: attr.ValueStateUnknown},
	}
}

// nullStateRecord is the record of a submission no answer named a job for: nothing known.
func nullStateRecord() jobStateRecord {
	return jobStateRecord{
		Status: types.StringNull(), CompletedAt: types.StringNull(), ExpiresAt: types.StringNull(),
		Outputs: jobOutputList{State: attr.ValueStateNull}, Error: jobErrorObject{State: attr.ValueStateNull},
	}
}
