package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/ephemeral"
	"github.com/hashicorp/terraform-plugin-framework/ephemeral/schema"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/svc-org/terraform-provider-svc/internal/client"
)

var _ ephemeral.EphemeralResourceWithConfigure = (*outputURLEphemeralResource)(nil)

// NewOutputURLEphemeralResource returns the svc_output_url ephemeral resource.
func NewOutputURLEphemeralResource() ephemeral.EphemeralResource {
	return &outputURLEphemeralResource{}
}

// outputURLEphemeralResource hands out a freshly signed URL of an asset. A signed URL is a
// credential that expires within minutes (or seconds): it is asked for each time it is used and
// never stored, which an ephemeral resource guarantees (Terraform keeps its result out of plan
// and state).
type outputURLEphemeralResource struct {
	data *providerData
}

type outputURLModel struct {
	AssetID      types.String `tfsdk:"asset_id"`
	URL          types.String `tfsdk:"url"`
	URLExpiresAt types.String `tfsdk:"url_expires_at"`
	ContentType  types.String `tfsdk:"content_type"`
	SizeBytes    types.Int64  `tfsdk:"size_bytes"`
}

func (e *outputURLEphemeralResource) Metadata(_ context.Context, req ephemeral.MetadataRequest, resp *ephemeral.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_output_url"
}

func (e *outputURLEphemeralResource) Schema(_ context.Context, _ ephemeral.SchemaRequest, resp *ephemeral.SchemaResponse) {
	resp.Schema = schema.Schema{
		// The rest of svc_output_url's description is prose for its page:
		// templates/ephemeral-resources/output_url.md.tmpl.
		MarkdownDescription: "A freshly signed download URL of an asset (a job output, `svc_job.outputs[i].id`, or an " +
			"upload), read with `GET /api/v2/assets/{id}` each time Terraform opens it, during plan and again during " +
			"apply. Being ephemeral, it is never written to the plan or the state: signed URLs are credentials, and " +
			"they expire (on some services within seconds), so use it at once, in a provisioner, a write-only " +
			"argument or another ephemeral context. To keep a file, use `svc_output_file` with `asset_id`.",
		Attributes: map[string]schema.Attribute{
			"asset_id": schema.StringAttribute{
				Required:            true,
				MarkdownDescription: "Asset id, such as `svc_job.test.outputs[0].id`.",
				Validators:          []validator.String{stringvalidator.LengthAtLeast(1)},
			},
			"url": schema.StringAttribute{
				Computed: true, Sensitive: true,
				MarkdownDescription: "Signed URL of the asset's bytes, valid until `url_expires_at`. It carries its own " +
					"authorization: fetch it without the API key.",
			},
			"url_expires_at": schema.StringAttribute{
				Computed:            true,
				MarkdownDescription: "When `url` stops working (RFC 3339), as the service says.",
			},
			"content_type": schema.StringAttribute{
				Computed: true, MarkdownDescription: "Media type of the asset.",
			},
			"size_bytes": schema.Int64Attribute{
				Computed: true, MarkdownDescription: "Size of the asset in bytes.",
			},
		},
	}
}

func (e *outputURLEphemeralResource) Configure(_ context.Context, req ephemeral.ConfigureRequest, resp *ephemeral.ConfigureResponse) {
	e.data = configureData(req.ProviderData, &resp.Diagnostics)
}

func (e *outputURLEphemeralResource) Open(ctx context.Context, req ephemeral.OpenRequest, resp *ephemeral.OpenResponse) {
	if e.data == nil {
		resp.Diagnostics.AddError("Provider not configured",
			"ephemeral.svc_output_url needs the svc provider configured. This is a bug in the provider or in Terraform.")
		return
	}
	if !e.data.readyToRead("ephemeral.svc_output_url", &resp.Diagnostics) {
		return
	}
	var m outputURLModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	readCtx, cancel := e.data.readContext(ctx)
	defer cancel()
	asset, err := e.data.client.GetAsset(readCtx, m.AssetID.ValueString())
	switch {
	case client.Gone(err) && !client.RouteNotFound(err):
		resp.Diagnostics.AddAttributeError(path.Root("asset_id"), "Asset not found", e.data.redact(fmt.Sprintf(
			"Asset %s does not exist on the service: the id is wrong, or the job that made it aged out after its "+
				"expires_at (outputs are kept only until then).\n\n%v", m.AssetID.ValueString(), err)))
		return
	case err != nil:
		resp.Diagnostics.AddError("Reading asset failed", e.data.describeReadError(readCtx, err, familyService))
		return
	case asset.URL == "":
		resp.Diagnostics.AddAttributeError(path.Root("asset_id"), "Asset has no URL",
			fmt.Sprintf("The service's record of asset %s gives no download URL.", m.AssetID.ValueString()))
		return
	}
	m.URL = types.StringValue(asset.URL)
	m.URLExpiresAt = types.StringValue(asset.URLExpiresAt)
	m.ContentType = types.StringValue(asset.ContentType)
	m.SizeBytes = types.Int64Value(asset.SizeBytes)
	resp.Diagnostics.Append(resp.Result.Set(ctx, &m)...)
}
