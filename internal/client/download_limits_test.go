package client

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Downloads store the bytes served: the client never asks for compression, and a body served
// gzip-encoded anyway is not inflated.
func TestDownloadKeepsEncodedBytes(t *testing.T) {
	t.Parallel()
	var served bytes.Buffer
	zw := gzip.NewWriter(&served)
	_, _ = zw.Write(make([]byte, 1<<20))
	_ = zw.Close()
	var asked string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked = r.Header.Get("Accept-Encoding")
		w.Header().Set("Content-Encoding", "gzip")
		_, _ = w.Write(served.Bytes())
	}))
	defer srv.Close()
	var got bytes.Buffer
	d, err := testClient(t, srv.URL).DownloadTo(context.Background(), srv.URL+"/f", &got, DownloadLimits{})
	if err != nil {
		t.Fatal(err)
	}
	if asked != "identity" {
		t.Errorf("Accept-Encoding %q, want identity", asked)
	}
	if !bytes.Equal(got.Bytes(), served.Bytes()) || d.Size != int64(served.Len()) {
		t.Fatalf("stored %d bytes (size %d), want the %d bytes served", got.Len(), d.Size, served.Len())
	}
}

func TestDownloadLimits(t *testing.T) {
	t.Parallel()
	size := func(n int64) *int64 { return &n }
	endless := func(w http.ResponseWriter, r *http.Request) {
		chunk := make([]byte, 32<<10)
		for r.Context().Err() == nil {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	}
	fixed := func(n int, declare bool) http.HandlerFunc {
		return func(w http.ResponseWriter, _ *http.Request) {
			if declare {
				w.Header().Set("Content-Length", strconv.Itoa(n))
			}
			_, _ = w.Write(make([]byte, n))
		}
	}
	stall := func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte("a few bytes"))
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}
	tests := []struct {
		name     string
		handler  http.HandlerFunc
		lim      DownloadLimits
		wantErr  error // nil: success
		wantAny  bool  // any error
		wantText string
		deadline time.Duration // 0: none
	}{
		{name: "within bounds", handler: fixed(1000, true), lim: DownloadLimits{MaxBytes: 1000, DeclaredSize: size(1000)}},
		{name: "endless body stops at max", handler: endless, lim: DownloadLimits{MaxBytes: 1 << 20}, wantErr: ErrDownloadTooLarge},
		{name: "endless body stops past the declared size", handler: endless, lim: DownloadLimits{DeclaredSize: size(4096)}, wantErr: ErrDownloadTooLarge},
		{name: "Content-Length over max refused unread", handler: fixed(2000, true), lim: DownloadLimits{MaxBytes: 1000}, wantErr: ErrDownloadTooLarge},
		{name: "shorter than declared", handler: fixed(100, false), lim: DownloadLimits{DeclaredSize: size(200)}, wantAny: true},
		{name: "Content-Length not the declared size", handler: fixed(100, true), lim: DownloadLimits{DeclaredSize: size(200)}, wantAny: true},
		// A stall is transient: the download tries again until its deadline, then names it.
		{name: "stall after the headers", handler: stall, lim: DownloadLimits{StallTimeout: 100 * time.Millisecond}, deadline: time.Second,
			wantErr: context.DeadlineExceeded, wantText: ErrDownloadStalled.Error()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(tt.handler)
			defer srv.Close()
			ctx := context.Background()
			if tt.deadline > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tt.deadline)
				defer cancel()
			}
			_, err := testClient(t, srv.URL).DownloadTo(ctx, srv.URL+"/f", &discard{}, tt.lim)
			switch {
			case tt.wantText != "" && (err == nil || !strings.Contains(err.Error(), tt.wantText)):
				t.Fatalf("error %v, want one saying %q", err, tt.wantText)
			case tt.wantErr != nil && !errors.Is(err, tt.wantErr):
				t.Fatalf("error %v, want %v", err, tt.wantErr)
			case tt.wantAny && err == nil:
				t.Fatal("no error")
			case tt.wantErr == nil && !tt.wantAny && err != nil:
				t.Fatal(err)
			}
		})
	}
}
