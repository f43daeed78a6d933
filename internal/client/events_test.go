package client

import (
	"reflect"
	"strings"
	"testing"
)

func TestReadSSE(t *testing.T) {
	tests := []struct {
		name   string
		stream string
		want   []SSEEvent
	}{
		{name: "named events", stream: "event: status\ndata: {\"status\":\"running\"}\n\nevent: progress\ndata: {}\n\n",
			want: []SSEEvent{{"status", `{"status":"running"}`}, {"progress", "{}"}}},
		{name: "CRLF and comments", stream: ": keep-alive\r\nevent: log\r\ndata: a\r\n\r\n",
			want: []SSEEvent{{"log", "a"}}},
		{name: "multi-line data", stream: "data: a\ndata: b\n\n", want: []SSEEvent{{"message", "a\nb"}}},
		{name: "unterminated last event dropped", stream: "event: status\ndata: x\n\nevent: status\ndata: y", want: []SSEEvent{{"status", "x"}}},
		{name: "event without data not dispatched", stream: "event: ping\n\n", want: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []SSEEvent
			if err := ReadSSE(strings.NewReader(tt.stream), func(e SSEEvent) error { got = append(got, e); return nil }); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %#v, want %#v", got, tt.want)
			}
		})
	}
}

func TestReadSSELineBound(t *testing.T) {
	err := ReadSSE(strings.NewReader("data: "+strings.Repeat("x", maxSSELine+10)+"\n\n"), func(SSEEvent) error { return nil })
	if err == nil {
		t.Fatal("an over-long line must end the stream with an error")
	}
}
