package provider

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"

	"github.com/svc-org/terraform-provider-svc/internal/bucket"
	"github.com/svc-org/terraform-provider-svc/internal/client"
)

// saveOutputs downloads every output of job into dir (a local directory or a bucket URL), each
// under the name the service gave it, through a temporary file renamed into place or an upload
// that leaves no object unless it completes. Each asset record is read first: it carries a
// freshly signed url (the one in the job record may have expired since) and the blake3 hash,
// computed lazily, that the download is checked against. Names are checked, and repeats refused,
// before anything is written: a name is a file name, never a path.
func (d *providerData) saveOutputs(ctx context.Context, dir string, job *client.Job, progress *progressLines, limit time.Duration, diags *diag.Diagnostics) {
	outputs, omitted := uniqueBounded(job.Outputs, func(o client.Output) string { return o.ID })
	if omitted > 0 {
		diags.AddWarning("Not every output downloaded", fmt.Sprintf("Job %s has %d more outputs than the %d downloaded; "+
			"they stay readable on the service until it expires.", job.ID, omitted, maxOutputsInState))
	}
	if err := checkOutputNames(outputs); err != nil {
		diags.AddError("Outputs not downloaded", fmt.Sprintf("Job %s succeeded, but its outputs cannot be saved in %s: %v. Nothing was written.", job.ID, dir, err))
		return
	}
	dest, err := openOutputDest(ctx, dir)
	if err == nil && !isBucketURL(dir) {
		err = os.MkdirAll(dir, 0o755)
	}
	if err != nil {
		diags.AddError("Outputs not downloaded", fmt.Sprintf("Job %s succeeded, but %v", job.ID, err))
		return
	}
	defer dest.close()
	for _, o := range outputs {
		where := dest.where(o.Name)
		got, err := d.saveOutput(ctx, o, dest)
		if err != nil {
			diags.AddError("Output download failed", d.redact(fmt.Sprintf("Job %s succeeded, but output %q (asset %s) could not "+
				"be saved to %s: %s\n\nOutputs saved before it are kept; the job's outputs stay readable on the service "+
				"until it expires (svc_output_file downloads one by asset id).", job.ID, o.Name, o.ID, where, describeDownloadError(ctx, err, limit))))
			return
		}
		if got.verified {
			progress.say("saved %s (%d bytes, blake3 verified)", where, got.size)
			continue
		}
		progress.say("saved %s (%d bytes, not verified: the service gave no hash)", where, got.size)
		diags.AddWarning("Output not verified", fmt.Sprintf("The service gave no hash for output %q (asset %s) of job %s, "+
			"so %s (%s) could not be checked against it.", o.Name, o.ID, job.ID, where, got.blake3))
	}
}

// savedOutput is what saveOutput wrote.
type savedOutput struct {
	size     int64
	blake3   string
	verified bool // the content matched a hash the service gave
}

// saveOutput downloads output o into dest under its name, checking its blake3 against the
// asset's hash: the one the asset record gave before the download or, for a hash computed
// lazily, after it.
func (d *providerData) saveOutput(ctx context.Context, o client.Output, dest outputDest) (savedOutput, error) {
	asset, err := d.client.GetAssetRidingOut(ctx, o.ID)
	if err != nil {
		return savedOutput{}, err
	}
	want := asset.Hash
	if want == nil {
		want = o.Hash
	}
	var saved savedOutput
	var requestID string
	check := func(size int64, sum string) error {
		saved.size, saved.blake3 = size, sum
		if want == nil {
			// The service computes hashes lazily: it may have one now. One more read, no more.
			if again, err := d.client.GetAsset(ctx, o.ID); err == nil {
				want = again.Hash
			}
		}
		if want != nil && *want != sum {
			return fmt.Errorf("the content hashes to %s, the service says %s; the partial file was removed (request id %q)", sum, *want, requestID)
		}
		saved.verified = want != nil
		return nil
	}
	lim := client.DownloadLimits{MaxBytes: defaultMaxDownloadBytes, StallTimeout: defaultStallTimeout, DeclaredSize: &asset.SizeBytes}
	_, err = dest.save(ctx, bucket.Upload{AssetID: o.ID, Check: check}, func(w io.Writer) error {
		got, _, err := d.client.DownloadAsset(ctx, asset, w, lim)
		if got != nil {
			requestID = got.RequestID
		}
		return err
	}, o.Name)
	return saved, err
}

// checkOutputNames refuses a name that is not a plain file name (empty, ".", "..", a path, a
// control character) and two outputs of the same name.
func checkOutputNames(outputs []client.Output) error {
	seen := make(map[string]bool, len(outputs))
	for _, o := range outputs {
		n := o.Name
		if n == "" || n == "." || n == ".." || strings.ContainsAny(n, `/\`) || strings.IndexFunc(n, func(r rune) bool { return r < 0x20 || r == 0x7f }) >= 0 {
			return fmt.Errorf("output %q (asset %s) is not named as a file", progressText(n), o.ID)
		}
		if seen[n] {
			return fmt.Errorf("two outputs are named %q", n)
		}
		seen[n] = true
	}
	return nil
}
