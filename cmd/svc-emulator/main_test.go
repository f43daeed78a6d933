package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestRunServesAndStops(t *testing.T) {
	urlFile := filepath.Join(t.TempDir(), "url")
	stop := make(chan os.Signal, 1)
	var out bytes.Buffer
	done := make(chan error, 1)
	go func() {
		done <- run([]string{"-listen", "127.0.0.1:0", "-url-file", urlFile, "-prefix", "/deployment/demo", "-token", "t", "-logs"}, &out, stop)
	}()

	var base string
	deadline := time.Now().Add(5 * time.Second)
	for base == "" {
		if b, err := os.ReadFile(urlFile); err == nil {
			base = string(b)
		} else if time.Now().After(deadline) {
			t.Fatal("no url file")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if !strings.HasPrefix(base, "http://127.0.0.1:") || !strings.HasSuffix(base, "/deployment/demo") {
		t.Errorf("url %q", base)
	}
	req, _ := http.NewRequest("POST", base+"/api/v2/jobs", strings.NewReader(`{"workflow":{"1":{"class_type":"PrimitiveString","inputs":{"value":"x"}},"2":{"class_type":"SaveText","inputs":{"text":["1",0],"filename_prefix":"a"}}}}`))
	req.Header.Set("Authorization", "Bearer t")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var job map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&job)
	resp.Body.Close()
	if resp.StatusCode != 201 || job["urls"].(map[string]any)["logs"] == nil {
		t.Errorf("submit: %d %v", resp.StatusCode, job)
	}

	stop <- syscall.SIGTERM
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("run: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("run did not return after SIGTERM")
	}
	if got := out.String(); got != "svc-emulator listening on "+base+"\n" {
		t.Errorf("stdout %q", got)
	}
}
