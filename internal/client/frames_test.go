package client

import (
	"bytes"
	"encoding/binary"
	"errors"
	"slices"
	"testing"
)

func frame(typ uint32, parts ...[]byte) []byte {
	b := binary.BigEndian.AppendUint32(nil, typ)
	for _, p := range parts {
		b = append(b, p...)
	}
	return b
}

func u32(n uint32) []byte { return binary.BigEndian.AppendUint32(nil, n) }

func TestDecodeFrame(t *testing.T) {
	t.Parallel()
	meta := []byte(`{"node_id":"9","display_node_id":"9","real_node_id":"9","prompt_id":"p1","parent_node_id":null}`)
	tests := []struct {
		name    string
		in      []byte
		check   func(Frame) bool
		wantErr bool
		unknown bool
	}{
		{"preview png", frame(1, u32(2), []byte("PNGDATA")), func(f Frame) bool { return f.ImageFormat == ImageFormatPNG && string(f.Image) == "PNGDATA" }, false, false},
		{"preview jpeg empty image", frame(1, u32(1)), func(f Frame) bool { return f.ImageFormat == ImageFormatJPEG && len(f.Image) == 0 }, false, false},
		{"text", frame(3, u32(2), []byte("12hello")), func(f Frame) bool { return f.NodeID == "12" && f.Text == "hello" }, false, false},
		{"text empty node", frame(3, u32(0), []byte("x")), func(f Frame) bool { return f.NodeID == "" && f.Text == "x" }, false, false},
		{"with metadata", frame(4, u32(uint32(len(meta))), meta, []byte("IMG")), func(f Frame) bool {
			return f.Metadata != nil && f.Metadata.PromptID == "p1" && f.NodeID == "9" && f.Metadata.ParentNodeID == nil && string(f.Image) == "IMG"
		}, false, false},
		{"short", []byte{0, 0, 1}, nil, true, false},
		{"preview without format", frame(1, []byte{0, 0}), nil, true, false},
		{"text length past end", frame(3, u32(50), []byte("ab")), nil, true, false},
		{"text huge length", frame(3, u32(0xFFFFFFFF), []byte("ab")), nil, true, false},
		{"text not utf8", frame(3, u32(1), []byte{0xff, 'a'}), nil, true, false},
		{"metadata not json", frame(4, u32(3), []byte("abcIMG")), nil, true, false},
		{"unknown type", frame(2, []byte("x")), nil, true, true},
	}
	for _, tc := range tests {
		f, err := decodeFrame(tc.in)
		if (err != nil) != tc.wantErr {
			t.Errorf("%s: err = %v", tc.name, err)
			continue
		}
		if tc.unknown != errors.Is(err, errUnknownFrame) {
			t.Errorf("%s: unknown-frame error = %v", tc.name, err)
		}
		if tc.check != nil && !tc.check(f) {
			t.Errorf("%s: decoded %+v", tc.name, f)
		}
	}
}

// FuzzDecodeFrame: whatever the bytes, DecodeFrame never panics, and what it decodes is exactly
// the socket's frame layout (4-byte big-endian type, then the payload): the fields put back in place give the input again. A frame of a type the
// client does not know, and only such a frame, is errUnknownFrame.
func FuzzDecodeFrame(f *testing.F) {
	f.Add(frame(1, u32(2), []byte("x")))
	f.Add(frame(3, u32(1), []byte("1t")))
	f.Add(frame(4, u32(2), []byte("{}img")))
	f.Add(frame(4, u32(15), []byte(`{"node_id":"1"}`)))
	f.Add(frame(3, u32(0xFFFFFFFF)))
	f.Add(frame(9))
	f.Fuzz(func(t *testing.T, b []byte) {
		fr, err := decodeFrame(b)
		known := len(b) >= 4 && slices.Contains([]uint32{FramePreviewImage, FrameText, FramePreviewImageWithMetadata}, binary.BigEndian.Uint32(b))
		if errors.Is(err, errUnknownFrame) == known && len(b) >= 4 {
			t.Fatalf("type %d: err = %v", binary.BigEndian.Uint32(b), err)
		}
		if err != nil {
			return
		}
		var again []byte
		switch fr.Type {
		case FramePreviewImage:
			again = frame(1, u32(fr.ImageFormat), fr.Image)
		case FrameText:
			again = frame(3, u32(uint32(len(fr.NodeID))), []byte(fr.NodeID), []byte(fr.Text))
		case FramePreviewImageWithMetadata:
			n := binary.BigEndian.Uint32(b[4:])
			again = frame(4, u32(n), b[8:8+n], fr.Image) // the metadata bytes are JSON the decoder accepted
			if fr.Metadata == nil || fr.NodeID != fr.Metadata.NodeID {
				t.Fatalf("metadata %+v, node id %q", fr.Metadata, fr.NodeID)
			}
		}
		if !bytes.Equal(again, b) {
			t.Fatalf("decoded %+v does not lay out as % x", fr, b)
		}
	})
}
