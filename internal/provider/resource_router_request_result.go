package provider

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"mime"
	"os"
	"strings"
	"unicode/utf8"

	"github.com/svc-org/terraform-provider-svc/internal/atomicfile"
	"github.com/svc-org/terraform-provider-svc/internal/client"
)

// maxResultInState bounds a result kept in state: larger bodies belong in result_path.
const maxResultInState = 1 << 20

// maxResultFileBytes bounds a result written to result_path, as svc_output_file's default
// max_size_bytes bounds a download: an endless body must not fill the disk.
const maxResultFileBytes = defaultMaxDownloadBytes

// storedResult is what the provider keeps of a model's output.
type storedResult struct {
	text        *string // the body, when it is JSON or text, small, and result_path is unset
	contentType string
	size        int64
	sha256      string
	warning     string // why the bytes were not kept, when they were not
}

// storeResult consumes res.Body. With resultPath set the bytes go to that file (a temporary
// file renamed into place, so a failure never leaves half a file under the name); otherwise a
// JSON or text body up to maxResultInState is kept as text. Anything else is hashed and
// measured only: the run has been paid for, so not keeping its bytes is a warning, not an
// error that would taint the resource and run the model again.
func storeResult(res *client.RouterResult, resultPath string) (*storedResult, error) {
	defer res.Body.Close()
	out := &storedResult{contentType: res.ContentType}
	h := sha256.New()
	if resultPath != "" {
		n, err := writeFileAtomic(resultPath, io.TeeReader(res.Body, h))
		if err != nil {
			return nil, err
		}
		out.size, out.sha256 = n, hex.EncodeToString(h.Sum(nil))
		return out, nil
	}
	head, err := io.ReadAll(io.LimitReader(io.TeeReader(res.Body, h), maxResultInState+1))
	if err != nil {
		return nil, fmt.Errorf("reading the result: %w", err)
	}
	rest, err := io.Copy(h, res.Body)
	if err != nil {
		return nil, fmt.Errorf("reading the result: %w", err)
	}
	out.size, out.sha256 = int64(len(head))+rest, hex.EncodeToString(h.Sum(nil))
	switch {
	case !textual(res.ContentType):
		out.warning = fmt.Sprintf("The result is %s (%d bytes), which is not kept in state. Set result_path to write it to a file.",
			orUnknown(res.ContentType), out.size)
	case out.size > maxResultInState:
		out.warning = fmt.Sprintf("The result is %d bytes, over the %d MiB kept in state. Set result_path to write it to a file.",
			out.size, maxResultInState>>20)
	case !utf8.Valid(head):
		out.warning = fmt.Sprintf("The result says it is %s but is not valid UTF-8, so it is not kept in state. Set result_path to write it to a file.", res.ContentType)
	default:
		s := string(head)
		out.text = &s
	}
	return out, nil
}

// textual reports whether a media type is JSON or text, which state can hold as a string.
func textual(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return false
	}
	return mt == "application/json" || strings.HasSuffix(mt, "+json") || strings.HasPrefix(mt, "text/")
}

func orUnknown(s string) string {
	if s == "" {
		return "of unknown media type"
	}
	return s
}

// writeFileAtomic streams r, at most maxResultFileBytes of it, into path through a temporary
// file in the same directory.
func writeFileAtomic(path string, r io.Reader) (int64, error) {
	var n int64
	err := atomicfile.Write(path, func(w io.Writer) error {
		var err error
		n, err = io.Copy(w, io.LimitReader(r, maxResultFileBytes+1))
		if err == nil && n > maxResultFileBytes {
			err = fmt.Errorf("the result is over %d GiB, more than a result file may hold; nothing was written", maxResultFileBytes>>30)
		}
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("writing result_path %s: %w", path, err)
	}
	return n, nil
}

// resultFileChanged reports whether the file at path no longer holds the bytes whose SHA-256
// (hex) is sum: it is gone, or holds other bytes.
func resultFileChanged(path, sum string) (bool, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return true, nil
	}
	if err != nil {
		return false, err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return false, err
	}
	return hex.EncodeToString(h.Sum(nil)) != sum, nil
}
