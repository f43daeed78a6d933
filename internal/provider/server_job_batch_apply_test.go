package provider

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/svc-org/terraform-provider-svc/internal/emulator"
)

// jobBatchServer applies a create or an update of a batch as the framework's path does: the
// same new state, private state and diagnostics, ids and keys aside (each path submits jobs of
// its own). The layer runs over no framework at all: a call it passed on would panic.
func TestJobBatchServerAppliesAsTheFramework(t *testing.T) {
	t.Parallel()
	srv := newTestServer(t, emulator.Options{})
	state, config, proposed, private := batchStateValue(t, 3)
	typ := state.Type()
	changed := func(i int) string {
		if i == 1 {
			return "another text"
		}
		return photoOfItem(i)
	}
	addedConfig, addedProposed := withRows(t, config, proposed, batchRowsOf(5))
	removedConfig, removedProposed := withRows(t, config, proposed, batchRowsOf(2))
	changedConfig, changedProposed := withRows(t, config, proposed, batchRowsWith(3, changed))
	null := tftypes.NewValue(typ, nil)
	tests := []struct {
		name                    string
		prior, config, proposed tftypes.Value
		private                 []byte
	}{
		{"rows added", state, addedConfig, addedProposed, private},
		{"a row removed", state, removedConfig, removedProposed, private},
		{"a row changed", state, changedConfig, changedProposed, private},
		{"a new batch", null, config, withAttr(t, withAttr(t, proposed, "results", tftypes.NewValue(batchResultsTyp, tftypes.UnknownValue)), "id", tftypes.NewValue(tftypes.String, tftypes.UnknownValue)), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			framework := releasingServer{providerserver.NewProtocol6(newSvcProvider("test", time.Now))()}
			configureAt(t, framework, srv.URL(), false)
			p := newSvcProvider("test", time.Now)
			configureAt(t, providerserver.NewProtocol6(p)(), srv.URL(), false)
			layer := newJobBatchServer(nil, p.configuredData)

			apply := plannedApply(t, framework, typ, tt.prior, tt.config, tt.proposed, tt.private)
			want, err := framework.ApplyResourceChange(context.Background(), apply)
			if err != nil {
				t.Fatal(err)
			}
			got, err := layer.ApplyResourceChange(context.Background(), apply)
			if err != nil {
				t.Fatal(err)
			}
			if g, w := normalizedApply(t, typ, got), normalizedApply(t, typ, want); g != w {
				t.Errorf("the layer's apply:\n%s\nthe framework's:\n%s", g, w)
			}
		})
	}
}

// plannedApply is the apply request of the plan the framework makes of a batch.
func plannedApply(t *testing.T, framework tfprotov6.ProviderServer, typ tftypes.Type, prior, config, proposed tftypes.Value, private []byte) *tfprotov6.ApplyResourceChangeRequest {
	t.Helper()
	encodedPrior, err := tfprotov6.NewDynamicValue(typ, prior)
	if err != nil {
		t.Fatal(err)
	}
	cfg, _ := tfprotov6.NewDynamicValue(typ, config)
	prop, _ := tfprotov6.NewDynamicValue(typ, proposed)
	plan, err := framework.PlanResourceChange(context.Background(), &tfprotov6.PlanResourceChangeRequest{TypeName: jobBatchTypeName,
		PriorState: &encodedPrior, ProposedNewState: &prop, Config: &cfg, PriorPrivate: private})
	if err != nil || len(plan.Diagnostics) > 0 {
		t.Fatalf("plan: %v %v", err, diagnosticLines(plan.Diagnostics))
	}
	return &tfprotov6.ApplyResourceChangeRequest{TypeName: jobBatchTypeName, PriorState: &encodedPrior, PlannedState: plan.PlannedState,
		Config: &cfg, PlannedPrivate: plan.PlannedPrivate}
}

var uuidPattern = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)

// normalizedApply is an apply's answer as text, each UUID (a job id, an asset id, a key) as
// <uuid>, the diagnostics sorted.
func normalizedApply(t *testing.T, typ tftypes.Type, resp *tfprotov6.ApplyResourceChangeResponse) string {
	t.Helper()
	state := decodeAs(t, typ, resp.NewState).String()
	diags := diagnosticLines(resp.Diagnostics)
	slices.Sort(diags)
	text := "state: " + state + "\nprivate: " + string(resp.Private) + "\ndiagnostics: " + strings.Join(diags, "\n")
	return uuidPattern.ReplaceAllString(text, "<uuid>")
}

// rowPathProbe is the apply of a one-row batch through jobBatchServer, left hanging as its
// submission reaches the service, for counting the files a row's path visits with the coverage
// profile (see internal/README.md): SVC_ROW_PATH=base stops before the apply, SVC_ROW_PATH=submit
// as the submission arrives; the blocks counted in the second profile and not in the first are
// the path's.
func TestBatchRowPathProbe(t *testing.T) {
	phase := os.Getenv("SVC_ROW_PATH")
	if phase == "" {
		t.Skip("set SVC_ROW_PATH=base or submit, with -coverprofile")
	}
	srv := newTestServer(t, emulator.Options{})
	arrived := make(chan struct{})
	var once sync.Once
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/api/v2/jobs") {
			once.Do(func() { close(arrived) })
			<-r.Context().Done() // left hanging: the profile is written as it stands
			return
		}
		srv.Handler().ServeHTTP(w, r)
	}))
	state, config, proposed, _ := batchStateValue(t, 1)
	typ := state.Type()
	framework := releasingServer{providerserver.NewProtocol6(newSvcProvider("test", time.Now))()}
	configureAt(t, framework, front.URL, false)
	p := newSvcProvider("test", time.Now)
	configureAt(t, providerserver.NewProtocol6(p)(), front.URL, false)
	layer := newJobBatchServer(nil, p.configuredData)
	unknown := withAttr(t, withAttr(t, proposed, "results", tftypes.NewValue(batchResultsTyp, tftypes.UnknownValue)), "id", tftypes.NewValue(tftypes.String, tftypes.UnknownValue))
	apply := plannedApply(t, framework, typ, tftypes.NewValue(typ, nil), config, unknown, nil)
	if phase == "base" {
		return
	}
	go func() { _, _ = layer.ApplyResourceChange(context.Background(), apply) }()
	select {
	case <-arrived:
	case <-time.After(time.Minute):
		t.Fatal("no submission reached the service")
	}
}
