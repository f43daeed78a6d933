package provider

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/svc-org/terraform-provider-svc/internal/client"
)

var (
	_ resource.Resource                   = (*nodeClaimResource)(nil)
	_ resource.ResourceWithConfigure      = (*nodeClaimResource)(nil)
	_ resource.ResourceWithImportState    = (*nodeClaimResource)(nil)
	_ resource.ResourceWithIdentity       = (*nodeClaimResource)(nil)
	_ resource.ResourceWithModifyPlan     = (*nodeClaimResource)(nil)
	_ resource.ResourceWithValidateConfig = (*nodeClaimResource)(nil)
)

// NewNodeClaimResource returns the svc_registry_node_claim resource.
func NewNodeClaimResource() resource.Resource { return &nodeClaimResource{} }

type nodeClaimResource struct {
	data *providerData
}

type nodeClaimModel struct {
	ID                  types.String `tfsdk:"id"`
	PublisherID         types.String `tfsdk:"publisher_id"`
	NodeID              types.String `tfsdk:"node_id"`
	RepoTokenWO         types.String `tfsdk:"repo_token_wo"`
	RepoTokenWOVersion  types.Int64  `tfsdk:"repo_token_wo_version"`
	DeleteNodeOnDestroy types.Bool   `tfsdk:"delete_node_on_destroy"`
}

func (r *nodeClaimResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_registry_node_claim"
}

func (r *nodeClaimResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		// The rest of svc_registry_node_claim's description is prose for its page:
		// templates/resources/registry_node_claim.md.tmpl.
		MarkdownDescription: "Claims an unclaimed node of the node registry for a publisher (`claim-my-node`). The " +
			"registry checks with the repository token that you own the node's repository.",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{
				Computed:            true,
				MarkdownDescription: "`publisher_id/node_id`, known at plan time.",
				PlanModifiers:       []planmodifier.String{stringplanmodifier.UseStateForUnknown(), claimIDFromConfig},
			},
			"publisher_id": schema.StringAttribute{
				Required:            true,
				MarkdownDescription: "Publisher the node moves into. You must be one of its members. Changing it replaces the resource (a new claim).",
				Validators:          registryIDValidators(),
				PlanModifiers:       []planmodifier.String{stringplanmodifier.RequiresReplace()},
			},
			"node_id": schema.StringAttribute{
				Required:            true,
				MarkdownDescription: "Node to claim. Changing it replaces the resource (a new claim).",
				Validators:          registryIDValidators(),
				PlanModifiers:       []planmodifier.String{stringplanmodifier.RequiresReplace()},
			},
			"repo_token_wo": schema.StringAttribute{
				Optional:  true,
				Sensitive: true,
				WriteOnly: true,
				MarkdownDescription: "Code-hosting token that proves you own the node's repository, sent as the body's " +
					"`REPO_TOKEN`. Write-only: never stored in state or plan. Required to create the claim; pass it " +
					"through an ephemeral variable or resource. It is used only when the claim is made.",
			},
			"repo_token_wo_version": schema.Int64Attribute{
				Optional: true,
				MarkdownDescription: "Change this number when you rotate the repository token, to record the rotation. " +
					"The registry has no operation to re-verify a claim that holds, so a change updates state in " +
					"place and sends nothing: the node stays claimed.",
			},
			"delete_node_on_destroy": schema.BoolAttribute{
				Optional: true, Computed: true, Default: booldefault.StaticBool(false),
				MarkdownDescription: "On destroy, delete the node from the registry (`DELETE /publishers/{publisher_id}/nodes/{node_id}`) " +
					"instead of just forgetting the claim. A node that is already gone counts as deleted. Default `false`.",
			},
		},
	}
}

// nodeClaimIdentity names a claim in the registry: the publisher and the node.
var nodeClaimIdentity = []string{"publisher_id", "node_id"}

func (r *nodeClaimResource) IdentitySchema(_ context.Context, _ resource.IdentitySchemaRequest, resp *resource.IdentitySchemaResponse) {
	resp.IdentitySchema = stringIdentitySchema(
		identityAttribute{name: "publisher_id", description: "Publisher the node is claimed for."},
		identityAttribute{name: "node_id", description: "Node claimed."},
	)
}

func (r *nodeClaimResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.data = configureData(req.ProviderData, &resp.Diagnostics)
}

// ValidateConfig checks the write-only token when it is known: an empty string is never valid.
func (r *nodeClaimResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var token types.String
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("repo_token_wo"), &token)...)
	if !token.IsNull() && !token.IsUnknown() && strings.TrimSpace(token.ValueString()) == "" {
		resp.Diagnostics.AddAttributeError(path.Root("repo_token_wo"), "Empty repository token",
			"repo_token_wo must be the code-hosting token of the node's repository owner; it is empty.")
	}
}

// ModifyPlan refuses, at plan time, a new claim without a repository token: the registry would
// reject it. An existing claim (created or imported) needs none.
func (r *nodeClaimResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() || !req.State.Raw.IsNull() {
		return // destroy, or an update of an existing claim
	}
	var token types.String
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("repo_token_wo"), &token)...)
	if token.IsNull() {
		resp.Diagnostics.AddAttributeError(path.Root("repo_token_wo"), "Repository token required",
			"Claiming a node needs repo_token_wo, the code-hosting token proving you own the node's repository. "+
				"Pass it through an ephemeral variable. To manage a node that is already claimed, import it instead: "+
				"terraform import <address> <publisher_id>/<node_id>.")
	}
}

