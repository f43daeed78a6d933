package bucket

import (
	"hash"

	"lukechampine.com/blake3"
)

// Writes reach the blake3 hasher in pieces of at most hashPiece bytes, each copied into a buffer
// with hashSlack bytes of room after it. lukechampine.com/blake3 hashes a write's whole chunks
// in subtrees of up to 16 chunks (16 KiB), and copies a subtree that has less than 16 KiB of the
// slice's capacity after it into a new 16 KiB buffer: once or more per write, about as many
// bytes of garbage as were hashed with io.Copy's 32 KiB writes (98 MiB for 100 MiB uploaded).
// With the room there, it allocates nothing but its bookkeeping.
const (
	hashPiece = 64 << 10
	hashSlack = 16 << 10
)

// NewBlake3 is the 32-byte blake3 hash every output is verified with, fed so that streaming a
// large output through it makes no garbage in proportion to its size.
func NewBlake3() hash.Hash { return &blake3Writer{Hasher: blake3.New(32, nil)} }

type blake3Writer struct {
	*blake3.Hasher
	buf []byte
}

func (h *blake3Writer) Write(p []byte) (int, error) {
	if h.buf == nil {
		h.buf = make([]byte, hashPiece+hashSlack)
	}
	written := len(p)
	for len(p) > 0 {
		n := copy(h.buf[:hashPiece], p)
		_, _ = h.Hasher.Write(h.buf[:n]) // never fails
		p = p[n:]
	}
	return written, nil
}
