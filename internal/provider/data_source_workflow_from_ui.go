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

// workflowFromUIRules describes the conversion, for the data source's and the function's docs.
const workflowFromUIRules = "Widget values are matched to the inputs of each node's class in the class's input order; " +
	"the values the editor stores but never sends (the control after a seed, the upload button of an image loader) " +
	"are dropped, and `widgets_values` may also be an object keyed by widget name. Notes are left out; a muted " +
	"node is left out and its consumers lose the input; a bypassed node is left out and its consumers are wired to " +
	"its matching input; reroutes are followed; primitive nodes are replaced by their value; subgraphs are " +
	"expanded, nested or not, with node ids `<subgraph node id>:<inner id>`. Anything that does not fit the class " +
	"definitions (an unknown class, a widget value count or type that does not match, a link to a missing node or " +
	"slot, a cycle) is refused with an error naming the node's id, class and title: nothing is guessed. The result " +
	"is canonical JSON (sorted keys, no spaces), so an export that is only reformatted converts to the same string " +
	"and changes nothing."

func (d *workflowFromUIDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_workflow_from_ui"
}

func (d *workflowFromUIDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "Converts a workflow saved by the graphical editor (the UI format, with `nodes`, `links` " +
			"and `widgets_values`) into the API format that `svc_job` and `svc_prompt` run, using the node classes of " +
			"the service (`GET /api/object_info`, read once per provider configuration). " + workflowFromUIRules +
			"\n\nTo convert offline, at plan time, use the function `provider::svc::workflow_from_ui`.",
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
