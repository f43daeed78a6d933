package provider

// Hostile input and hostile servers at the Terraform level: ids that could change the path
// requested are refused before anything is sent, and a job record pointing at another host never
// makes the provider send it anything: such links are followed on the service's own origin.

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/svc-org/terraform-provider-svc/internal/emulator"
)

// hostileIDs are ids that, put into a path unescaped, would request another path or carry a
// query; "%2e%2e" is ".." once a server decodes it.
var hostileIDs = []string{
	"../../admin", "..", ".", "a/b", "%2e%2e", "%2F", "x?y=1", "x#frag", "a b", " ",
	"11111111-1111-1111-1111-111111111111/../x", "11111111-1111-1111-1111-111111111111?x=1",
	"11111111-1111-1111-1111-111111111111 ", "11111111-1111-1111-1111-111111111111/",
}

// countedServer is an emulator behind a listener that counts every request, routed or not.
func countedServer(t *testing.T) (url string, requests *atomic.Int32) {
	t.Helper()
	srv := emulator.New(emulator.Options{})
	requests = new(atomic.Int32)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		srv.Handler().ServeHTTP(w, r)
	}))
	t.Cleanup(func() { ts.Close(); srv.Close() })
	return ts.URL, requests
}

// providerBlock is the provider block pointing at endpoint with a key the tests look for in
// what the provider writes, and one retry.
func providerBlock(endpoint string) string {
	return providerHCL(endpoint, 1, `api_key = "k-secret"`)
}

func TestAccHostile_importIDRejectedBeforeAnyRequest(t *testing.T) {
	t.Parallel()
	endpoint, requests := countedServer(t)
	steps := make([]resource.TestStep, 0, len(hostileIDs))
	for _, id := range hostileIDs {
		steps = append(steps, resource.TestStep{
			Config:        providerBlock(endpoint) + `resource "svc_job" "x" { workflow = ` + imageWorkflowHCL(1) + ` }`,
			ResourceName:  "svc_job.x",
			ImportState:   true,
			ImportStateId: id,
			ExpectError:   regexp.MustCompile(`(?s)Invalid import id.*Import svc_job by job id \(a UUID\)`),
		})
	}
	resource.Test(t, resource.TestCase{ProtoV6ProviderFactories: testAccProtoV6ProviderFactories, Steps: steps})
	if n := requests.Load(); n != 0 {
		t.Fatalf("the service received %d requests; a hostile import id must be refused before sending", n)
	}
}

func TestAccHostile_dataSourceIDRejectedBeforeAnyRequest(t *testing.T) {
	t.Parallel()
	endpoint, requests := countedServer(t)
	steps := make([]resource.TestStep, 0, len(hostileIDs))
	for _, id := range hostileIDs {
		steps = append(steps, resource.TestStep{
			Config:      providerBlock(endpoint) + fmt.Sprintf(`data "svc_job" "x" { id = %q }`, id),
			ExpectError: regexp.MustCompile(`(?s)Invalid job id.*A job id is a UUID`),
		})
	}
	resource.Test(t, resource.TestCase{ProtoV6ProviderFactories: testAccProtoV6ProviderFactories, Steps: steps})
	if n := requests.Load(); n != 0 {
		t.Fatalf("the service received %d requests; a hostile data source id must be refused before sending", n)
	}
}

// linkService answers a submission with a job record one of whose links points at another host,
// and afterwards reads of that job with a clean, canceled record (so the test can check state and
// clean up). Every request it gets is counted.
type linkService struct {
	foreign string // base URL of the other host
	badLink string // "self", "events" or "cancel"
	// badOnRead inverts the roles: the submission answers a clean, finished record, and later
	// reads the bad link.
	badOnRead bool
	submits   atomic.Int32
	mu        sync.Mutex
	paths     []string // method and path of every request after the submission
}

func (s *linkService) seen() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Join(s.paths, "\n")
}

const hostileJobID = "77777777-7777-4777-8777-777777777777"

func (s *linkService) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Svc-Request-Id", "req-link")
	links := map[string]string{
		"self":   "/api/v2/jobs/" + hostileJobID,
		"events": "/api/v2/jobs/" + hostileJobID + "/events",
		"cancel": "/api/v2/jobs/" + hostileJobID + "/cancel",
	}
	status := "succeeded"
	submit := r.Method == http.MethodPost && r.URL.Path == "/api/v2/jobs"
	if !submit {
		s.mu.Lock()
		s.paths = append(s.paths, r.Method+" "+r.URL.Path)
		s.mu.Unlock()
	}
	if submit != s.badOnRead {
		links[s.badLink] = s.foreign + "/steal/" + s.badLink
	}
	if submit {
		s.submits.Add(1)
		if !s.badOnRead {
			status = "queued"
		}
		w.WriteHeader(http.StatusCreated)
	}
	fmt.Fprintf(w, `{"id":%q,"status":%q,"created_at":"2026-01-01T00:00:00Z","expires_at":"2099-01-01T00:00:00Z",`+
		`"outputs":[],"urls":{"self":%q,"events":%q,"cancel":%q}}`, hostileJobID, status, links["self"], links["events"], links["cancel"])
}

