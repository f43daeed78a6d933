package provider

import (
	"context"
	"fmt"
	"maps"

	"github.com/google/uuid"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/svc-org/terraform-provider-svc/internal/client"
)

var _ datasource.DataSourceWithConfigure = (*jobDataSource)(nil)

// NewJobDataSource returns the svc_job data source.
func NewJobDataSource() datasource.DataSource { return &jobDataSource{} }

type jobDataSource struct {
	data *providerData
}

func (d *jobDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_job"
}

func (d *jobDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	attrs := map[string]schema.Attribute{
		jobAttrID: schema.StringAttribute{Required: true, MarkdownDescription: "Job id (a UUID)."},
	}
	maps.Copy(attrs, jobRecordDataSourceAttributes())
	resp.Schema = schema.Schema{
		// The rest of svc_job's description is prose for its page: templates/data-sources/job.md.tmpl.
		MarkdownDescription: "Reads a v2 job by id: for pipelines that consume the outputs of a job submitted elsewhere, " +
			"and for the live view of a job that the `svc_job` resource does not keep in state: its place in the queue, " +
			"progress and links while it runs, its created and started times and its metrics (until its `expires_at`).",
		Attributes: attrs,
	}
}

func (d *jobDataSource) Configure(_ context.Context, req datasource.ConfigureRequest, resp *datasource.ConfigureResponse) {
	d.data = configureData(req.ProviderData, &resp.Diagnostics)
}

func (d *jobDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	if !d.data.readyToRead("data.svc_job", &resp.Diagnostics) {
		return
	}
	var id types.String
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root(jobAttrID), &id)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if err := uuid.Validate(id.ValueString()); err != nil {
		resp.Diagnostics.AddAttributeError(path.Root(jobAttrID), "Invalid job id", "A job id is a UUID; got "+id.String()+".")
		return
	}
	readCtx, cancel := d.data.readContext(ctx)
	defer cancel()
	job, err := d.data.client.GetJob(readCtx, id.ValueString())
	if client.Gone(err) && !client.RouteNotFound(err) {
		resp.Diagnostics.AddAttributeError(path.Root(jobAttrID), "Job not found", d.data.redact(fmt.Sprintf(
			"Job %s does not exist on the service: the id is wrong, or the job aged out after its expires_at (jobs are "+
				"kept only until then). A configuration that must outlive the job should read what it needs from the "+
				"svc_job resource, whose state keeps the record.\n\n%v", id.ValueString(), err)))
		return
	}
	if err != nil {
		resp.Diagnostics.AddError(errorSummary(err, familyService, "Reading job failed"), d.data.describeReadError(readCtx, err, familyService))
		return
	}
	// The state is the configured id and the record, built as svc_job's resource builds it.
	resp.Diagnostics.Append(recordWarnings(job)...)
	state, err := jobDataSourceValue(req.Config.Raw.Type(), id.ValueString(), job)
	if err != nil {
		resp.Diagnostics.AddError("Converting the job record failed", fmt.Sprintf("Job %s: %v. This is a bug in the provider.", job.ID, err))
		return
	}
	resp.State.Raw = state
}
