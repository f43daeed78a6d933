package provider

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"sync"
	"time"

	"github.com/svc-org/terraform-provider-svc/internal/bucket"
	"github.com/svc-org/terraform-provider-svc/internal/client"
)

// batchOutputPath is where an output of a row is downloaded: <output_dir>/<row key>/<name>. An
// output name that is not one path element is refused (ok false): a name from the service
// never writes outside the row's directory.
func batchOutputPath(dir, rowKey, name string) (string, bool) {
	if name == "" || name == "." || name == ".." || filepath.Base(name) != name || batchRowDirName(rowKey) != nil {
		return "", false
	}
	return filepath.Join(dir, rowKey, name), true
}

// validOutputPath reports whether <row key>/<name> may name an output under output_dir.
func validOutputPath(rowKey, name string) bool {
	_, ok := batchOutputPath(".", rowKey, name)
	return ok
}

// rowFilesPresent reports whether every output of a succeeded row is at the destination at its
// size. The content is verified where it is downloaded; a plan only looks (no hashing, no
// request per row: a bucket is listed once).
func rowFilesPresent(inv destInventory, rowKey string, row *batchRow) bool {
	for _, o := range row.Outputs {
		if validOutputPath(rowKey, o.Name) && !inv.has(o.SizeBytes, o.ETag, rowKey, o.Name) {
			return false
		}
	}
	return true
}

// batchDest is the destination of one apply's downloads, opened, and for a bucket listed, once
// when the first row has something to download.
type batchDest struct {
	once sync.Once
	dest outputDest
	inv  destInventory
	err  error
}

// destination is output_dir opened, and what it holds. A bucket that cannot be listed is taken
// as empty: every output the apply has to save is sent.
func (e *batchEngine) destination(ctx context.Context) (outputDest, destInventory, error) {
	e.files.once.Do(func() {
		e.files.dest, e.files.err = openOutputDest(ctx, e.outputDir)
		if e.files.err != nil {
			return
		}
		if e.files.inv, e.files.err = e.files.dest.inventory(ctx); e.files.err != nil {
			e.files.inv, e.files.err = bucketInventory{}, nil
		}
	})
	return e.files.dest, e.files.inv, e.files.err
}

// download queues the transfer of a succeeded row's outputs to output_dir, in the transfers
// lane (see batchEngine).
func (e *batchEngine) download(rowKey string, row *batchRow) {
	if e.outputDir != "" {
		e.transfers <- batchTransfer{key: rowKey, row: row}
	}
}

// transfer fetches every output of a succeeded row that is not at the destination, by asset id
// (a fresh signed URL), streamed into place and verified against the row's hash when it has
// one. An object in a bucket with that hash already is not sent again.
func (e *batchEngine) transfer(ctx context.Context, rowKey string, row *batchRow) {
	dest, inv, err := e.destination(ctx)
	if err != nil {
		e.note(func(n *batchNews) { n.downloadErrors = append(n.downloadErrors, rowNote{rowKey, row, err}) })
		return
	}
	for _, o := range row.Outputs {
		if !validOutputPath(rowKey, o.Name) {
			e.note(func(n *batchNews) {
				n.downloadErrors = append(n.downloadErrors, rowNote{rowKey, row, fmt.Errorf("output name %q is not a file name; not downloaded", o.Name)})
			})
			continue
		}
		if inv.has(o.SizeBytes, o.ETag, rowKey, o.Name) && dest.same(ctx, inv, o.Hash, rowKey, o.Name) {
			continue
		}
		if err := e.saveWithRetries(ctx, dest, rowKey, o); err != nil {
			e.note(func(n *batchNews) { n.downloadErrors = append(n.downloadErrors, rowNote{rowKey, row, err}) })
		}
	}
}

// bucketSaveAttempts and bucketSavePause: an output sent to a bucket is downloaded and sent
// again after a transient failure of the bucket that the S3 client's own retries did not ride
// out (a bucket unreachable longer than they last), while the apply's time lasts.
const (
	bucketSaveAttempts = 3
	bucketSavePause    = 3 * time.Second
)

