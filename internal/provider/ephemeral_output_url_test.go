package provider

import (
	"bytes"
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/ephemeral"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/svc-org/terraform-provider-svc/internal/emulator"
)

// fetchCommand is a local-exec command that writes $URL to $DEST.url and downloads it to $DEST,
// with curl or else wget; the test is skipped on a machine with neither.
func fetchCommand(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("curl"); err == nil {
		return `printf %s "$URL" > "$DEST.url" && curl -fsS -o "$DEST" "$URL"`
	}
	if _, err := exec.LookPath("wget"); err == nil {
		return `printf %s "$URL" > "$DEST.url" && wget -q -O "$DEST" "$URL"`
	}
	t.Skip("neither curl nor wget is on PATH: nothing for the local-exec provisioner to fetch with")
	return ""
}

// outputURLConfig is a job, a fresh URL of its first output, and a provisioner that fetches it
// to dest; run names the fetch, so that a new run replaces terraform_data and fetches again.
func outputURLConfig(srv *emulator.Server, command, dest, run string) string {
	return jobConfig(srv, imageWorkflowHCL(1), "") + fmt.Sprintf(`
ephemeral "svc_output_url" "png" {
  asset_id = svc_job.test.outputs[0].id
}

resource "terraform_data" "fetch" {
  triggers_replace = [svc_job.test.outputs[0].id, %[3]q]

  provisioner "local-exec" {
    command = %[1]q
    environment = {
      URL  = ephemeral.svc_output_url.png.url
      DEST = %[2]q
    }
  }
}
`, command, dest, run)
}

// checkFetchedOutput checks dest holds the job's PNG, of the size the job record gives.
func checkFetchedOutput(dest string) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		b, err := os.ReadFile(dest)
		if err != nil {
			return fmt.Errorf("the provisioner fetched nothing: %w", err)
		}
		if !bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")) {
			return fmt.Errorf("%s is not a PNG: %q", dest, b[:min(len(b), 16)])
		}
		want := s.RootModule().Resources["svc_job.test"].Primary.Attributes["outputs.0.size_bytes"]
		if got := fmt.Sprint(len(b)); got != want {
			return fmt.Errorf("%s holds %s bytes, the job output %s", dest, got, want)
		}
		return nil
	}
}

// checkFreshURLNotInState checks that the URL the provisioner was given (written to dest.url)
// was signed and still valid on clock, and that no resource in the state holds a signed URL,
// nor is any ephemeral resource in it: ephemeral results never reach the state.
func checkFreshURLNotInState(dest string, clock *testClock) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		raw, err := os.ReadFile(dest + ".url")
		if err != nil {
			return err
		}
		u, err := url.Parse(string(raw))
		if err != nil {
			return err
		}
		expires, err := strconv.ParseInt(u.Query().Get("expires"), 10, 64)
		if err != nil || u.Query().Get("sig") == "" {
			return fmt.Errorf("the provisioner got no signed URL: %q", raw)
		}
		if !time.Unix(expires, 0).After(clock.Now()) {
			return fmt.Errorf("the provisioner got a URL that expired at %s", time.Unix(expires, 0))
		}
		for name := range s.RootModule().Resources {
			if strings.HasPrefix(name, "ephemeral.") || strings.Contains(name, "svc_output_url") {
				return fmt.Errorf("the state holds %s", name)
			}
			if err := checkNoAttributeHolds(name, "sig=")(s); err != nil {
				return err
			}
		}
		return nil
	}
}

// checkNoAttributeHolds checks that no attribute of resource name holds text.
func checkNoAttributeHolds(name, text string) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		rs, ok := s.RootModule().Resources[name]
		if !ok {
			return fmt.Errorf("%s not in state", name)
		}
		for k, v := range rs.Primary.Attributes {
			if strings.Contains(v, text) {
				return fmt.Errorf("%s.%s holds %q", name, k, text)
			}
		}
		return nil
	}
}

// svc_output_url gives a URL a local-exec provisioner can fetch, fresh each time it is opened:
// hours after the job's own URLs expired, a new fetch still succeeds. The state holds no URL.
func TestAccOutputURL_provisionerFetchesFreshURL(t *testing.T) {
	t.Parallel()
	requireCLIFeature(t, featureEphemeralResources)
	command := fetchCommand(t)
	clock := &testClock{}
	srv := newTestServer(t, emulator.Options{Now: clock.Now})
	dir := t.TempDir()
	first, second := filepath.Join(dir, "first.png"), filepath.Join(dir, "second.png")
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: clock.factories(),
		Steps: []resource.TestStep{
			{
				Config: outputURLConfig(srv, command, first, "first"),
				Check: resource.ComposeAggregateTestCheckFunc(
					checkFetchedOutput(first),
					checkFreshURLNotInState(first, clock),
				),
			},
			{
				// Every URL the job record gave in step 1 has expired; the ephemeral resource
				// reads the asset record anew for a URL that works.
				PreConfig: func() { clock.Advance(2 * time.Hour) },
				Config:    outputURLConfig(srv, command, second, "second"),
				Check: resource.ComposeAggregateTestCheckFunc(
					checkFetchedOutput(second),
					checkFreshURLNotInState(second, clock),
				),
			},
		},
	})
}

// An asset that does not exist is an error naming asset_id, at plan time when the id is known.
func TestAccOutputURL_unknownAsset(t *testing.T) {
	t.Parallel()
	requireCLIFeature(t, featureEphemeralResources)
	srv := newTestServer(t, emulator.Options{})
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: providerConfig(srv, "") + `
ephemeral "svc_output_url" "x" {
  asset_id = "00000000-0000-4000-8000-000000000000"
}
`,
			ExpectError: regexp.MustCompile(`(?s)Asset not found.*00000000-0000-4000-8000-000000000000`),
		}},
	})
	if n := srv.Requests(emulator.OpGetAsset); n == 0 {
		t.Error("the asset record was never read")
	}
}

// The provider serves svc_output_url, whose url is sensitive (a credential, kept out of CLI
// output) and computed, and whose only argument is asset_id.
func TestOutputURLSchema(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	p := newWithClock("test", time.Now)().(*svcProvider)
	var names []string
	for _, newEphemeral := range p.EphemeralResources(ctx) {
		var meta ephemeral.MetadataResponse
		newEphemeral().Metadata(ctx, ephemeral.MetadataRequest{ProviderTypeName: "svc"}, &meta)
		names = append(names, meta.TypeName)
	}
	if !slices.Contains(names, "svc_output_url") {
		t.Fatalf("the provider's ephemeral resources are %v, without svc_output_url", names)
	}
	var resp ephemeral.SchemaResponse
	NewOutputURLEphemeralResource().Schema(ctx, ephemeral.SchemaRequest{}, &resp)
	for name, attr := range resp.Schema.Attributes {
		wantArgument := name == "asset_id"
		if attr.IsRequired() != wantArgument || attr.IsComputed() == wantArgument {
			t.Errorf("%s: required %v, computed %v; want only asset_id set by the configuration", name, attr.IsRequired(), attr.IsComputed())
		}
		if attr.IsSensitive() != (name == "url") {
			t.Errorf("%s: sensitive %v; want only url sensitive", name, attr.IsSensitive())
		}
	}
}
