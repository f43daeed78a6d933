package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

var _ datasource.DataSourceWithConfigure = (*workflowFromUIDataSource)(nil)

// NewWorkflowFromUIDataSource returns the svc_workflow_from_ui data source.
func NewWorkflowFromUIDataSource() datasource.DataSource { return &workflowFromUIDataSource{} }

type workflowFromUIDataSource struct {
	data *providerData
}

type workflowFromUIModel struct {
	UIWorkflow  types.String `tfsdk:"ui_workflow"`
	APIWorkflow types.String `tfsdk:"api_workflow"`
}

func (d *workflowFromUIDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_workflow_from_ui"
}

func (d *workflowFromUIDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = schema.Schema{
		// How the conversion goes is prose for its page: templates/data-sources/workflow_from_ui.md.tmpl.
		MarkdownDescription: "Converts a workflow saved by the graphical editor (the UI format, with `nodes`, `links` " +
			"and `widgets_values`) into the API format that `svc_job` and `svc_prompt` run, using the node classes of " +
			"the service (`GET /api/object_info`, read once per provider configuration).\n\n" +
			"To convert offline, at plan time, use the function `provider::svc::workflow_from_ui`.",
		Attributes: map[string]schema.Attribute{
			"ui_workflow": schema.StringAttribute{
				Required:            true,
				MarkdownDescription: "The editor's export, as JSON (for example `file(\"workflow.json\")`).",
			},
			"api_workflow": schema.StringAttribute{
				Computed:            true,
				MarkdownDescription: "The API-format workflow, as canonical JSON: give it to `svc_job.workflow` or `svc_prompt.workflow`.",
			},
		},
	}
}

func (d *workflowFromUIDataSource) Configure(_ context.Context, req datasource.ConfigureRequest, resp *datasource.ConfigureResponse) {
	d.data = configureData(req.ProviderData, &resp.Diagnostics)
}

func (d *workflowFromUIDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	var m workflowFromUIModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() || !d.data.readyToRead("data.svc_workflow_from_ui", &resp.Diagnostics) {
		return
	}
	defs, err := d.data.classDefs(d.data.logContext(ctx))
	if err != nil {
		resp.Diagnostics.AddError(errorSummary(err, familyService, "Reading object info failed"),
			d.data.redact("The conversion needs the service's node classes (GET /api/object_info). "+
				"To convert without the service, use provider::svc::workflow_from_ui with a saved object_info document.\n\n"+err.Error()))
		return
	}
	api, err := defs.FromUI([]byte(m.UIWorkflow.ValueString()))
	if err != nil {
		resp.Diagnostics.AddAttributeError(path.Root("ui_workflow"), "The editor export cannot be converted", err.Error())
		return
	}
	m.APIWorkflow = types.StringValue(string(api))
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}
