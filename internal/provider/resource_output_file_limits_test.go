package provider

// Hostile downloads: a body served gzip-encoded is stored as served (never inflated), a body
// longer than declared or allowed is cut off, and a body that stalls after its headers is
// abandoned by the stall deadline or the create timeout, all through the real Terraform CLI.

import (
	"bytes"
	"compress/gzip"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"lukechampine.com/blake3"

	"github.com/svc-org/terraform-provider-svc/internal/client"
	"github.com/svc-org/terraform-provider-svc/internal/emulator"
)

// gzipBomb returns gzip data that inflates to inflated bytes of zeros: one member of 16 MiB of
// zeros, repeated (gzip readers read concatenated members as one stream).
func gzipBomb(t testing.TB, inflated int) []byte {
	t.Helper()
	const member = 16 << 20
	var one bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&one, gzip.BestCompression)
	if _, err := zw.Write(make([]byte, member)); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return bytes.Repeat(one.Bytes(), inflated/member)
}

func outputFileAssetConfig(srv *emulator.Server, assetID, file, extra string) string {
	return providerConfig(srv, "") + fmt.Sprintf(`
resource "svc_output_file" "f" {
  asset_id = %q
  path     = %q
  %s
}
`, assetID, file, extra)
}

// A 1 GiB gzip bomb (about 1 MB on the wire, served with Content-Encoding: gzip) is stored as
// the bytes served: the apply succeeds, the file is the compressed body, and the provider, a
// plugin process of its own here, stays small.
func TestAccOutputFile_gzipEncodedBodyStoredAsServed(t *testing.T) {
	skipUnlessAcc(t)
	bomb := gzipBomb(t, 1<<30)
	srv := newTestServer(t, emulator.Options{})
	id := srv.PutAsset("bomb.bin.gz", "application/octet-stream", bomb)
	srv.Inject(emulator.Fault{Op: emulator.OpAssetContent, Headers: map[string]string{"Content-Encoding": "gzip"}})
	sum := blake3.Sum256(bomb)

	pluginDir := buildProvider(t)
	bin := filepath.Join(pluginDir, "terraform-provider-svc")
	tf := newBinaryTerraform(t, pluginDir)
	file := filepath.Join(tf.dir, "out", "bomb.bin.gz")
	config := outputFileAssetConfig(srv, id, file, fmt.Sprintf("expected_hash = %q", "blake3:"+hex.EncodeToString(sum[:])))
	tf.writeConfig(config)
	peak := watchPeakRSSOf(bin)
	start := time.Now()
	out, err := tf.try("apply", "-auto-approve", "-input=false", "-no-color")
	rss := peak()
	t.Logf("gzip bomb of %d bytes (1 GiB inflated): apply %.1f s, provider peak RSS %.1f MiB", len(bomb), time.Since(start).Seconds(), float64(rss)/(1<<20))
	fi, statErr := os.Stat(file)
	if statErr == nil {
		t.Logf("file written: %d bytes", fi.Size())
	}
	if err != nil {
		t.Fatalf("apply failed: %v\n%s", err, out)
	}
	got, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, bomb) {
		t.Fatalf("file holds %d bytes, want the %d bytes served", len(got), len(bomb))
	}
	if rss == 0 || rss > 256<<20 {
		t.Fatalf("provider peak RSS %.1f MiB, want above 0 and under 256 MiB", float64(rss)/(1<<20))
	}
}

// An endless body stops at the size the asset record declares, or at max_size_bytes when
// nothing declares one (a url), and leaves no file behind.
func TestAccOutputFile_endlessBodyStops(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		source func(srv *emulator.Server, id string) string
		extra  string
		want   *regexp.Regexp
	}{
		{
			name:   "asset record declares the size",
			source: func(_ *emulator.Server, id string) string { return fmt.Sprintf("asset_id = %q", id) },
			want:   regexp.MustCompile(`(?s)more than the 4096 bytes the asset record declares.*Raise max_size_bytes`),
		},
		{
			name: "url bounded by max_size_bytes",
			source: func(srv *emulator.Server, id string) string {
				return fmt.Sprintf("url = %q", assetContentURL(t, srv, id))
			},
			extra: "max_size_bytes = 1048576",
			want:  regexp.MustCompile(`(?s)more than the 1048576 bytes allowed.*Raise max_size_bytes`),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := newTestServer(t, emulator.Options{})
			id := srv.PutAsset("four.bin", "application/octet-stream", make([]byte, 4096))
			srv.Inject(emulator.Fault{Op: emulator.OpAssetContent, Endless: true})
			file := filepath.Join(t.TempDir(), "endless.bin")
			resource.Test(t, resource.TestCase{
				ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
				Steps: []resource.TestStep{{
					Config: providerConfig(srv, "") + fmt.Sprintf(`
resource "svc_output_file" "f" {
  %s
  path = %q
  %s
  timeouts = { create = "60s" }
}
`, tt.source(srv, id), file, tt.extra),
					ExpectError: tt.want,
				}},
			})
			assertNoFileLeft(t, file)
		})
	}
}

