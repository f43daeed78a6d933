package provider

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"path/filepath"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/svc-org/terraform-provider-svc/internal/bucket"
	"github.com/svc-org/terraform-provider-svc/internal/client"
)

var _ resource.ResourceWithModifyPlan = &outputFileResource{}

// outputFileID is the id of the file at p: its absolute path, or for a bucket URL the object's
// s3://bucket/key.
func outputFileID(p string) (string, error) {
	if !isBucketURL(p) {
		return filepath.Abs(p)
	}
	loc, err := bucket.Parse(p)
	if err != nil {
		return "", err
	}
	if loc.Prefix == "" {
		return "", fmt.Errorf("%s names a bucket but no object key: s3://bucket/key", loc)
	}
	return loc.URL(loc.Prefix), nil
}

// ModifyPlan checks, when a new object is planned in a bucket, the URL, the bucket and the
// credentials (one request), so that a bad path fails the plan and nothing is downloaded.
func (r *outputFileResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() {
		return
	}
	var planned, held types.String
	resp.Diagnostics.Append(req.Plan.GetAttribute(ctx, path.Root("path"), &planned)...)
	if !req.State.Raw.IsNull() {
		resp.Diagnostics.Append(req.State.GetAttribute(ctx, path.Root("path"), &held)...)
	}
	p := planned.ValueString()
	if resp.Diagnostics.HasError() || planned.IsUnknown() || !isBucketURL(p) || p == held.ValueString() {
		return
	}
	if _, err := outputFileID(p); err != nil {
		resp.Diagnostics.AddAttributeError(path.Root("path"), "Invalid path", destProblem(err))
		return
	}
	outputDirAtPlan(ctx, "path", p, false, &resp.Diagnostics)
}

// openObject opens the bucket of path and says the object's path elements (none: the URL's
// prefix is the key).
func openObject(ctx context.Context, p string) (bucketDest, error) {
	if _, err := outputFileID(p); err != nil {
		return bucketDest{}, err
	}
	dest, err := openOutputDest(ctx, p)
	if err != nil {
		return bucketDest{}, err
	}
	return dest.(bucketDest), nil
}

// downloadToBucket streams the source into the object path names, hashing as it goes; the
// object appears only when the content has the expected hash (and the one the asset record
// gives).
func (r *outputFileResource) downloadToBucket(ctx context.Context, m *outputFileModel) error {
	b, err := openObject(ctx, m.Path.ValueString())
	if err != nil {
		return err
	}
	defer b.close()
	s256 := sha256.New()
	var got *client.Download
	var recordHash string
	up := bucket.Upload{AssetID: m.AssetID.ValueString(), Blake3: m.ExpectedHash.ValueString(), Check: func(_ int64, sum string) error {
		return checkDownloadHash(b.where(), sum, "", recordHash, got.RequestID)
	}}
	saved, err := b.save(ctx, up, func(w io.Writer) error {
		var err error
		got, recordHash, err = r.fetch(ctx, m, io.MultiWriter(w, s256))
		return err
	})
	if err != nil {
		return err
	}
	m.ID = types.StringValue(b.where())
	m.SizeBytes = types.Int64Value(saved.Size)
	m.Blake3 = types.StringValue(saved.Blake3)
	m.SHA256 = types.StringValue(hex.EncodeToString(s256.Sum(nil)))
	m.ContentType = types.StringValue(got.ContentType)
	return nil
}

// readBucket reads the object's metadata (one request): an object gone, or whose blake3 is not
// the one written, is downloaded again.
func (r *outputFileResource) readBucket(ctx context.Context, state *outputFileModel, resp *resource.ReadResponse) {
	b, err := openObject(ctx, state.Path.ValueString())
	if err != nil {
		resp.Diagnostics.AddError("Reading the object failed", err.Error())
		return
	}
	defer b.close()
	obj, ok, err := b.Stat(ctx, b.Key())
	switch {
	case err != nil:
		resp.Diagnostics.AddError("Reading the object failed", err.Error())
	case !ok, obj.Metadata[bucket.MetaBlake3] != state.Blake3.ValueString():
		resp.State.RemoveResource(ctx)
	}
}

func (r *outputFileResource) deleteFromBucket(ctx context.Context, state *outputFileModel, diags *diag.Diagnostics) {
	b, err := openObject(ctx, state.Path.ValueString())
	if err == nil {
		defer b.close()
		err = b.remove(ctx, [][]string{{}})
	}
	if err != nil {
		diags.AddError("Deleting the object failed", err.Error())
	}
}

// outputFilePathDoc is the description of svc_output_file.path.
const outputFilePathDoc = "Where to write the file. Missing parent directories are created. An S3-compatible " +
	"bucket URL naming the object's key (`s3://bucket/key?...`) is accepted too: the output is streamed " +
	"into the object, verified the same way, with the asset id and blake3 hash in its metadata; the " +
	"bucket and the credentials are checked at plan time; an object that goes missing or whose metadata " +
	"hash changes is drift; destroy deletes the object. " + bucketURLDoc
