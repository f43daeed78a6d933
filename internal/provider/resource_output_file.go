package provider

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/objectplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/svc-org/terraform-provider-svc/internal/atomicfile"
	"github.com/svc-org/terraform-provider-svc/internal/bucket"
	"github.com/svc-org/terraform-provider-svc/internal/client"
)

var _ resource.ResourceWithConfigure = (*outputFileResource)(nil)

// NewOutputFileResource returns the svc_output_file resource.
func NewOutputFileResource() resource.Resource { return &outputFileResource{} }

type outputFileResource struct {
	data *providerData
}

type outputFileModel struct {
	ID           types.String   `tfsdk:"id"`
	URL          types.String   `tfsdk:"url"`
	AssetID      types.String   `tfsdk:"asset_id"`
	View         *viewModel     `tfsdk:"view"`
	Path         types.String   `tfsdk:"path"`
	ExpectedHash types.String   `tfsdk:"expected_hash"`
	SizeBytes    types.Int64    `tfsdk:"size_bytes"`
	Blake3       types.String   `tfsdk:"blake3"`
	SHA256       types.String   `tfsdk:"sha256"`
	ContentType  types.String   `tfsdk:"content_type"`
	MaxSizeBytes types.Int64    `tfsdk:"max_size_bytes"`
	StallTimeout types.String   `tfsdk:"stall_timeout"`
	Timeouts     timeouts.Value `tfsdk:"timeouts"`
}

const (
	// defaultMaxDownloadBytes bounds a download whose size nothing declares: far above any
	// output a workflow produces, yet short of filling a disk with an endless body.
	defaultMaxDownloadBytes = 16 << 30
	// defaultStallTimeout is how long a download may go without a byte: storage that sends
	// nothing for a minute has stopped.
	defaultStallTimeout        = time.Minute
	defaultOutputCreateTimeout = 30 * time.Minute
)

// viewModel names a v1 output file, fetched through /api/view.
type viewModel struct {
	Filename  types.String `tfsdk:"filename"`
	Subfolder types.String `tfsdk:"subfolder"`
	Type      types.String `tfsdk:"type"`
}

var blake3HashPattern = regexp.MustCompile(`^blake3:[0-9a-f]{64}$`)

// outputFileSourceAttributes are where the file comes from: exactly one of url, asset_id and view.
func outputFileSourceAttributes() map[string]schema.Attribute {
	sources := []path.Expression{path.MatchRoot("url"), path.MatchRoot("asset_id"), path.MatchRoot("view")}
	return map[string]schema.Attribute{
		"url": schema.StringAttribute{
			Optional: true,
			MarkdownDescription: "Download URL, such as a URL of the `svc_job` data source's `outputs[i].url`. It is " +
				"kept in state as configured: a signed URL is a credential, and it expires (on some services within " +
				"seconds), so prefer `asset_id`, which stores none. A new signed URL for the same content is not a " +
				"change: nothing is downloaded again.",
			Validators: []validator.String{stringvalidator.ExactlyOneOf(sources...)},
		},
		"asset_id": schema.StringAttribute{
			Optional: true,
			MarkdownDescription: "Asset id (`outputs[i].id`). The asset record (`GET /api/v2/assets/{id}`) is read at " +
				"download time for a freshly signed URL, used at once and never stored, so this works long after the " +
				"job's URLs expired. When the record gives the content's hash, the download is checked against it too.",
			PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
		},
		"view": schema.SingleNestedAttribute{
			Optional: true,
			MarkdownDescription: "A v1 output file (from `svc_prompt.outputs`), fetched with `GET /api/view`. The " +
				"service redirects to signed storage, which is followed without sending any credential.",
			Attributes: map[string]schema.Attribute{
				"filename":  schema.StringAttribute{Required: true, MarkdownDescription: "File name."},
				"subfolder": schema.StringAttribute{Optional: true, MarkdownDescription: "Subfolder (ignored by cloud storage)."},
				"type": schema.StringAttribute{Optional: true, MarkdownDescription: "`output` (default) or `temp`.",
					Validators: []validator.String{stringvalidator.OneOf("output", "temp")}},
			},
			PlanModifiers: []planmodifier.Object{objectplanmodifier.RequiresReplace()},
		},
	}
}

