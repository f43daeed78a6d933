package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework-jsontypes/jsontypes"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

var _ datasource.DataSourceWithConfigure = (*modelDataSource)(nil)

// NewModelDataSource returns the svc_model data source.
func NewModelDataSource() datasource.DataSource { return &modelDataSource{} }

type modelDataSource struct {
	data *providerData
}

type modelDataSourceModel struct {
	ID         types.String         `tfsdk:"id"`
	Provider   types.String         `tfsdk:"model_provider"`
	Model      types.String         `tfsdk:"model"`
	Billing    types.Object         `tfsdk:"billing"`
	DetailJSON jsontypes.Normalized `tfsdk:"detail_json"`
}

func (d *modelDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_model"
}

func (d *modelDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "Reads one entry of the model router's catalog, with its detail record.",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{
				Required:            true,
				Validators:          []validator.String{modelIDValidator{}},
				MarkdownDescription: "Model id, `provider/model`.",
			},
			// "provider" is a reserved root attribute name in Terraform.
			"model_provider": schema.StringAttribute{Computed: true, MarkdownDescription: "Provider slug."},
			"model":          schema.StringAttribute{Computed: true, MarkdownDescription: "Model slug."},
			"billing":        billingAttribute(),
			"detail_json": schema.StringAttribute{
				Computed:   true,
				CustomType: jsontypes.NormalizedType{},
				MarkdownDescription: "The whole detail record as JSON. The detail-only fields are open (they vary by model), " +
					"so read them with `jsondecode(data.svc_model.x.detail_json)`.",
			},
		},
	}
}

func (d *modelDataSource) Configure(_ context.Context, req datasource.ConfigureRequest, resp *datasource.ConfigureResponse) {
	d.data = configureData(req.ProviderData, &resp.Diagnostics)
}

func (d *modelDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	if !d.data.readyToRead("data.svc_model", &resp.Diagnostics) {
		return
	}
	var m modelDataSourceModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	readCtx, cancel := d.data.readContext(ctx)
	defer cancel()
	detail, err := d.data.client.GetModel(readCtx, m.ID.ValueString())
	if err != nil {
		resp.Diagnostics.AddError(errorSummary(err, familyRouter, "Reading model failed"), d.data.describeReadError(readCtx, err, familyRouter))
		return
	}
	entry := detail.Model
	billing, diags := billingObject(entry.Billing)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	m.Provider = types.StringValue(entry.Provider)
	m.Model = types.StringValue(entry.Model)
	m.Billing = billing
	m.DetailJSON = jsontypes.NewNormalizedValue(string(detail.Raw))
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}
