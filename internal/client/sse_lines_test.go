package client

import (
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
)

func TestReadSSELineEnds(t *testing.T) {
	tests := []struct {
		name   string
		stream string
		want   []sseEvent
	}{
		{name: "lone CR ends lines", stream: "event: status\rdata: a\rdata: b\r\r", want: []sseEvent{{"status", "a\nb"}}},
		{name: "CR inside a value is a line end, not data", stream: "data: a\rb\n\n", want: []sseEvent{{"message", "a"}}},
		{name: "CRLF split across reads is one line end", stream: "data: a\r\ndata: b\r\n\r\n", want: []sseEvent{{"message", "a\nb"}}},
		{name: "mixed", stream: "data: x\n\rdata: y\r\n\n", want: []sseEvent{{"message", "x"}, {"message", "y"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []sseEvent
			// One byte per read: a CR at the end of a read must wait for the next byte.
			err := readSSE(iotest.OneByteReader(strings.NewReader(tt.stream)), func(e sseEvent) error { got = append(got, e); return nil })
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %#v, want %#v", got, tt.want)
			}
		})
	}
}
