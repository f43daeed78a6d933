package provider

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/svc-org/terraform-provider-svc/internal/emulator"
)

func outputFileConfig(srv *emulator.Server, file, source string) string {
	return jobConfig(srv, imageWorkflowHCL(1), "") + fmt.Sprintf(`
resource "svc_output_file" "png" {
  %s
  path          = %q
  expected_hash = svc_job.test.outputs[0].hash
}
`, source, file)
}

// outputFileByURLConfig is outputFileConfig downloading by signed URL: svc_job keeps none in
// state, so the URL is the svc_job data source's, signed at its read.
func outputFileByURLConfig(srv *emulator.Server, file string) string {
	return outputFileConfig(srv, file, `url = data.svc_job.test.outputs[0].url`) + `
data "svc_job" "test" { id = svc_job.test.id }
`
}

// checkFileMatchesState checks the file on disk is a PNG whose hash is the job output's hash.
func checkFileMatchesState(file string) resource.TestCheckFunc {
	return resource.ComposeAggregateTestCheckFunc(
		resource.TestCheckResourceAttrPair("svc_output_file.png", "blake3", "svc_job.test", "outputs.0.hash"),
		resource.TestCheckResourceAttrPair("svc_output_file.png", "size_bytes", "svc_job.test", "outputs.0.size_bytes"),
		resource.TestCheckResourceAttr("svc_output_file.png", "content_type", "image/png"),
		resource.TestMatchResourceAttr("svc_output_file.png", "sha256", regexp.MustCompile(`^[0-9a-f]{64}$`)),
		func(*terraform.State) error {
			b, err := os.ReadFile(file)
			if err != nil {
				return err
			}
			if !bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")) {
				return fmt.Errorf("%s is not a PNG", file)
			}
			return checkDocumentedFileMode(file)
		},
	)
}

// checkDocumentedFileMode checks a written file has the mode the schemas document, 0644
// whatever the umask (the literal here, not the writer's constant, so a change to it is seen).
func checkDocumentedFileMode(file string) error {
	fi, err := os.Stat(file)
	if err != nil {
		return err
	}
	if got := fi.Mode().Perm(); got != 0o644 {
		return fmt.Errorf("%s has mode %v, want -rw-r--r-- (0644)", file, got)
	}
	return nil
}

func TestAccOutputFile_sources(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		config func(srv *emulator.Server, file string) string
	}{
		{name: "by url", config: outputFileByURLConfig},
		{name: "by asset id", config: func(srv *emulator.Server, file string) string {
			return outputFileConfig(srv, file, `asset_id = svc_job.test.outputs[0].id`)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := newTestServer(t, emulator.Options{})
			file := filepath.Join(t.TempDir(), "out", "image.png")
			resource.Test(t, resource.TestCase{
				ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
				Steps: []resource.TestStep{{
					Config: tt.config(srv, file),
					Check:  checkFileMatchesState(file),
				}},
				CheckDestroy: func(*terraform.State) error {
					if _, err := os.Stat(file); !os.IsNotExist(err) {
						return fmt.Errorf("destroy left %s behind: %w", file, err)
					}
					return nil
				},
			})
		})
	}
}

func TestAccOutputFile_hashMismatchLeavesNoFile(t *testing.T) {
	t.Parallel()
	srv := newTestServer(t, emulator.Options{})
	dir := t.TempDir()
	file := filepath.Join(dir, "image.png")
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: jobConfig(srv, imageWorkflowHCL(1), "") + fmt.Sprintf(`
resource "svc_output_file" "png" {
  asset_id      = svc_job.test.outputs[0].id
  path          = %q
  expected_hash = "blake3:%064d"
}
`, file, 0),
			ExpectError: regexp.MustCompile(`(?s)hashes\s+to\s+blake3:[0-9a-f]{64},\s+expected\s+blake3:0{64}`),
		}},
	})
	entries, _ := os.ReadDir(dir)
	if len(entries) != 0 {
		t.Fatalf("a failed download left files behind: %v", entries)
	}
}

