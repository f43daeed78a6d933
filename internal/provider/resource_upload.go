package provider

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"mime"
	"os"
	"path/filepath"

	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/svc-org/terraform-provider-svc/internal/client"
)

var (
	_ resource.ResourceWithConfigure      = (*uploadResource)(nil)
	_ resource.ResourceWithModifyPlan     = (*uploadResource)(nil)
	_ resource.ResourceWithValidateConfig = (*uploadResource)(nil)
)

// maxUploadBytes bounds a file the provider reads into memory to upload.
const maxUploadBytes = 512 << 20

// NewUploadResource returns the svc_upload resource.
func NewUploadResource() resource.Resource { return &uploadResource{} }

type uploadResource struct {
	data *providerData
}

type uploadModel struct {
	ID           types.String `tfsdk:"id"`
	Source       types.String `tfsdk:"source"`
	Kind         types.String `tfsdk:"kind"`
	Type         types.String `tfsdk:"type"`
	Overwrite    types.Bool   `tfsdk:"overwrite"`
	OriginalRef  jsonSemantic `tfsdk:"original_ref"`
	Name         types.String `tfsdk:"name"`
	Subfolder    types.String `tfsdk:"subfolder"`
	SourceSHA256 types.String `tfsdk:"source_sha256"`
}

func (r *uploadResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_upload"
}

func (r *uploadResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	replace := []planmodifier.String{stringplanmodifier.RequiresReplace()}
	keep := []planmodifier.String{stringplanmodifier.UseStateForUnknown()}
	resp.Schema = schema.Schema{
		// The rest of svc_upload's description is prose for its page: templates/resources/upload.md.tmpl.
		MarkdownDescription: "Uploads a local file through the v1 interface (`POST /api/upload/image` or `/api/upload/mask`) so " +
			"a workflow can load it by `name` (for example `LoadImage`'s `image` input).",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{Computed: true, PlanModifiers: keep,
				MarkdownDescription: "The uploaded file's name on the service (same as `name`)."},
			"source": schema.StringAttribute{Required: true, PlanModifiers: replace,
				MarkdownDescription: "Path of the local file to upload. Its base name is the file name sent."},
			"kind": schema.StringAttribute{Optional: true, Computed: true, Default: stringdefault.StaticString("image"), PlanModifiers: replace,
				Validators:          []validator.String{stringvalidator.OneOf("image", "mask")},
				MarkdownDescription: "`image` (default) or `mask`. A mask needs `original_ref`."},
			"type": schema.StringAttribute{Optional: true, Computed: true, Default: stringdefault.StaticString("input"), PlanModifiers: replace,
				Validators:          []validator.String{stringvalidator.OneOf("input", "temp")},
				MarkdownDescription: "`input` (default) for workflow inputs, or `temp` for temporary files. Masks are always `input`."},
			"overwrite": schema.BoolAttribute{Optional: true, Computed: true, Default: booldefault.StaticBool(false),
				MarkdownDescription: "Replace a file of the same name on the service (default `false`: the service may store the upload under a new name, see `name`). " +
					"An upload without overwrite is sent once and not retried after it left, so a retry cannot store a second copy."},
			"original_ref": schema.StringAttribute{Optional: true, CustomType: jsonSemanticType{},
				PlanModifiers:       append([]planmodifier.String{jsonKeepEquivalentState()}, replace...),
				MarkdownDescription: "Masks only: the image the mask belongs to, as JSON `{filename, subfolder, type}` (use `jsonencode`). Sent as a JSON string."},
			"name": schema.StringAttribute{Computed: true, PlanModifiers: keep,
				MarkdownDescription: "The file name the service stored the upload under: use it as the workflow input."},
			"subfolder": schema.StringAttribute{Computed: true, PlanModifiers: keep,
				MarkdownDescription: "Subfolder the service reported (usually empty)."},
			"source_sha256": schema.StringAttribute{Computed: true,
				MarkdownDescription: "Hex SHA-256 of the uploaded file, computed at plan time. A change replaces the upload."},
		},
	}
}

// ValidateConfig ties original_ref to masks.
func (r *uploadResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var m uploadModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() || m.Kind.IsUnknown() || m.OriginalRef.IsUnknown() {
		return
	}
	isMask := m.Kind.ValueString() == "mask"
	switch {
	case isMask && m.OriginalRef.IsNull():
		resp.Diagnostics.AddAttributeError(path.Root("original_ref"), "Mask upload needs original_ref",
			`A mask is applied to an image: set original_ref = jsonencode({ filename = "<image name>", subfolder = "", type = "input" }).`)
	case !isMask && !m.OriginalRef.IsNull():
		resp.Diagnostics.AddAttributeError(path.Root("original_ref"), "original_ref is for masks",
			`original_ref is only sent with kind = "mask".`)
	case isMask:
		var ref struct {
			Filename string `json:"filename"`
		}
		if err := json.Unmarshal([]byte(m.OriginalRef.ValueString()), &ref); err != nil || ref.Filename == "" {
			resp.Diagnostics.AddAttributeError(path.Root("original_ref"), "Invalid original_ref",
				"original_ref must be a JSON object with at least filename (and subfolder, type).")
		}
	}
	if isMask && !m.Type.IsNull() && !m.Type.IsUnknown() && m.Type.ValueString() != "input" {
		resp.Diagnostics.AddAttributeError(path.Root("type"), "Masks are inputs", `A mask upload is always type = "input".`)
	}
}

