package atomicfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestWrite(t *testing.T) {
	t.Parallel()
	errFill := errors.New("fill failed")
	tests := []struct {
		name     string
		existing string // content already at path ("" for none)
		fill     func(w io.Writer) error
		wantErr  error
		want     string // content at path afterwards ("" for no file)
	}{
		{name: "new file", fill: writeString("new"), want: "new"},
		{name: "replaces", existing: "old", fill: writeString("new"), want: "new"},
		{name: "failed fill keeps the old file", existing: "old", fill: failAfter("half", errFill), wantErr: errFill, want: "old"},
		{name: "failed fill leaves no file", fill: failAfter("half", errFill), wantErr: errFill},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			path := filepath.Join(dir, "sub", "out.bin")
			if tt.existing != "" {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(tt.existing), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			err := Write(path, tt.fill)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("Write: got error %v, want %v", err, tt.wantErr)
			}
			got, rerr := os.ReadFile(path)
			switch {
			case tt.want == "" && !errors.Is(rerr, os.ErrNotExist):
				t.Fatalf("expected no file, read %q (%v)", got, rerr)
			case tt.want != "" && string(got) != tt.want:
				t.Fatalf("content %q (%v), want %q", got, rerr, tt.want)
			}
			entries, _ := os.ReadDir(filepath.Dir(path))
			for _, e := range entries {
				if strings.Contains(e.Name(), ".part-") {
					t.Fatalf("temporary file %s left behind", e.Name())
				}
			}
		})
	}
}

// Files are 0644 whatever the umask: a restrictive umask must not make them private.
func TestWriteModeIgnoresUmask(t *testing.T) { //nolint:paralleltest // changes the process umask
	old := syscall.Umask(0o077)
	defer syscall.Umask(old)
	path := filepath.Join(t.TempDir(), "f")
	if err := WriteString(path, "x"); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != Mode {
		t.Fatalf("mode %v, want %v", fi.Mode().Perm(), Mode)
	}
}

func TestRemoveMissingIsNotAnError(t *testing.T) {
	t.Parallel()
	if err := Remove(filepath.Join(t.TempDir(), "gone")); err != nil {
		t.Fatal(err)
	}
}

func writeString(s string) func(io.Writer) error {
	return func(w io.Writer) error { _, err := io.WriteString(w, s); return err }
}

func failAfter(s string, err error) func(io.Writer) error {
	return func(w io.Writer) error { _, _ = io.WriteString(w, s); return err }
}