func (e *batchEngine) saveWithRetries(ctx context.Context, dest outputDest, rowKey string, o batchOutput) error {
	attempts := 1
	if _, ok := dest.(bucketDest); ok {
		attempts = bucketSaveAttempts
	}
	var err error
	for i := range attempts {
		if i > 0 {
			select {
			case <-ctx.Done():
				return err
			case <-time.After(bucketSavePause * time.Duration(i)):
			}
		}
		if err = e.downloadOutput(ctx, dest, rowKey, o); err == nil || ctx.Err() != nil || !bucket.Transient(err) {
			return err
		}
	}
	return err
}

func (e *batchEngine) downloadOutput(ctx context.Context, dest outputDest, rowKey string, o batchOutput) error {
	asset, err := e.data.client.GetAssetRidingOut(ctx, o.ID)
	if err != nil {
		return err
	}
	want := o.Hash
	if want == "" && asset.Hash != nil {
		want = *asset.Hash
	}
	var requestID string
	size := asset.SizeBytes
	lim := client.DownloadLimits{MaxBytes: defaultMaxDownloadBytes, StallTimeout: defaultStallTimeout, DeclaredSize: &size}
	_, err = dest.save(ctx, bucket.Upload{AssetID: o.ID, Blake3: want}, func(w io.Writer) error {
		got, _, err := e.data.client.DownloadAsset(ctx, asset, w, lim)
		if got != nil {
			requestID = got.RequestID
		}
		return err
	}, rowKey, o.Name)
	if err != nil && requestID != "" {
		return fmt.Errorf("%w (request id %q)", err, requestID)
	}
	return err
}

// rowOutputPaths are the path elements of the outputs a row downloaded.
func rowOutputPaths(rowKey string, row *batchRow) [][]string {
	var paths [][]string
	for _, o := range row.Outputs {
		if validOutputPath(rowKey, o.Name) {
			paths = append(paths, []string{rowKey, o.Name})
		}
	}
	return paths
}

// removeFiles removes the downloaded outputs of a row that is forgotten (and its directory when
// that is left empty). A file already gone is fine; nothing else under output_dir is touched.
func (e *batchEngine) removeFiles(ctx context.Context, rowKey string, row *batchRow) {
	e.removePaths(ctx, rowOutputPaths(rowKey, row), rowKey, row)
}

// removeAllFiles removes the downloaded outputs of every row state holds (the batch is
// destroyed): from a bucket, at most 1,000 objects per request.
func (e *batchEngine) removeAllFiles(ctx context.Context, held batchHeld) {
	var paths [][]string
	for key := range held.results {
		if row, ok := held.row(key); ok {
			paths = append(paths, rowOutputPaths(key, row)...)
		}
	}
	e.removePaths(ctx, paths, "", nil)
}

func (e *batchEngine) removePaths(ctx context.Context, paths [][]string, rowKey string, row *batchRow) {
	if e.outputDir == "" || len(paths) == 0 {
		return
	}
	dest, err := openOutputDest(ctx, e.outputDir)
	if err == nil {
		defer dest.close()
		err = dest.remove(ctx, paths)
	}
	if err != nil {
		e.note(func(n *batchNews) { n.downloadErrors = append(n.downloadErrors, rowNote{rowKey, row, err}) })
	}
}

// recordObjectTags notes, for a bucket, the ETag of every object of the rows this apply brought
// to an end, from one listing after the uploads (one request per 1,000 objects): the next plan
// sees an object written again since as drift. A listing that fails leaves them unknown (the
// size alone decides).
func (e *batchEngine) recordObjectTags(ctx context.Context, rows map[string]*batchRow) {
	if !isBucketURL(e.outputDir) || ctx.Err() != nil {
		return
	}
	dest, err := openOutputDest(ctx, e.outputDir)
	if err != nil {
		return
	}
	defer dest.close()
	inv, err := dest.inventory(ctx)
	listed, ok := inv.(bucketInventory)
	if err != nil || !ok {
		return
	}
	for key, row := range rows {
		if row.Status != client.JobSucceeded {
			continue
		}
		for i, o := range row.Outputs {
			if validOutputPath(key, o.Name) {
				row.Outputs[i].ETag = listed.etag(key, o.Name)
			}
		}
	}
}
