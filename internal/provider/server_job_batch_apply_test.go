package provider

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/svc-org/terraform-provider-svc/internal/emulator"
)

// batchApplyServer answers a create and an update of svc_job_batch as the framework does: the
// same state (but for what the service and the provider draw anew: ids and keys), the same
// diagnostics; and, for rows it cannot read, the same error and no state.
func TestBatchApplyServerAnswersAsTheFramework(t *testing.T) {
	t.Parallel()
	srv := newTestServer(t, emulator.Options{})
	framework := releasingServer{providerserver.NewProtocol6(newSvcProvider("test", time.Now))()}
	p := newSvcProvider("test", time.Now)
	configureAt(t, releasingServer{providerserver.NewProtocol6(p)()}, srv.URL(), false)
	configureAt(t, framework, srv.URL(), false)
	layered := newBatchApplyServer(nil, p.configuredData) // a call it passed on would panic
	typ := layered.(*batchApplyServer).typ
	template := `{"6":{"class_type":"SaveText","inputs":{"filename_prefix":"row","text":"template"}}}`
	rows := func(changed string) tftypes.Value {
		return batchTextRows(map[string]string{"r0": "a", "r1": changed, "r2": "c"})
	}
	create := batchPlanned(t, framework, typ, tftypes.Value{}, batchConfigValue(typ, template, rows("b")))
	got, want := applyBoth(t, layered, framework, typ, create, create)
	update := batchPlanned(t, framework, typ, want, batchConfigValue(typ, template, rows("B")))
	updateGot := batchPlanned(t, framework, typ, got, batchConfigValue(typ, template, rows("B")))
	got, _ = applyBoth(t, layered, framework, typ, updateGot, update)
	if submits := srv.Requests(emulator.OpSubmitJob); submits != 2*(3+1) {
		t.Errorf("%d submissions, want 8: three rows created and one updated, by each path", submits)
	}
	if attrs, _ := objectAttrs(got); !attrs["succeeded"].Equal(tftypes.NewValue(tftypes.Number, 3)) {
		t.Errorf("succeeded = %v after the update, want 3", attrs["succeeded"])
	}

	bad := create
	bad.config = batchConfigValue(typ, template, batchTextRowsOn("9", map[string]string{"r0": "a"}))
	bad.planned = withAttr(bad.planned, "rows", batchTextRowsOn("9", map[string]string{"r0": "a"}))
	if got, _ := applyBoth(t, layered, framework, typ, bad, bad); !got.IsNull() {
		t.Errorf("a create whose rows cannot be read left state %v", got)
	}
}

// batchCall is an apply's input: prior state (nil on create), configuration and plan.
type batchCall struct {
	prior, config, planned tftypes.Value
}

// applyBoth applies in through the layer and want through the framework and compares their
// answers; it returns the two new states.
func applyBoth(t *testing.T, layered, framework tfprotov6.ProviderServer, typ tftypes.Type, in, want batchCall) (got, wanted tftypes.Value) {
	t.Helper()
	gotState, gotDiags := applyBatch(t, layered, typ, in)
	wantState, wantDiags := applyBatch(t, framework, typ, want)
	t.Logf("diagnostics: %q", gotDiags)
	if fmt.Sprint(gotDiags) != fmt.Sprint(wantDiags) {
		t.Errorf("diagnostics %q, the framework's %q", gotDiags, wantDiags)
	}
	if a, b := withoutDrawn(gotState), withoutDrawn(wantState); !a.Equal(b) {
		t.Errorf("state\n%v\nthe framework's\n%v", a, b)
	}
	return gotState, wantState
}

func applyBatch(t *testing.T, s tfprotov6.ProviderServer, typ tftypes.Type, in batchCall) (tftypes.Value, []string) {
	t.Helper()
	prior := in.prior
	if prior.Type() == nil {
		prior = tftypes.NewValue(typ, nil)
	}
	resp, err := s.ApplyResourceChange(context.Background(), &tfprotov6.ApplyResourceChangeRequest{TypeName: jobBatchTypeName,
		PriorState: dynamic(t, typ, prior), PlannedState: dynamic(t, typ, in.planned), Config: dynamic(t, typ, in.config)})
	if err != nil {
		t.Fatal(err)
	}
	state, err := resp.NewState.Unmarshal(typ)
	if err != nil {
		t.Fatal(err)
	}
	var diags []string
	for _, d := range resp.Diagnostics {
		diags = append(diags, d.Severity.String()+": "+d.Summary+": "+d.Detail)
	}
	return state, diags
}

