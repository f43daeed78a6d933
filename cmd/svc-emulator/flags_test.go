package main

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/svc-org/terraform-provider-svc/internal/client"
	"github.com/svc-org/terraform-provider-svc/internal/emulator"
)

// A server started bare listens where a provider configured bare looks for it.
func TestDefaultListenIsTheProviderDefaultEndpoint(t *testing.T) {
	t.Parallel()
	cfg, err := parseArgs(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := "http://" + cfg.listen; got != client.DefaultEndpoint {
		t.Errorf("default listen %s, provider default endpoint %s", got, client.DefaultEndpoint)
	}
}

// -h prints, to stdout and without failing, every flag with a description and every field of
// the seed file.
func TestHelpDocumentsEveryFlagAndSeedField(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	if err := run([]string{"-h"}, &out, nil); err != nil {
		t.Fatalf("-h: %v", err)
	}
	help := out.String()
	newFlagSet(&config{}).VisitAll(func(f *flag.Flag) {
		if f.Usage == "" || !strings.Contains(help, "  -"+f.Name+" ") && !strings.Contains(help, "  -"+f.Name+"\n") {
			t.Errorf("-%s is not documented in -h", f.Name)
		}
	})
	seedType := reflect.TypeFor[seed]()
	for i := range seedType.NumField() {
		if tag := seedType.Field(i).Tag.Get("json"); tag != "" && !strings.Contains(help, `"`+tag+`"`) {
			t.Errorf("seed field %q is not documented in -h", tag)
		}
	}
}

func TestArgumentErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	misspelt := filepath.Join(dir, "seed.json")
	if err := os.WriteFile(misspelt, []byte(`{"registry_token": {"t": "alice"}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"unknown flag", []string{"-bogus"}, "-bogus"},
		{"pair without value", []string{"-node", "acme-upscaler"}, "is not KEY=VALUE"},
		{"pair with empty key", []string{"-publisher", "=alice"}, "is not KEY=VALUE"},
		{"misspelt seed field", []string{"-seed", misspelt}, `unknown field "registry_token"`},
		{"missing seed file", []string{"-seed", filepath.Join(dir, "absent.json")}, "seed file"},
		{"positional argument", []string{"extra"}, "unexpected arguments"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := run(tt.args, &bytes.Buffer{}, nil)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), "svc-emulator -h") {
				t.Errorf("error %v, want one containing %q and pointing at -h", err, tt.wantErr)
			}
		})
	}
}

// The registry flags and a seed file together give the registry its users, publishers, repo
// tokens and nodes: each seeded node can be claimed through the HTTP API.
func TestSeedFileAndFlagsSeedTheRegistry(t *testing.T) {
	t.Parallel()
	seedFile := filepath.Join("..", "..", "examples", "registry", "emulator-seed.json")
	base := startRun(t, "-seed", seedFile,
		"-registry-token", "jwt-bob=bob", "-publisher", "beta=bob", "-repo-token", "ghp-bob=bob", "-node", "bob-node=bob")

	tests := []struct {
		publisher, node, bearer, repoToken string
		want                               int
	}{
		{"acme", "acme-upscaler", "dev-registry-token", "dev-repo-token", http.StatusNoContent},
		{"acme", "acme-denoiser", "dev-registry-token", "dev-repo-token", http.StatusNoContent},
		{"beta", "bob-node", "jwt-bob", "ghp-bob", http.StatusNoContent},
		{"beta", "acme-upscaler", "unknown-token", "ghp-bob", http.StatusUnauthorized},
		{"acme", "bob-node", "jwt-bob", "ghp-bob", http.StatusForbidden}, // bob is not in acme
	}
	for _, tt := range tests {
		req, _ := http.NewRequest("POST", base+"/publishers/"+tt.publisher+"/nodes/"+tt.node+"/claim-my-node",
			strings.NewReader(`{"REPO_TOKEN":"`+tt.repoToken+`"}`))
		req.Header.Set("Authorization", "Bearer "+tt.bearer)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tt.want {
			t.Errorf("claim %s for %s as %s: %d, want %d", tt.node, tt.publisher, tt.bearer, resp.StatusCode, tt.want)
		}
	}
}

// startRun runs the command with args on a free port until the test ends and returns the URL
// it announces on stdout.
func startRun(t *testing.T, args ...string) string {
	t.Helper()
	stdoutR, stdoutW := io.Pipe()
	stop := make(chan os.Signal, 1)
	done := make(chan error, 1)
	go func() {
		done <- run(append([]string{"-listen", "127.0.0.1:0"}, args...), stdoutW, stop)
		stdoutW.Close()
	}()
	t.Cleanup(func() {
		stop <- syscall.SIGTERM
		if err := <-done; err != nil {
			t.Errorf("run: %v", err)
		}
	})
	line, err := bufio.NewReader(stdoutR).ReadString('\n')
	base, found := strings.CutPrefix(strings.TrimSpace(line), "svc-emulator listening on ")
	if err != nil || !found {
		t.Fatalf("run announced %q (%v)", line, err)
	}
	return base
}

// -strict selects the reference server's strict mode; without it the server is the friendly one.
func TestStrictFlagSelectsStrictMode(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want emulator.Mode
	}{
		{args: nil, want: ""},
		{args: []string{"-strict"}, want: emulator.ModeStrict},
	} {
		cfg, err := parseArgs(tc.args, nil)
		if err != nil {
			t.Fatal(err)
		}
		if cfg.opts.Mode != tc.want {
			t.Errorf("%v: mode %q, want %q", tc.args, cfg.opts.Mode, tc.want)
		}
	}
}

// The outage and restart flags arm them from the first submission: an outage from then answers
// it 503 with the Retry-After asked; a restart from then takes the server down (connections
// refused) and brings it back on the same address with the job it had.
func TestOutageAndRestartFlags(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		args      []string
		wantFirst int // status of the first submission
		wantDown  bool
	}{
		{name: "outage", args: []string{"-outage-after", "0s", "-outage-for", "1h", "-outage-retry-after", "7"}, wantFirst: http.StatusServiceUnavailable},
		{name: "restart", args: []string{"-restart-after", "200ms", "-restart-for", "300ms"}, wantFirst: http.StatusCreated, wantDown: true},
		{name: "neither", wantFirst: http.StatusCreated},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			base := startRun(t, tt.args...)
			resp, err := http.Post(base+"/api/v2/jobs", "application/json", strings.NewReader(textJob))
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tt.wantFirst {
				t.Fatalf("first submission: %d; want %d", resp.StatusCode, tt.wantFirst)
			}
			if tt.wantFirst == http.StatusServiceUnavailable && resp.Header.Get("Retry-After") != "7" {
				t.Errorf("Retry-After %q; want 7", resp.Header.Get("Retry-After"))
			}
			if !tt.wantDown {
				return
			}
			refused := false
			for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) { // polling the server, not a fixed wait
				resp, err := http.Get(base + "/api/v2/jobs/00000000-0000-0000-0000-000000000000")
				if errors.Is(err, syscall.ECONNREFUSED) {
					refused = true
					continue
				}
				if err == nil {
					resp.Body.Close()
					if refused && resp.StatusCode == http.StatusNotFound {
						return // down, then back on the same address
					}
				}
			}
			t.Fatalf("the server was refused: %v, and never came back", refused)
		})
	}
}

const textJob = `{"workflow":{"1":{"class_type":"PrimitiveString","inputs":{"value":"x"}},"2":{"class_type":"SaveText","inputs":{"text":["1",0],"filename_prefix":"a"}}}}`
