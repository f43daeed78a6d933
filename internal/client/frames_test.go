package client

import (
	"encoding/binary"
	"errors"
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
		f, err := DecodeFrame(tc.in)
		if (err != nil) != tc.wantErr {
			t.Errorf("%s: err = %v", tc.name, err)
			continue
		}
		if tc.unknown != errors.Is(err, ErrUnknownFrame) {
			t.Errorf("%s: unknown-frame error = %v", tc.name, err)
		}
		if tc.check != nil && !tc.check(f) {
			t.Errorf("%s: decoded %+v", tc.name, f)
		}
	}
}

func FuzzDecodeFrame(f *testing.F) {
	f.Add(frame(1, u32(2), []byte("x")))
	f.Add(frame(3, u32(1), []byte("1t")))
	f.Add(frame(4, u32(2), []byte("{}img")))
	f.Fuzz(func(t *testing.T, b []byte) {
		fr, err := DecodeFrame(b)
		if err == nil && len(fr.Image) > len(b) {
			t.Fatal("image longer than the frame")
		}
	})
}