// linkServiceJobConfig is one svc_job against a linkService at url. validate is false: the
// stand-in serves job records only, not the node classes.
func linkServiceJobConfig(url string) string {
	return providerBlock(url) + `resource "svc_job" "x" {
  validate = false
  workflow = ` + imageWorkflowHCL(1) + `
}`
}

// foreignHost records whatever reaches it.
type foreignHost struct {
	mu   sync.Mutex
	seen []string
}

func (f *foreignHost) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.seen = append(f.seen, fmt.Sprintf("%s %s Authorization=%q X-Api-Key=%q", r.Method, r.URL, r.Header.Get("Authorization"), r.Header.Get("X-Api-Key")))
	f.mu.Unlock()
	w.WriteHeader(http.StatusOK)
}

// startForeignHost starts a host the configuration does not name, closed when the test ends,
// and returns it with its URL.
func startForeignHost(t *testing.T) (*foreignHost, string) {
	t.Helper()
	f := &foreignHost{}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return f, srv.URL
}

// received returns what reached the host so far, one line per request.
func (f *foreignHost) received() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.seen)
}

// assertUntouched fails the test when anything reached the host.
func (f *foreignHost) assertUntouched(t *testing.T) {
	t.Helper()
	if seen := f.received(); len(seen) != 0 {
		t.Fatalf("the foreign host received requests:\n%s", strings.Join(seen, "\n"))
	}
}

func TestAccHostile_foreignJobLinksFollowedOnTheServiceOnly(t *testing.T) {
	t.Parallel()
	for _, bad := range []string{"self", "events"} {
		t.Run(bad, func(t *testing.T) {
			t.Parallel()
			foreign, foreignURL := startForeignHost(t)
			svc := &linkService{badLink: bad, foreign: foreignURL}
			ss := httptest.NewServer(svc)
			defer ss.Close()

			config := linkServiceJobConfig(ss.URL)
			resource.Test(t, resource.TestCase{
				ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
				Steps: []resource.TestStep{{
					Config: config,
					Check: resource.ComposeTestCheckFunc(
						resource.TestCheckResourceAttr("svc_job.x", "id", hostileJobID),
						resource.TestCheckResourceAttr("svc_job.x", "status", "succeeded"),
					),
				}},
			})
			if n := svc.submits.Load(); n != 1 {
				t.Errorf("the workflow was submitted %d times, want once", n)
			}
			// The link's path was followed, on the service's origin.
			if seen := svc.seen(); !strings.Contains(seen, "GET /steal/"+bad) {
				t.Errorf("the service did not see the rebased %s link; it saw:\n%s", bad, seen)
			}
			foreign.assertUntouched(t)
		})
	}
}

// A job whose later reads link elsewhere is refreshed through those links on the service's
// origin; plans stay empty and the other host hears nothing.
func TestAccHostile_foreignLinkOnRefreshKeepsState(t *testing.T) {
	t.Parallel()
	foreign, foreignURL := startForeignHost(t)
	svc := &linkService{badLink: "self", foreign: foreignURL, badOnRead: true}
	ss := httptest.NewServer(svc)
	defer ss.Close()
	config := linkServiceJobConfig(ss.URL)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: config, Check: resource.TestCheckResourceAttr("svc_job.x", "status", "succeeded")},
			{Config: config, PlanOnly: true},
		},
	})
	foreign.assertUntouched(t)
}

// A job read by id (data source) whose record links elsewhere is read, and nothing is sent to
// the other host.
func TestAccHostile_dataSourceForeignLinkNotFollowed(t *testing.T) {
	t.Parallel()
	foreign, foreignURL := startForeignHost(t)
	ss := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		// Running: an ended job keeps no links to follow.
		fmt.Fprintf(w, `{"id":%q,"status":"running","outputs":[],"urls":{"self":%q,"events":"/e","cancel":"/c"}}`, hostileJobID, foreignURL+"/steal")
	}))
	defer ss.Close()
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: providerBlock(ss.URL) + fmt.Sprintf(`data "svc_job" "x" { id = %q }`, hostileJobID),
			Check: resource.ComposeTestCheckFunc(
				resource.TestCheckResourceAttr("data.svc_job.x", "status", "running"),
				resource.TestCheckResourceAttr("data.svc_job.x", "urls.self", ss.URL+"/steal"),
			),
		}},
	})
	foreign.assertUntouched(t)
}

// The provider offers no switch that disables TLS verification.
func TestProviderHasNoInsecureSetting(t *testing.T) {
	var resp provider.SchemaResponse
	New("test")().Schema(context.Background(), provider.SchemaRequest{}, &resp)
	for name := range resp.Schema.Attributes {
		for _, bad := range []string{"insecure", "skip", "verify", "tls", "ca_"} {
			if strings.Contains(strings.ToLower(name), bad) {
				t.Errorf("provider attribute %q looks like a TLS verification switch", name)
			}
		}
	}
}
