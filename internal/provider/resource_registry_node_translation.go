package provider

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/svc-org/terraform-provider-svc/internal/client"
)

var (
	_ resource.Resource              = (*nodeTranslationResource)(nil)
	_ resource.ResourceWithConfigure = (*nodeTranslationResource)(nil)
)

// NewNodeTranslationResource returns the svc_registry_node_translation resource.
func NewNodeTranslationResource() resource.Resource { return &nodeTranslationResource{} }

type nodeTranslationResource struct {
	data *providerData
}

type nodeTranslationModel struct {
	ID     types.String `tfsdk:"id"`
	NodeID types.String `tfsdk:"node_id"`
	Data   jsonSemantic `tfsdk:"data"`
}

func (r *nodeTranslationResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_registry_node_translation"
}

func (r *nodeTranslationResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "Posts translations of a node's registry entry (`POST /nodes/{node_id}/translations`) on " +
			"create and on every change of `data`.\n\n" +
			"The registry has no operation to read or delete translations: the provider does not detect drift, " +
			"and destroying the resource only removes it from state. **The registry keeps the translations.** " +
			"Likewise, removing a language from `data` posts the remaining languages and does not remove the " +
			"dropped one from the registry.",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{
				Computed:            true,
				MarkdownDescription: "The node id, known at plan time.",
				PlanModifiers:       []planmodifier.String{stringplanmodifier.UseStateForUnknown(), translationIDFromConfig},
			},
			"node_id": schema.StringAttribute{
				Required:            true,
				MarkdownDescription: "Node whose translations these are. Changing it replaces the resource.",
				Validators:          registryIDValidators(),
				PlanModifiers:       []planmodifier.String{stringplanmodifier.RequiresReplace()},
			},
			"data": schema.StringAttribute{
				Required:   true,
				CustomType: jsonSemanticType{},
				MarkdownDescription: "Translations as a JSON object of language code to an object of translated fields, " +
					"e.g. `jsonencode({ fr = { title = \"...\" } })`. Whitespace, key order and number spelling are no " +
					"change; any other change posts the translations again. " +
					"Anything else (invalid JSON, an array, a language mapped to a string) is rejected at plan time.",
				Validators:    []validator.String{translationDataValidator{}},
				PlanModifiers: []planmodifier.String{jsonKeepEquivalentState()},
			},
		},
	}
}

func (r *nodeTranslationResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.data = configureData(req.ProviderData, &resp.Diagnostics)
}

func (r *nodeTranslationResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	r.postPlanned(ctx, req.Plan, &resp.State, &resp.Diagnostics)
}

func (r *nodeTranslationResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	r.postPlanned(ctx, req.Plan, &resp.State, &resp.Diagnostics)
}

// postPlanned posts the planned translations and saves them as state once the registry took
// them. On failure state keeps what it held (nothing, or the previous data), so the next plan
// shows the change again.
func (r *nodeTranslationResource) postPlanned(ctx context.Context, plan tfsdk.Plan, state *tfsdk.State, diags *diag.Diagnostics) {
	var m nodeTranslationModel
	diags.Append(plan.Get(ctx, &m)...)
	if diags.HasError() {
		return
	}
	if diags.Append(r.post(ctx, &m)...); !diags.HasError() {
		diags.Append(state.Set(ctx, &m)...)
	}
}

// post sends the planned translations and, once the registry accepted them, fills in the id.
func (r *nodeTranslationResource) post(ctx context.Context, plan *nodeTranslationModel) diag.Diagnostics {
	var diags diag.Diagnostics
	ctx = r.data.logContext(ctx)
	node := plan.NodeID.ValueString()
	err := r.data.client.CreateNodeTranslations(ctx, node, json.RawMessage(plan.Data.ValueString()))
	if err != nil {
		msg := err.Error()
		var unknown *client.UnknownOutcomeError
		if errors.As(err, &unknown) {
			msg = fmt.Sprintf("The translations of node %q were sent but no definitive answer came back, so the registry "+
				"may or may not hold them. They are not resent automatically; apply again to post them.\n\nCause: %v", node, unknown.Cause)
		}
		diags.AddError(errorSummary(err, familyRegistry, "Posting node translations failed"), r.data.redact(r.data.orNotSent(err, withSettingHint(msg, err, familyRegistry))))
		return diags
	}
	logInfo(ctx, "node translations posted", map[string]any{"node_id": node})
	plan.ID = types.StringValue(node)
	return diags
}

// Read keeps state: the registry has no operation to read translations.
func (r *nodeTranslationResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var state nodeTranslationModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

// Delete only forgets the resource: the registry has no operation to remove translations.
func (r *nodeTranslationResource) Delete(ctx context.Context, req resource.DeleteRequest, _ *resource.DeleteResponse) {
	var node types.String
	_ = req.State.GetAttribute(ctx, path.Root("node_id"), &node)
	logInfo(r.data.logContext(ctx), "removing node translations from state; the registry keeps them", map[string]any{"node_id": node.ValueString()})
}
