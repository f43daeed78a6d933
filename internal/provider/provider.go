// Package provider implements the svc Terraform provider on terraform-plugin-framework. It knows
// nothing of HTTP: every call to the service goes through internal/client.
package provider

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework/action"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/ephemeral"
	"github.com/hashicorp/terraform-plugin-framework/function"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/provider/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/svc-org/terraform-provider-svc/internal/client"
)

var (
	_ provider.Provider                       = (*svcProvider)(nil)
	_ provider.ProviderWithFunctions          = (*svcProvider)(nil)
	_ provider.ProviderWithEphemeralResources = (*svcProvider)(nil)
	_ provider.ProviderWithActions            = (*svcProvider)(nil)
)

func newSvcProvider(version string, now func() time.Time) *svcProvider {
	return &svcProvider{version: version, now: now}
}

type svcProvider struct {
	version string
	now     func() time.Time
	// configured is the data the last successful Configure gave resources and data sources,
	// for the plugin's own server layers (serverStack), which answer some calls without the
	// framework and must judge them by the same settings. A provider instance serves one
	// plugin server: Terraform configures it once, before any call that needs it.
	configured atomic.Pointer[providerData]
}

type providerModel struct {
	Endpoint         types.String `tfsdk:"endpoint"`
	RouterEndpoint   types.String `tfsdk:"router_endpoint"`
	RegistryEndpoint types.String `tfsdk:"registry_endpoint"`
	APIKey           types.String `tfsdk:"api_key"`
	RegistryToken    types.String `tfsdk:"registry_token"`
	PartnerAPIKey    types.String `tfsdk:"partner_api_key"`
	MaxRetries       types.Int64  `tfsdk:"max_retries"`
	ReadTimeout      types.String `tfsdk:"read_timeout"`
	Journal          types.String `tfsdk:"journal"`
}

func (p *svcProvider) Metadata(_ context.Context, _ provider.MetadataRequest, resp *provider.MetadataResponse) {
	resp.TypeName = "svc"
	resp.Version = p.version
}

func (p *svcProvider) Schema(_ context.Context, _ provider.SchemaRequest, resp *provider.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "Runs workflows as durable jobs, calls partner models through the model router, " +
			"and manages node registry entries on the workflow execution service.",
		Attributes: map[string]schema.Attribute{
			"endpoint": schema.StringAttribute{
				Optional: true,
				MarkdownDescription: "Base URL of the workflow service (v2 jobs, assets, v1 cloud). It may carry a mount " +
					"prefix such as `/deployment/{id}`. Environment: `SVC_ENDPOINT`. Default: `" + client.DefaultEndpoint + "`.",
			},
			"router_endpoint": schema.StringAttribute{
				Optional:            true,
				MarkdownDescription: "Base URL of the model router. Environment: `SVC_ROUTER_ENDPOINT`. Default: `endpoint`.",
			},
			"registry_endpoint": schema.StringAttribute{
				Optional:            true,
				MarkdownDescription: "Base URL of the node registry. Environment: `SVC_REGISTRY_ENDPOINT`. Default: `endpoint`.",
			},
			"api_key": schema.StringAttribute{
				Optional:  true,
				Sensitive: true,
				MarkdownDescription: "API key. Sent as `Authorization: Bearer` to the v2 jobs interface and as `X-API-Key` " +
					"to the router and v1. Environment: `SVC_API_KEY`. Never stored in state or logged.",
			},
			"registry_token": schema.StringAttribute{
				Optional:  true,
				Sensitive: true,
				MarkdownDescription: "Token for node registry operations (`Authorization: Bearer`): a JWT, or an API key " +
					"with the product prefix. Environment: `SVC_REGISTRY_TOKEN`. Default: `api_key`.",
			},
			"partner_api_key": schema.StringAttribute{
				Optional:  true,
				Sensitive: true,
				MarkdownDescription: "Default API key for partner nodes, sent as `extra_data.api_key_svc_org` with job " +
					"submissions when a resource sets no partner credential (`svc_prompt` then sends `api_key`). Environment: `SVC_PARTNER_API_KEY`.",
			},
			"max_retries": schema.Int64Attribute{
				Optional:   true,
				Validators: []validator.Int64{int64validator.Between(0, 20)},
				MarkdownDescription: "Retries of a transient failure per request: each request of an operation is sent " +
					"at most `1 + max_retries` times (default 6), and resent only where that is safe for the operation (a read, " +
					"a cancel, a submission that never left or that the service declined before running it). Waits and answers " +
					"that ask for the same request later: see [Retries](#retries). Default: 5.",
			},
			"read_timeout": schema.StringAttribute{
				Optional:   true,
				Validators: []validator.String{durationValidator{}},
				MarkdownDescription: "Longest a refresh or a data source read may take as a whole, every attempt, retry " +
					"and wait between them included (a Go duration such as `90s` or `5m`), so that a service that accepts " +
					"connections and never answers cannot hold `terraform plan`. Waits for a job or request to finish " +
					"follow the resource's `timeouts` instead. Default: `2m`.",
			},
			"journal": schema.StringAttribute{
				Optional: true,
				MarkdownDescription: "Where the journal of submissions is kept: a directory, or a bucket URL as `output_dir` takes " +
					"(`s3://bucket/prefix?...`). Each job or model request's idempotency key and a digest of what it runs are made " +
					"durable before it is sent, its id added once answered, so the apply after Terraform died before saving state " +
					"adopts it instead of running it twice. Environment: `SVC_JOURNAL`. Default: `.terraform/svc-journal`; `\"\"` turns it off. " +
					"See \"When the runner dies\" below.",
			},
		},
	}
}

