package provider

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/svc-org/terraform-provider-svc/internal/emulator"
)

// silentServer serves the reference server until silenced; from then on it accepts every
// request and never answers (until the client hangs up).
type silentServer struct {
	next   http.Handler
	silent atomic.Bool
	stop   chan struct{}
}

func (s *silentServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !s.silent.Load() {
		s.next.ServeHTTP(w, r)
		return
	}
	select {
	case <-r.Context().Done():
	case <-s.stop:
	}
}

// A refresh and a data source read against a service that accepts and never answers end at
// read_timeout, as a whole (not per attempt times retries), and the error names the setting.
// Before, each read waited 2 minutes per attempt, max_retries + 1 times.
func TestAccReadTimeout_boundsPlanAgainstASilentService(t *testing.T) {
	t.Parallel()
	emu := emulator.New(emulator.Options{})
	silent := &silentServer{next: emu.Handler(), stop: make(chan struct{})}
	ts := httptest.NewServer(silent)
	t.Cleanup(func() { close(silent.stop); ts.Close(); emu.Close() })

	config := func(extra string) string {
		return providerHCL(ts.URL, 5, `read_timeout = "1s"`) + fmt.Sprintf(`
resource "svc_job" "x" {
  workflow = %s
}
%s`, imageWorkflowHCL(1), extra)
	}
	var silencedAt time.Time
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: config("")},
			{
				PreConfig:   func() { silent.silent.Store(true); silencedAt = time.Now() },
				Config:      config(`data "svc_object_info" "x" {}`),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`(?s)did not finish within read_timeout \(1s\)`),
			},
			{PreConfig: func() { silent.silent.Store(false) }, Config: config(""), PlanOnly: true},
		},
	})
	if took := time.Since(silencedAt); took > 45*time.Second {
		t.Fatalf("the plan against a silent service took %s", took)
	}
}