// A body that stalls after its headers is abandoned after stall_timeout and the download tried
// again, resumed where it stopped; one that stalls on every attempt, or whose stall_timeout is
// longer than timeouts.create, ends at timeouts.create, which the error names. Run through the
// CLI, which applies the timeouts.
func TestAccOutputFile_stalledBodyIsAbandoned(t *testing.T) {
	skipUnlessAcc(t)
	t.Parallel()
	tests := []struct {
		name   string
		extra  string
		stalls int    // attempts that stall (0: every one)
		want   string // "" : the apply succeeds
	}{
		{name: "stall timeout: tried again", extra: `stall_timeout = "1s"`, stalls: 2},
		{name: "stall timeout on every attempt", extra: `stall_timeout = "1s"
  timeouts = { create = "4s" }`, want: "did not finish within timeouts.create (4s)"},
		{name: "create timeout", extra: `stall_timeout = "1h"
  timeouts = { create = "2s" }`, want: "did not finish within timeouts.create (2s)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := newTestServer(t, emulator.Options{})
			content := make([]byte, 1<<20)
			for i := range content {
				content[i] = byte(i % 253)
			}
			id := srv.PutAsset("stall.bin", "application/octet-stream", content)
			fault := emulator.Fault{Op: emulator.OpAssetContent, Stall: true, StallAfter: 1000}
			if tt.stalls > 0 {
				fault.Nth, fault.Times = 1, tt.stalls
			}
			srv.Inject(fault)
			tf := newTerraformCLI(t, "")
			file := filepath.Join(tf.dir, "stall.bin")
			tf.writeConfig(outputFileAssetConfig(srv, id, file, tt.extra))
			start := time.Now()
			out, err := tf.try("apply", "-auto-approve", "-input=false", "-no-color")
			elapsed := time.Since(start)
			if elapsed > 60*time.Second {
				t.Fatalf("apply took %s", elapsed)
			}
			if tt.want == "" {
				if err != nil {
					t.Fatalf("apply failed:\n%s", out)
				}
				got, err := os.ReadFile(file)
				if err != nil || !bytes.Equal(got, content) {
					t.Fatalf("file holds %d bytes (%v), not the %d of the asset", len(got), err, len(content))
				}
				if n := srv.Requests(emulator.OpAssetContent); n != tt.stalls+1 {
					t.Errorf("%d content requests, want %d (each stall tried again once)", n, tt.stalls+1)
				}
				return
			}
			if err == nil {
				t.Fatalf("apply succeeded on a stalled body:\n%s", out)
			}
			if flat := strings.Join(strings.Fields(out), " "); !strings.Contains(flat, tt.want) {
				t.Fatalf("apply output does not say %q:\n%s", tt.want, out)
			}
			assertNoFileLeft(t, file)
		})
	}
}

// assetContentURL is a signed content URL of asset id, as the svc_job data source's outputs[i].url would be.
func assetContentURL(t *testing.T, srv *emulator.Server, id string) string {
	t.Helper()
	c, err := client.New(client.Config{Endpoint: srv.URL()})
	if err != nil {
		t.Fatal(err)
	}
	a, err := c.GetAsset(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	return a.URL
}

func assertNoFileLeft(t *testing.T, file string) {
	t.Helper()
	if _, err := os.Stat(file); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("%s exists after a failed download (%v)", file, err)
	}
	entries, _ := os.ReadDir(filepath.Dir(file))
	for _, e := range entries {
		if strings.Contains(e.Name(), ".part-") {
			t.Fatalf("temporary file %s left behind", e.Name())
		}
	}
}