// ModifyPlan hashes the source file, so that editing it plans a replacement, and refuses a file
// that cannot be read before anything is sent.
func (r *uploadResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() {
		return // destroy
	}
	var plan uploadModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() || plan.Source.IsUnknown() {
		return // known at apply; hashed then
	}
	sum, _, err := readUploadSource(plan.Source.ValueString())
	if err != nil {
		resp.Diagnostics.AddAttributeError(path.Root("source"), "Cannot read the file to upload", err.Error())
		return
	}
	plan.SourceSHA256 = types.StringValue(sum)
	if !req.State.Raw.IsNull() {
		var state uploadModel
		resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
		if state.SourceSHA256.ValueString() != sum {
			resp.RequiresReplace = append(resp.RequiresReplace, path.Root("source_sha256"))
			plan.ID, plan.Name, plan.Subfolder = types.StringUnknown(), types.StringUnknown(), types.StringUnknown()
		}
	}
	resp.Diagnostics.Append(resp.Plan.Set(ctx, &plan)...)
}

func readUploadSource(p string) (sum string, content []byte, err error) {
	fi, err := os.Stat(p)
	if err != nil {
		return "", nil, fmt.Errorf("source %q: %w", p, err)
	}
	if fi.IsDir() {
		return "", nil, fmt.Errorf("source %q is a directory, not a file", p)
	}
	if fi.Size() > maxUploadBytes {
		return "", nil, fmt.Errorf("source %q is %d bytes; the provider uploads files up to %d MiB", p, fi.Size(), maxUploadBytes>>20)
	}
	content, err = os.ReadFile(p)
	if err != nil {
		return "", nil, fmt.Errorf("source %q: %w", p, err)
	}
	h := sha256.Sum256(content)
	return hex.EncodeToString(h[:]), content, nil
}

func (r *uploadResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.data = configureData(req.ProviderData, &resp.Diagnostics)
}

func (r *uploadResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan uploadModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	ctx = r.data.logContext(ctx)
	sum, content, err := readUploadSource(plan.Source.ValueString())
	if err != nil {
		resp.Diagnostics.AddAttributeError(path.Root("source"), "Cannot read the file to upload", err.Error())
		return
	}
	if planned := plan.SourceSHA256; !planned.IsUnknown() && planned.ValueString() != sum {
		resp.Diagnostics.AddAttributeError(path.Root("source"), "The file changed after plan",
			fmt.Sprintf("%s had SHA-256 %s at plan time and %s now; nothing was uploaded. Run the plan again.", plan.Source.ValueString(), planned.ValueString(), sum))
		return
	}
	name := filepath.Base(plan.Source.ValueString())
	res, err := r.data.client.Upload(ctx, client.UploadInput{
		Mask:        plan.Kind.ValueString() == "mask",
		FileName:    name,
		Content:     content,
		ContentType: mime.TypeByExtension(filepath.Ext(name)),
		Type:        plan.Type.ValueString(),
		Overwrite:   plan.Overwrite.ValueBool(),
		OriginalRef: plan.OriginalRef.ValueString(),
	})
	if err != nil {
		resp.Diagnostics.AddError(errorSummary(err, familyService, "Upload failed"), r.data.orNotSent(err, r.data.describeAPIError(err, familyService)))
		return
	}
	logInfo(ctx, "uploaded", map[string]any{"name": res.Name, "kind": plan.Kind.ValueString(), "sha256": sum, "request_id": res.RequestID})
	plan.ID, plan.Name = types.StringValue(res.Name), types.StringValue(res.Name)
	plan.Subfolder, plan.SourceSHA256 = types.StringValue(res.Subfolder), types.StringValue(sum)
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

// Read keeps state: the v1 interface has no route to read an upload back. Changes of the local
// file are caught at plan time by source_sha256.
func (r *uploadResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var state uploadModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

// Update changes overwrite only, which matters for the next upload; nothing is sent.
func (r *uploadResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan uploadModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

// Delete forgets the upload: the v1 interface offers no route to delete it.
func (r *uploadResource) Delete(context.Context, resource.DeleteRequest, *resource.DeleteResponse) {}