func (r *nodeClaimResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan nodeClaimModel
	var token types.String
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("repo_token_wo"), &token)...)
	if resp.Diagnostics.HasError() {
		return
	}
	data := r.data.withSecrets(token)
	ctx = data.logContext(ctx)
	publisher, node := plan.PublisherID.ValueString(), plan.NodeID.ValueString()

	err := data.client.ClaimNode(ctx, client.ClaimNodeInput{PublisherID: publisher, NodeID: node, RepoToken: token.ValueString()})
	if err != nil {
		resp.Diagnostics.AddError(errorSummary(err, familyRegistry, "Claiming node failed"), data.redact(data.orNotSent(err, withSettingHint(describeClaimError(err, publisher, node), err, familyRegistry))))
		return
	}
	logInfo(ctx, "node claimed", map[string]any{"publisher_id": publisher, "node_id": node})
	plan.ID = types.StringValue(publisher + "/" + node)
	plan.RepoTokenWO = types.StringNull() // write-only: never in state
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
	resp.Diagnostics.Append(setIdentityFromState(ctx, resp.State, resp.Identity, nodeClaimIdentity...)...)
}

// Read keeps state as it is: the registry offers no operation to read a claim (see the schema
// description), and guessing drift from another call would be worse than admitting none is seen.
func (r *nodeClaimResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var state nodeClaimModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
	resp.Diagnostics.Append(setIdentityFromState(ctx, resp.State, resp.Identity, nodeClaimIdentity...)...)
}

// Update changes only provider-side settings (delete_node_on_destroy, repo_token_wo_version):
// publisher and node replace the resource, and a claim that holds cannot be re-verified, so
// nothing is sent.
func (r *nodeClaimResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan nodeClaimModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	plan.RepoTokenWO = types.StringNull()
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
	resp.Diagnostics.Append(setIdentityFromState(ctx, resp.State, resp.Identity, nodeClaimIdentity...)...)
}

func (r *nodeClaimResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state nodeClaimModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	ctx = r.data.logContext(ctx)
	publisher, node := state.PublisherID.ValueString(), state.NodeID.ValueString()
	if !state.DeleteNodeOnDestroy.ValueBool() {
		logInfo(ctx, "forgetting the node claim; the node stays claimed in the registry", map[string]any{"publisher_id": publisher, "node_id": node})
		return
	}
	gone, err := r.data.client.DeleteNode(ctx, publisher, node)
	if err != nil {
		resp.Diagnostics.AddError("Deleting node failed", r.data.redact(fmt.Sprintf(
			"delete_node_on_destroy is true, but node %q of publisher %q could not be deleted; it is kept in state.\n\n%v", node, publisher, err)))
		return
	}
	if gone {
		logWarn(ctx, "node was already absent from the registry (404); treating it as deleted", map[string]any{"publisher_id": publisher, "node_id": node})
		return
	}
	logInfo(ctx, "node deleted", map[string]any{"publisher_id": publisher, "node_id": node})
}

// ImportState takes "<publisher_id>/<node_id>", or an identity naming both.
func (r *nodeClaimResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	publisher, node, ok := strings.Cut(req.ID, "/")
	if ids, byIdentity := importedIdentity(ctx, req, &resp.Diagnostics, nodeClaimIdentity...); byIdentity {
		publisher, node, ok = ids[0], ids[1], true
	}
	if resp.Diagnostics.HasError() {
		return
	}
	if !ok || !validRegistryID(publisher) || !validRegistryID(node) {
		resp.Diagnostics.AddError("Invalid import id",
			fmt.Sprintf("Import svc_registry_node_claim by \"<publisher_id>/<node_id>\", or by an identity with publisher_id and node_id; got %q.", publisher+"/"+node))
		return
	}
	// Nothing is read from the registry (it has no such operation): import records the claim as
	// the user states it. Applying the imported resource sends nothing.
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), publisher+"/"+node)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("publisher_id"), publisher)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("node_id"), node)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("delete_node_on_destroy"), false)...)
	resp.Diagnostics.Append(setIdentityFromState(ctx, resp.State, resp.Identity, nodeClaimIdentity...)...)
}

// describeClaimError adds what to do to the service's error, which already carries the status,
// the registry's error code and message, and the request id.
func describeClaimError(err error, publisher, node string) string {
	var unknown *client.UnknownOutcomeError
	if errors.As(err, &unknown) {
		return fmt.Sprintf("The claim of node %q for publisher %q was sent but no definitive answer came back, so the "+
			"node may or may not be claimed now.\n\nCause: %v\n\nThe provider does not resend a claim: a second one "+
			"would be refused as already claimed and hide whether the first succeeded. Check the node in the "+
			"registry; if it belongs to %q, run `terraform import <address> %s/%s`; otherwise apply again.",
			node, publisher, unknown.Cause, publisher, publisher, node)
	}
	msg := err.Error()
	switch {
	case client.AlreadyClaimed(err):
		msg += fmt.Sprintf("\n\nIf the node was claimed for %q by an earlier apply whose answer was lost, import it: "+
			"`terraform import <address> %s/%s`.", publisher, publisher, node)
	}
	return msg
}