// submitGrace is how long a submission already on the wire may take to be answered once the
// apply is stopped (Ctrl-C, SIGTERM) or times out, so that the id of a job the service created
// reaches state. Runners kill Terraform 7.5 to 10 s after their first signal, and the whole stop
// must end within 5 s on a loaded machine: 2 s leaves room for the state to be written.
const submitGrace = 2 * time.Second

// providerData is what resources, data sources and functions receive from Configure.
type providerData struct {
	client        *client.Client
	partnerAPIKey string
	// apiKey is the provider's api_key: svc_prompt sends it again as the partner node key when
	// no partner key is set, since on the v1 interface one account key serves both.
	apiKey string
	// secrets are masked in every log line and error this provider writes.
	secrets []string
	// configUnknown is set when some provider setting was unknown at plan time (it comes from a
	// resource not created yet); plan-time checks that need the service are then skipped.
	configUnknown bool
	// readTimeout bounds each refresh and data-source read as a whole (read_timeout).
	readTimeout time.Duration
	// objectInfoCache holds the service's object_info once read (a failed read is not kept).
	objectInfoCache *objectInfoCache
	// settingSources says where each endpoint setting came from, for errors asking to check it.
	settingSources map[string]settingSource
	// durations learns how long the jobs of this provider instance run, by workflow shape, so
	// that later jobs of a batch are read near their likely end.
	durations *client.DurationEstimator
	// now is the clock expiry times held in state are compared with.
	now func() time.Time
	// journal keeps what is submitted until its id reaches state; nil when off.
	journal *submissionJournal
	// journalGiven is whether the journal setting (or SVC_JOURNAL) chose the journal, which a
	// batch writing into a bucket then uses instead of one in that bucket (journalForBatch).
	journalGiven bool
	// bucketJournals are the journals in output buckets, one per place (resource_job_batch_journal.go; the
	// batch opens them through journalForBatch).
	bucketJournals *journalsByPlace
}

