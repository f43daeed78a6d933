package bucket

import (
	"bytes"
	"encoding/hex"
	"io"
	"runtime"
	"testing"

	"lukechampine.com/blake3"
)

// NewBlake3 hashes as blake3 does, whatever the sizes of the writes, and a 32 KiB write (what
// io.Copy makes) allocates next to nothing, where the hasher alone allocates 16 KiB or more.
func TestNewBlake3(t *testing.T) {
	t.Parallel()
	data := make([]byte, 3<<20+12345)
	for i := range data {
		data[i] = byte(i * 7)
	}
	want := blake3.Sum256(data)
	for _, piece := range []int{1, 1000, 1024, 32 << 10, 100 << 10, len(data)} {
		h := NewBlake3()
		for rest := data; len(rest) > 0; {
			n := min(piece, len(rest))
			if _, err := h.Write(rest[:n]); err != nil {
				t.Fatal(err)
			}
			rest = rest[n:]
		}
		if got := h.Sum(nil); !bytes.Equal(got, want[:]) {
			t.Errorf("writes of %d bytes: %s, want %s", piece, hex.EncodeToString(got), hex.EncodeToString(want[:]))
		}
	}
}

// Streaming through NewBlake3 in io.Copy's 32 KiB writes makes little garbage; through the
// hasher alone, about as much as was hashed. Not parallel: it counts the process's allocations.
func TestNewBlake3Garbage(t *testing.T) {
	write := make([]byte, 32<<10)
	perWrite := func(w io.Writer) uint64 {
		const writes = 200
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for range writes {
			_, _ = w.Write(write)
		}
		runtime.ReadMemStats(&after)
		return (after.TotalAlloc - before.TotalAlloc) / writes
	}
	plain, ours := perWrite(blake3.New(32, nil)), perWrite(NewBlake3())
	t.Logf("bytes allocated per 32 KiB write: %d through the hasher alone, %d through NewBlake3", plain, ours)
	if ours > 4<<10 || plain < 8<<10 {
		t.Errorf("bytes allocated per 32 KiB write: %d through NewBlake3 (want under 4 KiB), %d through the hasher alone (expected 8 KiB or more: has lukechampine.com/blake3 changed?)", ours, plain)
	}
}
