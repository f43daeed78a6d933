package emulator

import (
	"encoding/hex"
	"errors"
	"io"

	"github.com/google/uuid"
	"lukechampine.com/blake3"
)

// patternBlob is a large, deterministic blob that is generated as it is read instead of held
// in memory, so tests can download hundreds of MiB without the server's memory standing in
// the way of measuring the client's.
type patternBlob struct {
	size int64
	seed byte
}

func (b patternBlob) byteAt(off int64) byte { return byte(off*31+int64(b.seed)) ^ byte(off>>12) }

// reader returns a fresh io.ReadSeeker over the blob.
func (b patternBlob) reader() io.ReadSeeker { return &patternReader{blob: b} }

type patternReader struct {
	blob patternBlob
	pos  int64
}

func (r *patternReader) Read(p []byte) (int, error) {
	if r.pos >= r.blob.size {
		return 0, io.EOF
	}
	n := int(min(int64(len(p)), r.blob.size-r.pos))
	for i := 0; i < n; i++ {
		p[i] = r.blob.byteAt(r.pos + int64(i))
	}
	r.pos += int64(n)
	return n, nil
}

func (r *patternReader) Seek(offset int64, whence int) (int64, error) {
	switch whence {
	case io.SeekStart:
	case io.SeekCurrent:
		offset += r.pos
	case io.SeekEnd:
		offset += r.blob.size
	default:
		return 0, errors.New("bad whence")
	}
	if offset < 0 {
		return 0, errors.New("negative position")
	}
	r.pos = offset
	return offset, nil
}

// PutLargeAsset stores a generated asset of size bytes (deterministic content, never held in
// memory) and returns its id and blake3 hash. Tests use it to download large files.
func (s *Server) PutLargeAsset(name, contentType string, size int64) (id, hash string) {
	blob := patternBlob{size: size, seed: byte(len(name))}
	h := blake3.New(32, nil)
	_, _ = io.Copy(h, blob.reader())
	a := &asset{
		id: uuid.NewString(), name: name, contentType: contentType, blob: &blob,
		hash: "blake3:" + hex.EncodeToString(h.Sum(nil)), createdAt: s.now(),
	}
	s.mu.Lock()
	s.assets[a.id] = a
	s.mu.Unlock()
	return a.id, a.hash
}
