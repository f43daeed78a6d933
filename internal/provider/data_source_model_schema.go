package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework-jsontypes/jsontypes"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

var _ datasource.DataSourceWithConfigure = (*modelSchemaDataSource)(nil)

// NewModelSchemaDataSource returns the svc_model_schema data source.
func NewModelSchemaDataSource() datasource.DataSource { return &modelSchemaDataSource{} }

type modelSchemaDataSource struct {
	data *providerData
}

type modelSchemaDataSourceModel struct {
	Model               types.String         `tfsdk:"model"`
	Document            jsontypes.Normalized `tfsdk:"document"`
	InputSchema         jsontypes.Normalized `tfsdk:"input_schema"`
	InputSchemaAuthored types.Bool           `tfsdk:"input_schema_authored"`
	OutputMediaTypes    types.List           `tfsdk:"output_media_types"`
	ETag                types.String         `tfsdk:"etag"`
}

func (d *modelSchemaDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_model_schema"
}

func (d *modelSchemaDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "Reads a model's OpenAPI document: its input schema and output media types. The provider keeps " +
			"documents in memory for the run and revalidates them with `If-None-Match`, so a document read for plan-time " +
			"input validation and again here is transferred once (the service answers `304`).",
		Attributes: map[string]schema.Attribute{
			"model": schema.StringAttribute{
				Required:            true,
				Validators:          []validator.String{modelIDValidator{}},
				MarkdownDescription: "Model id, `provider/model`.",
			},
			"document": schema.StringAttribute{
				Computed: true, CustomType: jsontypes.NormalizedType{},
				MarkdownDescription: "The standalone OpenAPI document, as JSON.",
			},
			"input_schema": schema.StringAttribute{
				Computed: true, CustomType: jsontypes.NormalizedType{},
				MarkdownDescription: "The model operation's `requestBody` schema (`application/json`), as JSON; null when the " +
					"document has none. It may `$ref` into the document's `components`.",
			},
			"input_schema_authored": schema.BoolAttribute{
				Computed: true,
				MarkdownDescription: "The document's `x-svc-input-schema-authored` flag. When false the router accepts any JSON " +
					"object and does no model-specific validation (the provider's requirements still apply).",
			},
			"output_media_types": schema.ListAttribute{
				Computed: true, ElementType: types.StringType,
				MarkdownDescription: "Media types of the model's `200` response. `*/*` means the output is not described.",
			},
			"etag": schema.StringAttribute{Computed: true, MarkdownDescription: "The document's `ETag`."},
		},
	}
}

func (d *modelSchemaDataSource) Configure(_ context.Context, req datasource.ConfigureRequest, resp *datasource.ConfigureResponse) {
	d.data = configureData(req.ProviderData, &resp.Diagnostics)
}

func (d *modelSchemaDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	if !d.data.readyToRead("data.svc_model_schema", &resp.Diagnostics) {
		return
	}
	var m modelSchemaDataSourceModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	readCtx, cancel := d.data.readContext(ctx)
	defer cancel()
	ms, err := d.data.client.GetModelSchema(readCtx, m.Model.ValueString())
	if err != nil {
		resp.Diagnostics.AddError(errorSummary(err, familyRouter, "Reading model schema failed"), d.data.describeReadError(readCtx, err, familyRouter))
		return
	}
	m.Document = jsontypes.NewNormalizedValue(string(ms.Document))
	m.InputSchema = jsontypes.NewNormalizedNull()
	if len(ms.InputSchema) > 0 {
		m.InputSchema = jsontypes.NewNormalizedValue(string(ms.InputSchema))
	}
	m.InputSchemaAuthored = types.BoolValue(ms.InputSchemaAuthored)
	list, diags := types.ListValueFrom(ctx, types.StringType, ms.OutputMediaTypes)
	resp.Diagnostics.Append(diags...)
	m.OutputMediaTypes = list
	m.ETag = types.StringValue(ms.ETag)
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}
