package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

var _ datasource.DataSourceWithConfigure = (*objectInfoDataSource)(nil)

// NewObjectInfoDataSource returns the svc_object_info data source.
func NewObjectInfoDataSource() datasource.DataSource { return &objectInfoDataSource{} }

type objectInfoDataSource struct {
	data *providerData
}

type objectInfoModel struct {
	Classes types.Map    `tfsdk:"classes"`
	JSON    types.String `tfsdk:"json"`
}

type nodeClassModel struct {
	RequiredInputs []string `tfsdk:"required_inputs"`
	OptionalInputs []string `tfsdk:"optional_inputs"`
	Outputs        []string `tfsdk:"outputs"`
	OutputNode     bool     `tfsdk:"output_node"`
	Category       string   `tfsdk:"category"`
}

var nodeClassAttrTypes = map[string]attr.Type{
	"required_inputs": types.ListType{ElemType: types.StringType},
	"optional_inputs": types.ListType{ElemType: types.StringType},
	"outputs":         types.ListType{ElemType: types.StringType},
	"output_node":     types.BoolType,
	"category":        types.StringType,
}

func (d *objectInfoDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_object_info"
}

func (d *objectInfoDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	list := func(desc string) schema.ListAttribute {
		return schema.ListAttribute{Computed: true, ElementType: types.StringType, MarkdownDescription: desc}
	}
	resp.Schema = schema.Schema{
		MarkdownDescription: "The node classes the workflow service can run, from the v1 `GET /api/object_info`. " +
			"Use it to check a workflow's classes and inputs, or to read the choices an input offers from `json`.",
		Attributes: map[string]schema.Attribute{
			"classes": schema.MapNestedAttribute{
				Computed:            true,
				MarkdownDescription: "Node classes by class name.",
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"required_inputs": list("Names of the required inputs, sorted."),
					"optional_inputs": list("Names of the optional inputs, sorted."),
					"outputs":         list("Output types, in slot order (`IMAGE`, `MASK`, ...)."),
					"output_node": schema.BoolAttribute{Computed: true,
						MarkdownDescription: "Whether the class is an output node (execution starts from output nodes)."},
					"category": schema.StringAttribute{Computed: true, MarkdownDescription: "Category in the node menu."},
				}},
			},
			"json": schema.StringAttribute{Computed: true,
				MarkdownDescription: "The whole object_info document as the service returned it: input types, defaults, bounds and choice lists (`jsondecode` it)."},
		},
	}
}

func (d *objectInfoDataSource) Configure(_ context.Context, req datasource.ConfigureRequest, resp *datasource.ConfigureResponse) {
	d.data = configureData(req.ProviderData, &resp.Diagnostics)
}

func (d *objectInfoDataSource) Read(ctx context.Context, _ datasource.ReadRequest, resp *datasource.ReadResponse) {
	if !d.data.readyToRead("data.svc_object_info", &resp.Diagnostics) {
		return
	}
	readCtx, cancel := d.data.readContext(ctx)
	defer cancel()
	info, err := d.data.client.GetObjectInfo(readCtx)
	if err != nil {
		resp.Diagnostics.AddError(errorSummary(err, familyService, "Reading object info failed"), d.data.describeReadError(readCtx, err, familyService))
		return
	}
	classes := make(map[string]nodeClassModel, len(info.Classes))
	for name, c := range info.Classes {
		classes[name] = nodeClassModel{RequiredInputs: c.RequiredInputs, OptionalInputs: c.OptionalInputs,
			Outputs: c.Outputs, OutputNode: c.OutputNode, Category: c.Category}
	}
	value, diags := types.MapValueFrom(ctx, types.ObjectType{AttrTypes: nodeClassAttrTypes}, classes)
	resp.Diagnostics.Append(diags...)
	m := objectInfoModel{Classes: value, JSON: types.StringValue(string(info.Raw))}
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}