// outputFileCheckAttributes are what a download is held to: the content's hash, its size and
// how long it may stall.
func outputFileCheckAttributes() map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"expected_hash": schema.StringAttribute{
			Optional: true,
			MarkdownDescription: "`blake3:<hex>` the content must have, usually `outputs[i].hash` (which can be " +
				"null until the service computed it). A mismatch fails the apply and leaves no file.",
			Validators:    []validator.String{stringvalidator.RegexMatches(blake3HashPattern, "must be blake3:<64 hex digits>")},
			PlanModifiers: []planmodifier.String{replaceWhenFileMissesExpectedHash()},
		},
		"max_size_bytes": schema.Int64Attribute{
			Optional: true,
			MarkdownDescription: fmt.Sprintf("Largest download accepted, in bytes (default %d, 16 GiB). A body over it "+
				"is refused as soon as its `Content-Length` says so, or when the byte after the limit arrives.", int64(defaultMaxDownloadBytes)),
			Validators: []validator.Int64{int64validator.AtLeast(1)},
		},
		"stall_timeout": schema.StringAttribute{
			Optional: true,
			MarkdownDescription: "How long an attempt of the download may go without receiving a byte before it is " +
				"abandoned and the download tried again from where it stopped, as a duration (`\"30s\"`, `\"5m\"`; " +
				"default `\"1m\"`). `timeouts.create` bounds the whole download.",
			Validators: []validator.String{durationValidator{}},
		},
	}
}

// outputFileFactAttributes are the file's own facts. They change only when the file is
// downloaded again (a replacement): an in-place update keeps them, so a plan need not show them
// unknown.
func outputFileFactAttributes() map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"size_bytes": schema.Int64Attribute{Computed: true, MarkdownDescription: "Size of the file in bytes.",
			PlanModifiers: []planmodifier.Int64{int64planmodifier.UseStateForUnknown()}},
		"blake3": schema.StringAttribute{Computed: true, MarkdownDescription: "`blake3:<hex>` of the file.",
			PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()}},
		"sha256": schema.StringAttribute{Computed: true, MarkdownDescription: "Hex SHA-256 of the file.",
			PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()}},
		"content_type": schema.StringAttribute{Computed: true, MarkdownDescription: "Media type the server sent.",
			PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()}},
	}
}

func (r *outputFileResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_output_file"
}

// outputFileDoc is svc_output_file's description; the rest is prose for its page:
// templates/resources/output_file.md.tmpl.
const outputFileDoc = "Downloads one job output to a local file, verifying its hash while streaming. The file is " +
	"written to a temporary name and renamed into place (mode `0644`), so `path` never holds a partial download. A file " +
	"that goes missing or changes on disk is drift: the next apply downloads it again. Destroy deletes the file."

func (r *outputFileResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	attributes := map[string]schema.Attribute{
		"id": schema.StringAttribute{
			Computed: true, MarkdownDescription: "The absolute path of the file, or for a bucket the object's URL " +
				"`s3://bucket/key` (without the query), known at plan time.",
			PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown(), outputFileIDFromConfig},
		},
		"path": schema.StringAttribute{
			Required:            true,
			MarkdownDescription: outputFilePathDoc,
			PlanModifiers:       []planmodifier.String{stringplanmodifier.RequiresReplace()},
		},
		"timeouts": timeouts.Attributes(ctx, timeouts.Opts{Create: true, CreateDescription: "Longest time the " +
			"download may take (default `30m`)."}),
	}
	maps.Copy(attributes, outputFileSourceAttributes())
	maps.Copy(attributes, outputFileCheckAttributes())
	maps.Copy(attributes, outputFileFactAttributes())
	resp.Schema = schema.Schema{
		MarkdownDescription: outputFileDoc,
		Attributes:          attributes,
	}
}

func (r *outputFileResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.data = configureData(req.ProviderData, &resp.Diagnostics)
}

