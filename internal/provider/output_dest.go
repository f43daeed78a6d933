package provider

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"

	"github.com/svc-org/terraform-provider-svc/internal/atomicfile"
	"github.com/svc-org/terraform-provider-svc/internal/bucket"
)

// outputDest is where outputs are saved: a local directory or an S3-compatible bucket (an
// output_dir such as s3://bucket/prefix?endpoint=...). Both keep the same promises: content
// streamed into place and verified against its hash, nothing left where a save failed,
// and only what was written removed.
type outputDest interface {
	// where is the file path or object URL of the path elements, for messages.
	where(elems ...string) string
	// inventory is what is there now, looked at once: the directory is read file by file as
	// asked, the bucket listed (one request per 1,000 objects).
	inventory(ctx context.Context) (destInventory, error)
	// same reports whether the output at elems, which inv says has the right size, has the
	// hash given ("" when none is known: the size decides).
	same(ctx context.Context, inv destInventory, hash string, elems ...string) bool
	// save streams what fill writes to elems; see bucket.Upload for the checks.
	save(ctx context.Context, up bucket.Upload, fill func(w io.Writer) error, elems ...string) (bucket.Uploaded, error)
	// remove removes the outputs at each elems; one already gone is fine.
	remove(ctx context.Context, paths [][]string) error
	close()
}

// destInventory says whether an output of the given size is at elems, and for a bucket, when
// etag is not "", whether the object is the one written then (not written again since).
type destInventory interface {
	has(size int64, etag string, elems ...string) bool
}

// openOutputDest opens the destination output_dir names. A bucket URL is parsed and the
// bucket opened, without a request; everything else is a local directory.
func openOutputDest(ctx context.Context, outputDir string) (outputDest, error) {
	if !bucket.IsURL(outputDir) {
		return dirDest(outputDir), nil
	}
	loc, err := bucket.Parse(outputDir)
	if err != nil {
		return nil, err
	}
	s, err := bucket.Open(ctx, loc)
	if err != nil {
		return nil, err
	}
	return bucketDest{s}, nil
}

// dirDest is a local directory.
type dirDest string

func (d dirDest) where(elems ...string) string {
	return filepath.Join(append([]string{string(d)}, elems...)...)
}

func (d dirDest) inventory(context.Context) (destInventory, error) { return d, nil }

func (d dirDest) has(size int64, _ string, elems ...string) bool {
	st, err := os.Stat(d.where(elems...))
	return err == nil && st.Mode().IsRegular() && st.Size() == size
}

// same: a file's content is verified where it is downloaded; the size decides here (no
// hashing at plan or for a file already there).
func (d dirDest) same(context.Context, destInventory, string, ...string) bool { return true }

func (d dirDest) save(_ context.Context, up bucket.Upload, fill func(w io.Writer) error, elems ...string) (bucket.Uploaded, error) {
	abs, err := filepath.Abs(d.where(elems...))
	if err != nil {
		return bucket.Uploaded{}, err
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
		return bucket.Uploaded{}, err
	}
	var got bucket.Uploaded
	err = atomicfile.Write(abs, func(w io.Writer) error {
		h := bucket.NewBlake3()
		cw := &countWriter{w: io.MultiWriter(w, h)}
		if err := fill(cw); err != nil {
			return err
		}
		got = bucket.Uploaded{Size: cw.n, Blake3: "blake3:" + hex.EncodeToString(h.Sum(nil))}
		if up.Blake3 != "" && got.Blake3 != up.Blake3 {
			return fmt.Errorf("content of %s hashes to %s, expected %s; nothing was written", abs, got.Blake3, up.Blake3)
		}
		if up.Check != nil {
			return up.Check(got.Size, got.Blake3)
		}
		return nil
	})
	return got, err
}

// remove removes the files, then each directory they were in when that is left empty.
func (d dirDest) remove(_ context.Context, paths [][]string) error {
	var errs []error
	dirs := map[string]bool{}
	for _, elems := range paths {
		p := d.where(elems...)
		if err := atomicfile.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
		dirs[filepath.Dir(p)] = true
	}
	for dir := range dirs {
		if dir != filepath.Clean(string(d)) {
			_ = os.Remove(dir) // only when empty
		}
	}
	return errors.Join(errs...)
}

