package client

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"
)

// Binary frame types of the v1 socket: a frame is a 4-byte type, then its payload. Integers are
// big-endian.
const (
	FramePreviewImage             = 1 // type, image format, image bytes
	FrameText                     = 3 // type, node id length N, node id, UTF-8 text
	FramePreviewImageWithMetadata = 4 // type, metadata length N, JSON metadata, image bytes
)

// Image formats of a PREVIEW_IMAGE frame.
const (
	ImageFormatJPEG = 1
	ImageFormatPNG  = 2
)

// Frame is a decoded binary socket frame. Which fields are set depends on Type.
type Frame struct {
	Type        uint32
	ImageFormat uint32           // PREVIEW_IMAGE
	Image       []byte           // PREVIEW_IMAGE, PREVIEW_IMAGE_WITH_METADATA (aliases the input)
	NodeID      string           // TEXT; PREVIEW_IMAGE_WITH_METADATA from the metadata
	Text        string           // TEXT
	Metadata    *PreviewMetadata // PREVIEW_IMAGE_WITH_METADATA
}

// PreviewMetadata is the JSON header of a PREVIEW_IMAGE_WITH_METADATA frame.
type PreviewMetadata struct {
	NodeID        string  `json:"node_id"`
	DisplayNodeID string  `json:"display_node_id"`
	RealNodeID    string  `json:"real_node_id"`
	PromptID      string  `json:"prompt_id"`
	ParentNodeID  *string `json:"parent_node_id"`
}

// errUnknownFrame is returned for a well-formed frame of a type the client does not know. Callers
// ignore such frames: the service may add types.
var errUnknownFrame = errors.New("unknown binary frame type")

// decodeFrame decodes one binary socket frame. It is a pure function of its input: it never
// panics, whatever the bytes, and a length field that points past the end is an error.
func decodeFrame(b []byte) (Frame, error) {
	if len(b) < 4 {
		return Frame{}, fmt.Errorf("binary frame of %d bytes is shorter than its type", len(b))
	}
	f := Frame{Type: binary.BigEndian.Uint32(b)}
	rest := b[4:]
	switch f.Type {
	case FramePreviewImage:
		if len(rest) < 4 {
			return Frame{}, errors.New("PREVIEW_IMAGE frame has no image format")
		}
		f.ImageFormat, f.Image = binary.BigEndian.Uint32(rest), rest[4:]
	case FrameText:
		id, text, err := lengthPrefixed(rest, "TEXT frame node id")
		if err != nil {
			return Frame{}, err
		}
		if !utf8.Valid(id) || !utf8.Valid(text) {
			return Frame{}, errors.New("TEXT frame is not UTF-8")
		}
		f.NodeID, f.Text = string(id), string(text)
	case FramePreviewImageWithMetadata:
		meta, img, err := lengthPrefixed(rest, "PREVIEW_IMAGE_WITH_METADATA metadata")
		if err != nil {
			return Frame{}, err
		}
		var m PreviewMetadata
		if err := json.Unmarshal(meta, &m); err != nil {
			return Frame{}, fmt.Errorf("PREVIEW_IMAGE_WITH_METADATA metadata is not the expected JSON: %w", err)
		}
		f.Metadata, f.NodeID, f.Image = &m, m.NodeID, img
	default:
		return f, fmt.Errorf("%w %d", errUnknownFrame, f.Type)
	}
	return f, nil
}

// lengthPrefixed splits b into a field whose 4-byte length comes first, and the remainder.
func lengthPrefixed(b []byte, what string) (field, rest []byte, err error) {
	if len(b) < 4 {
		return nil, nil, fmt.Errorf("%s length missing", what)
	}
	n := uint64(binary.BigEndian.Uint32(b))
	if n > uint64(len(b)-4) {
		return nil, nil, fmt.Errorf("%s length %d exceeds the %d bytes left", what, n, len(b)-4)
	}
	return b[4 : 4+n], b[4+n:], nil
}