func TestAccOutputFile_driftDownloadsAgain(t *testing.T) {
	t.Parallel()
	srv := newTestServer(t, emulator.Options{})
	file := filepath.Join(t.TempDir(), "image.png")
	tests := []func(){
		func() { _ = os.Remove(file) },
		func() { _ = os.WriteFile(file, []byte("edited"), 0o644) },
	}
	steps := []resource.TestStep{{Config: outputFileByURLConfig(srv, file)}}
	for _, disturb := range tests {
		steps = append(steps, resource.TestStep{
			PreConfig: disturb,
			Config:    outputFileByURLConfig(srv, file),
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction("svc_output_file.png", plancheck.ResourceActionCreate),
			}},
			Check: checkFileMatchesState(file),
		})
	}
	resource.Test(t, resource.TestCase{ProtoV6ProviderFactories: testAccProtoV6ProviderFactories, Steps: steps})
}

// TestAccOutputFile_largeDownloadStreams downloads 150 MiB and samples the heap of this process
// (which holds the provider, the test harness and the reference server, whose large blob is
// generated as it is read) during the apply: the peak bounds what the provider held.
func TestAccOutputFile_largeDownloadStreams(t *testing.T) {
	// Not parallel: other tests' allocations would blur the figure.
	const size = 150 << 20
	srv := newTestServer(t, emulator.Options{})
	id, hash := srv.PutLargeAsset("big.bin", "application/octet-stream", size)
	file := filepath.Join(t.TempDir(), "big.bin")

	runtime.GC()
	var peak atomic.Uint64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		var m runtime.MemStats
		for {
			runtime.ReadMemStats(&m)
			if m.HeapInuse > peak.Load() {
				peak.Store(m.HeapInuse)
			}
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: providerConfig(srv, "") + fmt.Sprintf(`
resource "svc_output_file" "big" {
  asset_id      = %q
  expected_hash = %q
  path          = %q
}
`, id, hash, file),
			Check: resource.ComposeAggregateTestCheckFunc(
				resource.TestCheckResourceAttr("svc_output_file.big", "size_bytes", fmt.Sprint(size)),
				resource.TestCheckResourceAttr("svc_output_file.big", "blake3", hash),
			),
		}},
	})
	close(stop)
	<-sampled
	const limit = 64 << 20
	t.Logf("peak heap in use while downloading %d MiB: %.1f MiB", size>>20, float64(peak.Load())/(1<<20))
	if peak.Load() > limit {
		t.Fatalf("peak heap %d MiB exceeds %d MiB: the download is not streamed", peak.Load()>>20, limit>>20)
	}
}

// A v1 output is fetched through /api/view, which redirects to a storage host on another
// origin: the file arrives, and that host never sees a credential.
func TestAccOutputFile_v1ViewSendsNoCredentialToStorage(t *testing.T) {
	t.Parallel()
	srv := newTestServer(t, emulator.Options{Token: v1AccKey})
	file := filepath.Join(t.TempDir(), "view.png")
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: promptConfig(srv, imageWorkflowHCL(1), "") + fmt.Sprintf(`
resource "svc_output_file" "png" {
  view = {
    filename  = svc_prompt.test.outputs[0].filename
    subfolder = svc_prompt.test.outputs[0].subfolder
    type      = svc_prompt.test.outputs[0].type
  }
  path = %q
}
`, file),
			Check: resource.ComposeAggregateTestCheckFunc(
				resource.TestCheckResourceAttr("svc_output_file.png", "content_type", "image/png"),
				func(*terraform.State) error {
					b, err := os.ReadFile(file)
					if err != nil || !bytes.HasPrefix(b, []byte("\x89PNG")) {
						return fmt.Errorf("%s is not a PNG: %w", file, err)
					}
					seen := srv.StorageRequestHeaders()
					if len(seen) == 0 {
						return fmt.Errorf("the storage host saw no request: the redirect was not followed")
					}
					for _, h := range seen {
						for _, name := range []string{"X-Api-Key", "Authorization", "Cookie"} {
							if h.Get(name) != "" {
								return fmt.Errorf("the storage host received %s", name)
							}
						}
					}
					return nil
				},
			),
		}},
	})
}