func (p *svcProvider) Configure(ctx context.Context, req provider.ConfigureRequest, resp *provider.ConfigureResponse) {
	// A configuration that fails leaves resources no data, here as in the framework.
	p.configured.Store(nil)
	var cfg providerModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &cfg)...)
	if resp.Diagnostics.HasError() {
		return
	}

	unknown := false
	sources := map[string]settingSource{}
	setting := func(v types.String, env string) string {
		if v.IsUnknown() {
			unknown = true
			return ""
		}
		if !v.IsNull() {
			return v.ValueString()
		}
		sources[env] = sourceEnv
		if os.Getenv(env) == "" {
			sources[env] = sourceDefault
		}
		return os.Getenv(env)
	}
	ccfg := client.Config{
		Endpoint:         setting(cfg.Endpoint, "SVC_ENDPOINT"),
		RouterEndpoint:   setting(cfg.RouterEndpoint, "SVC_ROUTER_ENDPOINT"),
		RegistryEndpoint: setting(cfg.RegistryEndpoint, "SVC_REGISTRY_ENDPOINT"),
		APIKey:           setting(cfg.APIKey, "SVC_API_KEY"),
		RegistryToken:    setting(cfg.RegistryToken, "SVC_REGISTRY_TOKEN"),
		UserAgent:        "terraform-provider-svc/" + p.version + " (+" + req.TerraformVersion + ")",
		AnswerGrace:      submitGrace,
	}
	partnerKey := setting(cfg.PartnerAPIKey, "SVC_PARTNER_API_KEY")
	if !cfg.MaxRetries.IsNull() && !cfg.MaxRetries.IsUnknown() {
		ccfg.MaxRetries, ccfg.MaxRetriesSet = int(cfg.MaxRetries.ValueInt64()), true
	}

	readTimeout := defaultReadTimeout
	if !cfg.ReadTimeout.IsNull() && !cfg.ReadTimeout.IsUnknown() {
		d, err := time.ParseDuration(cfg.ReadTimeout.ValueString())
		if err != nil || d <= 0 {
			resp.Diagnostics.AddAttributeError(path.Root("read_timeout"), "Invalid read_timeout",
				fmt.Sprintf("read_timeout must be a positive duration such as \"90s\" or \"5m\"; got %q.", cfg.ReadTimeout.ValueString()))
			return
		}
		readTimeout = d
	}

	journalAt, ok := configureJournal(cfg.Journal, &resp.Diagnostics)
	if !ok {
		return
	}

	secrets := nonEmpty(ccfg.APIKey, ccfg.RegistryToken, partnerKey)
	ccfg.Logger = tflogLogger{secrets: secrets}
	bySetting := endpointSources(sources)
	c, err := client.New(ccfg)
	if err != nil {
		resp.Diagnostics.AddError("Invalid provider configuration", redact(describeEndpointError(err, bySetting), secrets))
		return
	}
	logDebug(withLogSecrets(ctx, secrets), "configured svc provider", map[string]any{
		"endpoint": c.Endpoint(), "config_unknown": unknown,
	})
	data := &providerData{client: c, partnerAPIKey: partnerKey, apiKey: ccfg.APIKey, secrets: secrets, configUnknown: unknown,
		readTimeout: readTimeout, objectInfoCache: &objectInfoCache{},
		settingSources: bySetting, durations: client.NewDurationEstimator(), now: p.now,
		journal: newSubmissionJournal(journalAt, p.now), journalGiven: journalGiven(cfg.Journal) || cfg.Journal.IsUnknown(),
		bucketJournals: &journalsByPlace{}}
	resp.ResourceData = data
	resp.DataSourceData = data
	resp.EphemeralResourceData = data
	resp.ActionData = data
	p.configured.Store(data)
}

func (p *svcProvider) Resources(context.Context) []func() resource.Resource {
	return []func() resource.Resource{
		NewJobResource,
		NewJobBatchResource,
		NewOutputFileResource,
		NewRouterRequestResource,
		NewNodeClaimResource,
		NewNodeTranslationResource,
		NewUploadResource,
		NewPromptResource,
	}
}

// Actions run on request (`terraform apply -invoke`, or a resource's action_trigger); Terraform
// before 1.14 and OpenTofu do not call them, and a configuration without actions works there as
// before.
func (p *svcProvider) Actions(context.Context) []func() action.Action {
	return []func() action.Action{
		NewJobCancelAction,
		NewWorkflowRunAction,
	}
}

func (p *svcProvider) DataSources(context.Context) []func() datasource.DataSource {
	return []func() datasource.DataSource{
		NewJobDataSource,
		NewModelsDataSource,
		NewModelDataSource,
		NewModelSchemaDataSource,
		NewObjectInfoDataSource,
		NewWorkflowFromUIDataSource,
	}
}

func (p *svcProvider) EphemeralResources(context.Context) []func() ephemeral.EphemeralResource {
	return []func() ephemeral.EphemeralResource{
		NewOutputURLEphemeralResource,
	}
}

func (p *svcProvider) Functions(context.Context) []func() function.Function {
	return []func() function.Function{
		NewWorkflowSetInputsFunction,
		NewWorkflowNodesFunction,
		NewAssetRefFunction,
		NewWorkflowFromUIFunction,
	}
}

func nonEmpty(values ...string) []string {
	var out []string
	for _, v := range values {
		if v != "" {
			out = append(out, v)
		}
	}
	return out
}
