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

	"lukechampine.com/blake3"

	"github.com/svc-org/terraform-provider-svc/internal/atomicfile"
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

// rowFilesPresent reports whether every output of a succeeded row is on disk at its size. The
// content is verified where it is downloaded; a plan only looks (no hashing, no request).
func rowFilesPresent(dir, rowKey string, row *batchRow) bool {
	for _, o := range row.Outputs {
		p, ok := batchOutputPath(dir, rowKey, o.Name)
		if !ok {
			continue
		}
		st, err := os.Stat(p)
		if err != nil || st.Size() != o.SizeBytes {
			return false
		}
	}
	return true
}

// download fetches every output of a succeeded row that is not on disk, by asset id (a fresh
// signed URL), streamed into place and verified against the row's hash when it has one.
func (e *batchEngine) download(ctx context.Context, rowKey string, row *batchRow) {
	if e.outputDir == "" {
		return
	}
	for _, o := range row.Outputs {
		dest, ok := batchOutputPath(e.outputDir, rowKey, o.Name)
		if !ok {
			e.note(func(n *batchNews) {
				n.downloadErrors = append(n.downloadErrors, rowNote{rowKey, row, fmt.Errorf("output name %q is not a file name; not downloaded", o.Name)})
			})
			continue
		}
		if st, err := os.Stat(dest); err == nil && st.Size() == o.SizeBytes {
			continue
		}
		if err := e.downloadOutput(ctx, dest, o); err != nil {
			e.note(func(n *batchNews) { n.downloadErrors = append(n.downloadErrors, rowNote{rowKey, row, err}) })
		}
	}
}

func (e *batchEngine) downloadOutput(ctx context.Context, dest string, o batchOutput) error {
	abs, err := filepath.Abs(dest)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
		return err
	}
	return atomicfile.Write(abs, func(w io.Writer) error {
		asset, err := e.data.client.GetAsset(ctx, o.ID)
		if err != nil {
			return err
		}
		h := blake3.New(32, nil)
		size := asset.SizeBytes
		lim := client.DownloadLimits{MaxBytes: defaultMaxDownloadBytes, StallTimeout: defaultStallTimeout, DeclaredSize: &size}
		got, err := e.data.client.DownloadTo(ctx, asset.URL, io.MultiWriter(w, h), lim)
		if err != nil {
			return err
		}
		want := o.Hash
		if want == "" && asset.Hash != nil {
			want = *asset.Hash
		}
		if sum := "blake3:" + hex.EncodeToString(h.Sum(nil)); want != "" && sum != want {
			return fmt.Errorf("content of %s hashes to %s, expected %s; nothing was written (request id %q)", abs, sum, want, got.RequestID)
		}
		return nil
	})
}

// removeFiles removes the downloaded outputs of a row that is forgotten, and its directory
// when that is left empty. A file already gone is fine.
func (e *batchEngine) removeFiles(rowKey string, row *batchRow) {
	if e.outputDir == "" {
		return
	}
	for _, o := range row.Outputs {
		if p, ok := batchOutputPath(e.outputDir, rowKey, o.Name); ok {
			if err := atomicfile.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
				e.note(func(n *batchNews) { n.downloadErrors = append(n.downloadErrors, rowNote{rowKey, row, err}) })
			}
		}
	}
	_ = os.Remove(filepath.Join(e.outputDir, rowKey)) // only when empty
}

// removeAllFiles removes the downloaded outputs of every row state holds (the batch is
// destroyed).
func (e *batchEngine) removeAllFiles(held batchHeld) {
	if e.outputDir == "" {
		return
	}
	for key := range held.results {
		if row, ok := held.row(key); ok {
			e.removeFiles(key, row)
		}
	}
}
