package provider

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
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

// checkFileMatchesState checks the file on disk is a PNG whose hash is the one the server holds
// for the job's output (which its records may not tell, on a server that computes hashes
// lazily), and which the job output's hash is, when the job record gave one.
func checkFileMatchesState(srv *emulator.Server, file string) resource.TestCheckFunc {
	return resource.ComposeAggregateTestCheckFunc(
		func(s *terraform.State) error {
			job := s.RootModule().Resources["svc_job.test"].Primary.Attributes
			got := s.RootModule().Resources["svc_output_file.png"].Primary.Attributes["blake3"]
			if want := srv.AssetHash(job["outputs.0.id"]); got != want {
				return fmt.Errorf("svc_output_file.png.blake3 is %s, the server's hash of asset %s is %s", got, job["outputs.0.id"], want)
			}
			if recorded := job["outputs.0.hash"]; recorded != "" && recorded != got {
				return fmt.Errorf("svc_output_file.png.blake3 is %s, the job record's hash %s", got, recorded)
			}
			return nil
		},
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
		mode   emulator.Mode
		config func(srv *emulator.Server, file string) string
	}{
		// The generous mode is pinned for the URL: the data source reads a URL signed anew at
		// each read on the strict server, so url (an argument, kept as configured) would change
		// at every plan.
		{name: "by url", mode: emulator.ModeGenerous, config: outputFileByURLConfig},
		{name: "by asset id", config: func(srv *emulator.Server, file string) string {
			return outputFileConfig(srv, file, `asset_id = svc_job.test.outputs[0].id`)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := newTestServer(t, emulator.Options{Mode: tt.mode})
			file := filepath.Join(t.TempDir(), "out", "image.png")
			resource.Test(t, resource.TestCase{
				ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
				Steps: []resource.TestStep{{
					Config: tt.config(srv, file),
					Check:  checkFileMatchesState(srv, file),
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
	config := outputFileConfig(srv, file, `asset_id = svc_job.test.outputs[0].id`)
	steps := []resource.TestStep{{Config: config}}
	for _, disturb := range tests {
		steps = append(steps, resource.TestStep{
			PreConfig: disturb,
			Config:    config,
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction("svc_output_file.png", plancheck.ResourceActionCreate),
			}},
			Check: checkFileMatchesState(srv, file),
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

// jobOutputLink reads job id's record from srv, out of band, and returns its first output's
// signed URL (absolute) and when it expires.
func jobOutputLink(t *testing.T, srv *emulator.Server, id string) (link string, expires time.Time) {
	t.Helper()
	resp, err := http.Get(srv.URL() + "/api/v2/jobs/" + id)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var rec struct {
		Outputs []struct {
			URL          string `json:"url"`
			URLExpiresAt string `json:"url_expires_at"`
		} `json:"outputs"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&rec); err != nil || len(rec.Outputs) == 0 {
		t.Fatalf("job %s: no output in its record (%v)", id, err)
	}
	base, _ := url.Parse(srv.URL())
	ref, err := url.Parse(rec.Outputs[0].URL)
	if err != nil {
		t.Fatal(err)
	}
	if expires, err = time.Parse(time.RFC3339Nano, rec.Outputs[0].URLExpiresAt); err != nil {
		t.Fatalf("url_expires_at %q: %v", rec.Outputs[0].URLExpiresAt, err)
	}
	return base.ResolveReference(ref).String(), expires
}

// The job's output URL is first shown to have expired (the service refuses it); a download by
// asset id still works, because it asks for a freshly signed URL, and it is verified: against
// the hash of the asset record, which a lazy server (the strict mode) computed a minute after
// the job ended, and against the server's own hash of the content.
func TestAccOutputFile_assetIDAfterTheURLExpired(t *testing.T) {
	t.Parallel()
	clk := &testClock{}
	srv := newTestServer(t, emulator.Options{Now: clk.Now, HashDelay: time.Minute})
	file := filepath.Join(t.TempDir(), "image.png")
	var id string
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: clk.factories(),
		Steps: []resource.TestStep{
			{
				Config: jobConfig(srv, imageWorkflowHCL(1), ""),
				Check:  captureID(&id),
			},
			{
				PreConfig: func() {
					staleURL, deadline := jobOutputLink(t, srv, id)
					clk.AdvancePast(deadline)
					clk.Advance(time.Minute)
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
				Check:  checkFileMatchesState(srv, file),
			},
		},
	})
}

// A download by asset id whose content does not hash to what the asset record says fails, and
// leaves no file, even when the configuration expects no hash.
func TestAccOutputFile_assetRecordHashMismatchLeavesNoFile(t *testing.T) {
	t.Parallel()
	srv := newTestServer(t, emulator.Options{})
	png := []byte("\x89PNG\r\n\x1a\nnot really an image")
	id := srv.PutAsset("a.png", "image/png", png)
	tampered := bytes.Repeat([]byte("x"), len(png)) // the declared size, other bytes
	srv.Inject(emulator.Fault{Op: emulator.OpAssetContent, Status: http.StatusOK, Body: string(tampered), ContentType: "image/png"})
	dir := t.TempDir()
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: providerConfig(srv, "") + fmt.Sprintf(`
resource "svc_output_file" "png" {
  asset_id = %q
  path     = %q
}
`, id, filepath.Join(dir, "a.png")),
			ExpectError: regexp.MustCompile(`(?s)hashes\s+to\s+blake3:[0-9a-f]{64},\s+but\s+the\s+service's\s+asset\s+record\s+says\s+` +
				regexp.QuoteMeta(srv.AssetHash(id))),
		}},
	})
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("a refused download left files behind: %v", entries)
	}
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
			{Config: config, Check: checkFileMatchesState(srv, file)},
			{Config: config, PlanOnly: true},
			{RefreshState: true, Check: resource.TestCheckNoResourceAttr("svc_job.test", "outputs.0.url")},
		},
	})
}
