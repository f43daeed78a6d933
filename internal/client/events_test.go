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
		want   []sseEvent
	}{
		{name: "named events", stream: "event: status\ndata: {\"status\":\"running\"}\n\nevent: progress\ndata: {}\n\n",
			want: []sseEvent{{"status", `{"status":"running"}`}, {"progress", "{}"}}},
		{name: "CRLF and comments", stream: ": keep-alive\r\nevent: log\r\ndata: a\r\n\r\n",
			want: []sseEvent{{"log", "a"}}},
		{name: "multi-line data", stream: "data: a\ndata: b\n\n", want: []sseEvent{{"message", "a\nb"}}},
		{name: "unterminated last event dropped", stream: "event: status\ndata: x\n\nevent: status\ndata: y", want: []sseEvent{{"status", "x"}}},
		{name: "event without data not dispatched", stream: "event: ping\n\n", want: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []sseEvent
			if err := readSSE(strings.NewReader(tt.stream), func(e sseEvent) error { got = append(got, e); return nil }); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %#v, want %#v", got, tt.want)
			}
		})
	}
}

func TestReadSSELineBound(t *testing.T) {
	err := readSSE(strings.NewReader("data: "+strings.Repeat("x", maxSSELine+10)+"\n\n"), func(sseEvent) error { return nil })
	if err == nil {
		t.Fatal("an over-long line must end the stream with an error")
	}
}
