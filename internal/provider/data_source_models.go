package provider

import (
	"context"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

var _ datasource.DataSourceWithConfigure = (*modelsDataSource)(nil)

// NewModelsDataSource returns the svc_models data source.
func NewModelsDataSource() datasource.DataSource { return &modelsDataSource{} }

type modelsDataSource struct {
	data *providerData
}

type modelsDataSourceModel struct {
	Provider types.String `tfsdk:"model_provider"`
	PageSize types.Int64  `tfsdk:"page_size"`
	Models   types.List   `tfsdk:"models"`
}

func (d *modelsDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_models"
}

func (d *modelsDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "Lists the model router's catalog: every page, following `next_cursor` until `has_more` is false " +
			"(a short page does not end the walk). A failed page fails the read: a `503` is never taken for an empty catalog, " +
			"and an invalid cursor is an error, never a restart. The walk is not a snapshot: a model added meanwhile may not appear.",
		Attributes: map[string]schema.Attribute{
			"model_provider": schema.StringAttribute{
				Optional: true,
				MarkdownDescription: "Keep only the models of this provider slug, e.g. `demo` (filtered after listing: the catalog has no server-side filter). " +
					"(`provider` is a reserved name in Terraform, hence `model_provider`.)",
			},
			"page_size": schema.Int64Attribute{
				Optional:            true,
				Validators:          []validator.Int64{int64validator.Between(1, 100)},
				MarkdownDescription: "Entries asked per page, 1 to 100. Default: 100 (the service's maximum), which needs the fewest requests.",
			},
			"models": schema.ListNestedAttribute{
				Computed:            true,
				MarkdownDescription: "Catalog entries, in the order the service lists them.",
				NestedObject:        schema.NestedAttributeObject{Attributes: modelEntryAttributes()},
			},
		},
	}
}

func (d *modelsDataSource) Configure(_ context.Context, req datasource.ConfigureRequest, resp *datasource.ConfigureResponse) {
	d.data = configureData(req.ProviderData, &resp.Diagnostics)
}

func (d *modelsDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	if !d.data.readyToRead("data.svc_models", &resp.Diagnostics) {
		return
	}
	var m modelsDataSourceModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	limit := 100
	if !m.PageSize.IsNull() {
		limit = int(m.PageSize.ValueInt64())
	}
	readCtx, cancel := d.data.readContext(ctx)
	defer cancel()
	models, err := d.data.client.ListModels(readCtx, limit)
	if err != nil {
		resp.Diagnostics.AddError(errorSummary(err, familyRouter, "Listing models failed"), d.data.describeReadError(readCtx, err, familyRouter))
		return
	}
	filter := strings.TrimSpace(m.Provider.ValueString())
	elems := make([]attr.Value, 0, len(models))
	for _, entry := range models {
		if filter != "" && entry.Provider != filter {
			continue
		}
		obj, diags := modelEntryObject(entry)
		resp.Diagnostics.Append(diags...)
		elems = append(elems, obj)
	}
	list, diags := types.ListValue(types.ObjectType{AttrTypes: modelEntryAttrTypes}, elems)
	resp.Diagnostics.Append(diags...)
	m.Models = list
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}
