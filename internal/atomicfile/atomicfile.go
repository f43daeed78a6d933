// Package atomicfile writes files so that readers only ever see the old content or the whole new
// content under a name, never a partial write.
package atomicfile

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// Mode is the permission of every file written here: readable by all, writable by the owner,
// whatever the process umask (a downloaded output is meant to be used by other tools).
const Mode os.FileMode = 0o644

// Write creates or replaces path with what fill writes. fill writes into a temporary file in the
// same directory (so the final rename never crosses file systems); the file is synced, given
// Mode and renamed into place only when fill returns nil. On any error the temporary file is
// removed and path is left as it was. Missing parent directories are created.
func Write(path string, fill func(w io.Writer) error) (err error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".part-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = os.Remove(tmp.Name())
		}
	}()
	err = fill(tmp)
	if err == nil {
		err = tmp.Sync()
	}
	if err == nil {
		err = tmp.Chmod(Mode)
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("moving the written file into place: %w", err)
	}
	syncDir(dir)
	return nil
}

// WriteString replaces path with content.
func WriteString(path, content string) error {
	return Write(path, func(w io.Writer) error {
		_, err := io.WriteString(w, content)
		return err
	})
}

// Remove deletes path; a file already gone is not an error.
func Remove(path string) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// syncDir makes the rename durable where the platform allows syncing a directory (best effort:
// some systems refuse to open or sync one, and the file itself is already synced).
func syncDir(dir string) {
	d, err := os.Open(dir)
	if err != nil {
		return
	}
	_ = d.Sync()
	_ = d.Close()
}