func (d dirDest) close() {}

// bucketDest is an S3-compatible bucket: objects at <prefix>/<elems...>.
type bucketDest struct{ *bucket.Store }

func (b bucketDest) where(elems ...string) string { return b.URL(b.Key(elems...)) }

func (b bucketDest) inventory(ctx context.Context) (destInventory, error) {
	objects, err := b.List(ctx)
	if err != nil {
		return nil, err
	}
	return bucketInventory{b.Location, objects}, nil
}

// same reads the object's metadata: an object whose blake3 is the one the service gave is
// not sent again.
func (b bucketDest) same(ctx context.Context, _ destInventory, hash string, elems ...string) bool {
	if hash == "" {
		return true
	}
	obj, ok, err := b.Stat(ctx, b.Key(elems...))
	return err == nil && ok && obj.Metadata[bucket.MetaBlake3] == hash
}

func (b bucketDest) save(ctx context.Context, up bucket.Upload, fill func(w io.Writer) error, elems ...string) (bucket.Uploaded, error) {
	return b.Put(ctx, b.Key(elems...), up, fill)
}

func (b bucketDest) remove(ctx context.Context, paths [][]string) error {
	keys := make([]string, len(paths))
	for i, elems := range paths {
		keys[i] = b.Key(elems...)
	}
	return b.Delete(ctx, keys)
}

func (b bucketDest) close() { _ = b.Close() }

// bucketInventory is one listing of the bucket's prefix.
type bucketInventory struct {
	loc     bucket.Location
	objects map[string]bucket.Object
}

func (i bucketInventory) has(size int64, etag string, elems ...string) bool {
	o, ok := i.objects[i.loc.Key(elems...)]
	return ok && o.Size == size && (etag == "" || o.ETag == "" || o.ETag == etag)
}

// etag is the ETag the listing gave the object at elems; "" when it has none.
func (i bucketInventory) etag(elems ...string) string { return i.objects[i.loc.Key(elems...)].ETag }

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// isBucketURL reports whether output_dir names a bucket.
func isBucketURL(outputDir string) bool { return bucket.IsURL(outputDir) }

// destProblem is an output_dir problem found at plan, said so that it names what to fix.
func destProblem(err error) string {
	return strings.TrimSpace(err.Error()) + "\n\nNothing was sent to the service."
}

// outputDirAtPlan checks an output_dir that names a bucket (URL, bucket, credentials: one
// request) and, when the batch has rows already (list true), lists what the bucket holds under
// its prefix (one request per 1,000 objects), so that a missing object is seen as drift. For a
// local directory it does nothing (nil: the files are looked at one by one). ok is false when
// the plan must stop: the error names the bucket and where the credentials came from.
func outputDirAtPlan(ctx context.Context, attr, outputDir string, list bool, diags *diag.Diagnostics) (destInventory, bool) {
	if !isBucketURL(outputDir) {
		return nil, true
	}
	dest, err := openOutputDest(ctx, outputDir)
	if err == nil {
		defer dest.close()
		err = dest.(bucketDest).Check(ctx)
	}
	var inv destInventory
	if err == nil && list {
		inv, err = dest.inventory(ctx)
	}
	if err != nil {
		diags.AddAttributeError(path.Root(attr), "Invalid "+attr, destProblem(err))
		return nil, false
	}
	return inv, true
}

// bucketURLDoc is how the documentation says what a bucket URL is and where its credentials
// come from.
const bucketURLDoc = "A bucket URL is `s3://bucket/prefix?region=...`; for a service that is not AWS, add " +
	"`&endpoint=https://host` (`endpoint=http://127.0.0.1:9000` for a local server; `disable_https=true` sends plain " +
	"HTTP) and `&use_path_style=true`. Without `region` or `AWS_REGION`, a bucket behind `endpoint` is addressed as " +
	"`us-east-1`. Credentials come from the AWS SDK's chain (`AWS_ACCESS_KEY_ID` and `AWS_SECRET_ACCESS_KEY`, a " +
	"profile, a role), never stored."