// batchPlanned is the framework's plan of config over prior (nil: a create).
func batchPlanned(t *testing.T, framework tfprotov6.ProviderServer, typ tftypes.Type, prior, config tftypes.Value) batchCall {
	t.Helper()
	if prior.Type() == nil {
		prior = tftypes.NewValue(typ, nil)
	}
	proposed := config
	if !prior.IsNull() {
		attrs, _ := objectAttrs(config)
		held, _ := objectAttrs(prior)
		merged := mapsClone(attrs)
		for _, name := range []string{"id", "results", "succeeded", "failed", "max_in_flight", "cancel_on_destroy", "rerun_failed"} {
			merged[name] = held[name]
		}
		proposed = tftypes.NewValue(typ, merged)
	}
	resp, err := framework.PlanResourceChange(context.Background(), &tfprotov6.PlanResourceChangeRequest{TypeName: jobBatchTypeName,
		PriorState: dynamic(t, typ, prior), ProposedNewState: dynamic(t, typ, proposed), Config: dynamic(t, typ, config)})
	if err != nil || len(resp.Diagnostics) > 0 {
		t.Fatalf("plan: %v %v", err, summaries(resp.Diagnostics))
	}
	planned, err := resp.PlannedState.Unmarshal(typ)
	if err != nil {
		t.Fatal(err)
	}
	if prior.IsNull() {
		prior = tftypes.Value{}
	}
	return batchCall{prior: prior, config: config, planned: planned}
}

func batchConfigValue(typ tftypes.Type, template string, rows tftypes.Value) tftypes.Value {
	values := map[string]tftypes.Value{}
	for name, at := range typ.(tftypes.Object).AttributeTypes {
		values[name] = tftypes.NewValue(at, nil)
	}
	values["workflow"] = tftypes.NewValue(tftypes.String, template)
	values["rows"] = rows
	return tftypes.NewValue(typ, values)
}

// batchTextRows is a rows value whose rows set node 6's text.
func batchTextRows(texts map[string]string) tftypes.Value { return batchTextRowsOn("6", texts) }

func batchTextRowsOn(node string, texts map[string]string) tftypes.Value {
	inputs := tftypes.Object{AttributeTypes: map[string]tftypes.Type{"text": tftypes.String}}
	rowType := tftypes.Object{AttributeTypes: map[string]tftypes.Type{node: inputs}}
	values := map[string]tftypes.Value{}
	for key, text := range texts {
		values[key] = tftypes.NewValue(rowType, map[string]tftypes.Value{node: tftypes.NewValue(inputs,
			map[string]tftypes.Value{"text": tftypes.NewValue(tftypes.String, text)})})
	}
	return tftypes.NewValue(tftypes.Map{ElementType: rowType}, values)
}

func withAttr(v tftypes.Value, name string, attr tftypes.Value) tftypes.Value {
	attrs, _ := objectAttrs(v)
	attrs = mapsClone(attrs)
	attrs[name] = attr
	return tftypes.NewValue(v.Type(), attrs)
}

func dynamic(t *testing.T, typ tftypes.Type, v tftypes.Value) *tfprotov6.DynamicValue {
	t.Helper()
	d, err := tfprotov6.NewDynamicValue(typ, v)
	if err != nil {
		t.Fatal(err)
	}
	return &d
}

// withoutDrawn is a batch state with what each apply draws anew blanked: the batch id, the
// rows' job ids and keys, and their outputs' asset ids.
func withoutDrawn(state tftypes.Value) tftypes.Value {
	attrs, ok := objectAttrs(state)
	if !ok {
		return state
	}
	attrs = mapsClone(attrs)
	attrs["id"] = tftypes.NewValue(tftypes.String, nil)
	results := heldResults(attrs["results"])
	for key, v := range results {
		if row, ok := batchRowOf(v); ok {
			row.ID, row.Key = "", ""
			for i := range row.Outputs {
				row.Outputs[i].ID = ""
			}
			results[key] = row.value()
		}
	}
	if attrs["results"].IsKnown() && !attrs["results"].IsNull() {
		attrs["results"] = tftypes.NewValue(batchResultsTyp, results)
	}
	return tftypes.NewValue(state.Type(), attrs)
}