// An output URL the service signed (read through the svc_job data source: the resource keeps
// none) is first shown to have expired (the service refuses it); a download by asset id still
// works, because it asks for a freshly signed URL.
func TestAccOutputFile_assetIDAfterTheURLExpired(t *testing.T) {
	t.Parallel()
	clk := &testClock{}
	srv := newTestServer(t, emulator.Options{Now: clk.Now})
	file := filepath.Join(t.TempDir(), "image.png")
	var staleURL, expiresAt string
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: clk.factories(),
		Steps: []resource.TestStep{
			{
				Config: jobConfig(srv, imageWorkflowHCL(1), "") + `
data "svc_job" "test" { id = svc_job.test.id }
`,
				Check: func(s *terraform.State) error {
					attrs := s.RootModule().Resources["data.svc_job.test"].Primary.Attributes
					staleURL, expiresAt = attrs["outputs.0.url"], attrs["outputs.0.url_expires_at"]
					return nil
				},
			},
			{
				PreConfig: func() {
					deadline, err := time.Parse(time.RFC3339Nano, expiresAt)
					if err != nil {
						t.Fatalf("url_expires_at %q: %v", expiresAt, err)
					}
					clk.AdvancePast(deadline)
					resp, err := http.Get(staleURL)
					if err != nil {
						t.Fatal(err)
					}
					resp.Body.Close()
					if resp.StatusCode != http.StatusForbidden {
						t.Fatalf("the old output URL answered %d; want it expired (403) for this test to mean anything", resp.StatusCode)
					}
				},
				Config: outputFileConfig(srv, file, `asset_id = svc_job.test.outputs[0].id`),
				Check:  checkFileMatchesState(file),
			},
		},
	})
}

// outputs[i].hash may be null until the service computed it. A finished svc_job keeps the null
// (it is not read again); the svc_job data source, read at each plan, sees the hash arrive. When
// it arrives after the download and equals the file's hash, the expectation is recorded in place:
// no replacement, nothing downloaded again.
func TestAccOutputFile_lateHashUpdatesInPlace(t *testing.T) {
	t.Parallel()
	srv := newTestServer(t, emulator.Options{LazyHashes: true})
	file := filepath.Join(t.TempDir(), "image.png")
	config := jobConfig(srv, imageWorkflowHCL(1), "") + fmt.Sprintf(`
data "svc_job" "test" { id = svc_job.test.id }

resource "svc_output_file" "png" {
  asset_id      = svc_job.test.outputs[0].id
  path          = %q
  expected_hash = data.svc_job.test.outputs[0].hash
}
`, file)
	var downloads int
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: config,
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckNoResourceAttr("svc_job.test", "outputs.0.hash"),
					resource.TestCheckNoResourceAttr("svc_output_file.png", "expected_hash"),
					func(*terraform.State) error { downloads = srv.Requests(emulator.OpAssetContent); return nil },
				),
			},
			{
				PreConfig: srv.ComputeHashes,
				Config:    config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("svc_output_file.png", plancheck.ResourceActionUpdate),
					plancheck.ExpectKnownValue("svc_output_file.png", tfjsonpath.New("blake3"), knownvalue.StringRegexp(blake3HashPattern)),
				}},
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttrPair("svc_output_file.png", "expected_hash", "svc_output_file.png", "blake3"),
					resource.TestCheckNoResourceAttr("svc_job.test", "outputs.0.hash"), // settled: not read again
					func(*terraform.State) error {
						if n := srv.Requests(emulator.OpAssetContent); n != downloads {
							return fmt.Errorf("the file was downloaded again (%d content requests, was %d)", n, downloads)
						}
						return nil
					},
				),
			},
			{Config: config, PlanOnly: true},
		},
	})
}

// A service that signs a new URL on every read: svc_job keeps no URL, so neither svc_job nor a
// file downloaded by its asset id shows a change at every plan.
func TestAccOutputFile_resignedURLIsNoChange(t *testing.T) {
	t.Parallel()
	srv := newTestServer(t, emulator.Options{ResignOnRead: true})
	file := filepath.Join(t.TempDir(), "image.png")
	config := outputFileConfig(srv, file, `asset_id = svc_job.test.outputs[0].id`)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: config, Check: checkFileMatchesState(file)},
			{Config: config, PlanOnly: true},
			{RefreshState: true, Check: resource.TestCheckNoResourceAttr("svc_job.test", "outputs.0.url")},
		},
	})
}