func (r *outputFileResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan outputFileModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	createTimeout, diags := plan.Timeouts.Create(ctx, defaultOutputCreateTimeout)
	if resp.Diagnostics.Append(diags...); resp.Diagnostics.HasError() {
		return
	}
	ctx, cancel := context.WithTimeout(r.data.logContext(ctx), createTimeout)
	defer cancel()
	if err := r.download(ctx, &plan); err != nil {
		resp.Diagnostics.AddError("Download failed", r.data.redact(describeDownloadError(ctx, err, createTimeout)))
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

// download streams the source into a temporary file beside path, hashing as it goes, checks
// the expected hash, and renames the file into place.
func (r *outputFileResource) download(ctx context.Context, m *outputFileModel) error {
	if isBucketURL(m.Path.ValueString()) {
		return r.downloadToBucket(ctx, m)
	}
	dest, err := filepath.Abs(m.Path.ValueString())
	if err != nil {
		return err
	}
	b3, s256 := bucket.NewBlake3(), sha256.New()
	var got *client.Download
	var sum string
	err = atomicfile.Write(dest, func(w io.Writer) error {
		var recordHash string
		var err error
		if got, recordHash, err = r.fetch(ctx, m, io.MultiWriter(w, b3, s256)); err != nil {
			return err
		}
		sum = "blake3:" + hex.EncodeToString(b3.Sum(nil))
		return checkDownloadHash(dest, sum, m.ExpectedHash.ValueString(), recordHash, got.RequestID)
	})
	if err != nil {
		return err
	}
	m.ID = types.StringValue(dest)
	m.SizeBytes = types.Int64Value(got.Size)
	m.Blake3 = types.StringValue(sum)
	m.SHA256 = types.StringValue(hex.EncodeToString(s256.Sum(nil)))
	m.ContentType = types.StringValue(got.ContentType)
	return nil
}

// checkDownloadHash refuses content whose hash sum is not the expected one, nor the one the
// service's asset record gave at download time (when it gave one: a service may compute hashes
// lazily, or never).
func checkDownloadHash(dest, sum, expected, recordHash, requestID string) error {
	switch {
	case expected != "" && expected != sum:
		return fmt.Errorf("content of %s hashes to %s, expected %s; the partial file was removed (request id %q)", dest, sum, expected, requestID)
	case recordHash != "" && recordHash != sum:
		return fmt.Errorf("content of %s hashes to %s, but the service's asset record says %s; the partial file was removed (request id %q)", dest, sum, recordHash, requestID)
	}
	return nil
}

// limits are the bounds of m's download; the asset record's size, when known, is added by fetch.
func (m *outputFileModel) limits() client.DownloadLimits {
	lim := client.DownloadLimits{MaxBytes: defaultMaxDownloadBytes, StallTimeout: defaultStallTimeout}
	if !m.MaxSizeBytes.IsNull() && !m.MaxSizeBytes.IsUnknown() {
		lim.MaxBytes = m.MaxSizeBytes.ValueInt64()
	}
	if d, err := time.ParseDuration(m.StallTimeout.ValueString()); err == nil && d > 0 {
		lim.StallTimeout = d
	}
	return lim
}

// describeDownloadError adds to err the setting that bounds what failed.
func describeDownloadError(ctx context.Context, err error, createTimeout time.Duration) string {
	switch {
	case errors.Is(err, client.ErrDownloadStalled):
		return err.Error() + "\n\nThe server stopped sending. Raise stall_timeout if it is only slow."
	case errors.Is(err, client.ErrDownloadTooLarge):
		return err.Error() + "\n\nNothing was written. Raise max_size_bytes if the file is really this large."
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return fmt.Sprintf("%v\n\nThe download did not finish within timeouts.create (%s); nothing was written.", err, createTimeout)
	}
	return err.Error()
}

// fetch streams the configured source into w. With asset_id it reads the asset record first,
// for a freshly signed URL used at once (and never stored; each further attempt reads the record
// again), the declared size and, when the service computed it, the hash: recordHash.
func (r *outputFileResource) fetch(ctx context.Context, m *outputFileModel, w io.Writer) (got *client.Download, recordHash string, err error) {
	switch {
	case m.View != nil:
		typ := m.View.Type.ValueString()
		if typ == "" {
			typ = "output"
		}
		got, err = r.data.client.DownloadView(ctx, client.ViewFile{
			Filename: m.View.Filename.ValueString(), Subfolder: m.View.Subfolder.ValueString(), Type: typ,
		}, w, m.limits())
		return got, "", err
	case m.AssetID.ValueString() != "":
		asset, err := r.data.client.GetAssetRidingOut(ctx, m.AssetID.ValueString())
		if err != nil {
			return nil, "", err
		}
		lim := m.limits()
		lim.DeclaredSize = &asset.SizeBytes
		if asset.Hash != nil {
			recordHash = *asset.Hash
		}
		got, last, err := r.data.client.DownloadAsset(ctx, asset, w, lim)
		if recordHash == "" && last != nil && last.Hash != nil {
			recordHash = *last.Hash // computed lazily while the download was tried again
		}
		return got, recordHash, err
	default:
		got, err = r.data.client.DownloadTo(ctx, m.URL.ValueString(), w, m.limits())
		return got, "", err
	}
}

func (r *outputFileResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var state outputFileModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if isBucketURL(state.Path.ValueString()) {
		r.readBucket(ctx, &state, resp)
		return
	}
	sum, err := fileBlake3(state.ID.ValueString())
	switch {
	case errors.Is(err, fs.ErrNotExist):
		resp.State.RemoveResource(ctx) // gone from disk: download again
	case err != nil:
		resp.Diagnostics.AddError("Reading downloaded file failed", err.Error())
	case sum != state.Blake3.ValueString():
		resp.State.RemoveResource(ctx) // changed on disk: download again
	}
}

func (r *outputFileResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	// Only url can change in place: a re-signed URL for the same asset. The file stays.
	var plan, state outputFileModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	plan.ID, plan.SizeBytes, plan.Blake3, plan.SHA256, plan.ContentType = state.ID, state.SizeBytes, state.Blake3, state.SHA256, state.ContentType
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

func (r *outputFileResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state outputFileModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if isBucketURL(state.Path.ValueString()) {
		r.deleteFromBucket(ctx, &state, &resp.Diagnostics)
		return
	}
	if err := atomicfile.Remove(state.ID.ValueString()); err != nil {
		resp.Diagnostics.AddError("Deleting downloaded file failed", err.Error())
	}
}

func fileBlake3(name string) (string, error) {
	f, err := os.Open(name)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := bucket.NewBlake3()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return "blake3:" + hex.EncodeToString(h.Sum(nil)), nil
}
