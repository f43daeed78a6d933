package provider

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
	"github.com/vmihailenco/msgpack/v5"
)

// pluginProtocolMaxMessage is the largest message the plugin protocol carries between Terraform
// (or OpenTofu) and this provider. The provider's gRPC server (terraform-plugin-go's tf6server)
// sets its receive and send limits to 256 MiB; Terraform 1.11 and 1.15 and OpenTofu 1.12 dial
// providers through go-plugin 1.7, whose client allows math.MaxInt32 each way (only
// GetProviderSchema is capped lower, at 64 MiB, by the CLIs themselves). So 256 MiB binds.
const pluginProtocolMaxMessage = 256 << 20

// batchStateValue is a finished svc_job_batch of n rows, one output each, as state holds it
// (its value and its private state, as Terraform sends them), the configuration that leads to
// it, and the new state Terraform proposes for that configuration (the state with the
// configured rows, which are write-only).
func batchStateValue(t testing.TB, n int) (state, config, proposed tftypes.Value, private []byte) {
	t.Helper()
	ctx := context.Background()
	var sresp resource.SchemaResponse
	(&jobBatchResource{}).Schema(ctx, resource.SchemaRequest{}, &sresp)
	typ := sresp.Schema.Type().TerraformType(ctx).(tftypes.Object)
	results, book := make(map[string]tftypes.Value, n), batchBook{}
	template := `{"6":{"class_type":"SaveText","inputs":{"filename_prefix":"row","text":"template"}}}`
	hashes, err := batchRowInputs(template, batchRowsOf(n))
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		key := fmt.Sprintf("sku-%05d", i)
		row := &batchRow{ID: fmt.Sprintf("8d3f1c2e-0000-4000-8000-%012d", i), Status: "succeeded",
			Key: fmt.Sprintf("5b1e7a90-0000-4000-8000-%012d", i), InputHash: hashes[i].hash,
			Outputs: []batchOutput{{ID: fmt.Sprintf("a0c4e7f1-0000-4000-8000-%012d", i), Name: fmt.Sprintf("row_%05d_.txt", i), NodeID: "6",
				SizeBytes: 42, Hash: "blake3:af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262"}}}
		results[key], book[key] = row.value(), row.book()
	}
	values := map[string]tftypes.Value{}
	for name, at := range typ.AttributeTypes {
		values[name] = tftypes.NewValue(at, nil)
	}
	values["workflow"] = tftypes.NewValue(tftypes.String, template)
	configValues := mapsClone(values)
	configValues["rows"] = batchRowsOf(n)
	values["id"] = tftypes.NewValue(tftypes.String, "0b0e6c0e-6a43-4c1b-9d61-3b0f3f1e2c11")
	values["max_in_flight"] = tftypes.NewValue(tftypes.Number, 16)
	values["cancel_on_destroy"] = tftypes.NewValue(tftypes.Bool, true)
	values["rerun_failed"] = tftypes.NewValue(tftypes.Bool, false)
	values["validate"] = tftypes.NewValue(tftypes.Bool, defaultValidate)
	values["results"] = tftypes.NewValue(batchResultsTyp, results)
	values["succeeded"] = tftypes.NewValue(tftypes.Number, n)
	values["failed"] = tftypes.NewValue(tftypes.Number, 0)
	raw, err := json.Marshal(book)
	if err == nil {
		private, err = json.Marshal(map[string][]byte{batchBookKey: raw}) // the framework's private state
	}
	if err != nil {
		t.Fatal(err)
	}
	proposedValues := mapsClone(values)
	proposedValues["rows"] = configValues["rows"]
	return tftypes.NewValue(typ, values), tftypes.NewValue(typ, configValues), tftypes.NewValue(typ, proposedValues), private
}

// noProviderData is a provider not configured: the framework's resource then has no data
// either, and checks nothing against the service.
func noProviderData() *providerData { return nil }

// batchRowsOf is the rows value of batchStateValue, as a for expression gives it (an object).
func batchRowsOf(n int) tftypes.Value {
	return batchRowsWith(n, photoOfItem)
}

func photoOfItem(i int) string { return fmt.Sprintf("a product photo of item %d on white", i) }

// batchRowsWith is n rows as a for expression gives them, row i's text text(i).
func batchRowsWith(n int, text func(i int) string) tftypes.Value {
	nodeType := tftypes.Object{AttributeTypes: map[string]tftypes.Type{"6": tftypes.Object{AttributeTypes: map[string]tftypes.Type{"text": tftypes.String}}}}
	rowTypes, rowValues := map[string]tftypes.Type{}, map[string]tftypes.Value{}
	for i := range n {
		key := fmt.Sprintf("sku-%05d", i)
		rowTypes[key] = nodeType
		rowValues[key] = tftypes.NewValue(nodeType, map[string]tftypes.Value{"6": tftypes.NewValue(nodeType.AttributeTypes["6"],
			map[string]tftypes.Value{"text": tftypes.NewValue(tftypes.String, text(i))})})
	}
	return tftypes.NewValue(tftypes.Object{AttributeTypes: rowTypes}, rowValues)
}

// withAttr is the object v with its attribute name set to attr.
func withAttr(t testing.TB, v tftypes.Value, name string, attr tftypes.Value) tftypes.Value {
	t.Helper()
	var attrs map[string]tftypes.Value
	if err := v.As(&attrs); err != nil {
		t.Fatal(err)
	}
	attrs = mapsClone(attrs)
	attrs[name] = attr
	return tftypes.NewValue(v.Type(), attrs)
}

// withRows is a batch's configuration and proposed new state with the rows set to rows.
func withRows(t testing.TB, config, proposed, rows tftypes.Value) (tftypes.Value, tftypes.Value) {
	return withAttr(t, config, "rows", rows), withAttr(t, proposed, "rows", rows)
}

// withRowRunning is a batch's state with row key's job still running.
func withRowRunning(t testing.TB, state tftypes.Value, key string) tftypes.Value {
	t.Helper()
	var attrs, results map[string]tftypes.Value
	if state.As(&attrs) != nil || attrs["results"].As(&results) != nil {
		t.Fatal("not a batch state")
	}
	row, ok := batchRowOf(results[key], batchBookRow{})
	if !ok {
		t.Fatalf("no row %s", key)
	}
	row.Status, row.Outputs = "running", nil
	results = mapsClone(results)
	results[key] = row.value()
	attrs = mapsClone(attrs)
	attrs["results"] = tftypes.NewValue(batchResultsTyp, results)
	attrs["succeeded"] = tftypes.NewValue(tftypes.Number, len(results)-1)
	return tftypes.NewValue(state.Type(), attrs)
}

func mapsClone(m map[string]tftypes.Value) map[string]tftypes.Value {
	out := make(map[string]tftypes.Value, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// A finished batch of 10,000 rows passes the plugin protocol's message limit with room to
// spare, in the largest message that carries it (a plan: prior state, proposed new state and
// configuration in, planned state out), and its plan keeps it as it is without a request.
func TestBatchState_10000RowsFitThePluginProtocol(t *testing.T) {
	t.Parallel()
	rows := 10000
	if testing.Short() {
		rows = 1000
	}
	state, config, proposed, private := batchStateValue(t, rows)
	typ := state.Type()
	encoded, err := tfprotov6.NewDynamicValue(typ, state)
	if err != nil {
		t.Fatal(err)
	}
	perRow := len(encoded.MsgPack) / rows
	cfgSize, err := tfprotov6.NewDynamicValue(typ, config)
	if err != nil {
		t.Fatal(err)
	}
	// A plan request carries the state twice, the configuration twice (the proposed new state
	// holds the configured rows) and the private state once.
	if planMsg := 2*len(encoded.MsgPack) + 2*len(cfgSize.MsgPack) + len(private); planMsg > pluginProtocolMaxMessage/8 {
		t.Fatalf("a plan of %d rows carries %d bytes (%d per row in state); want it under an eighth of the %d limit", rows, planMsg, perRow, pluginProtocolMaxMessage)
	}
	t.Logf("%d rows: %d bytes of state in the protocol (%d per row) and %d of private state, limit %d", rows, len(encoded.MsgPack), perRow, len(private), pluginProtocolMaxMessage)

	server := NewProtocol6Server("test")()
	cfg, err := tfprotov6.NewDynamicValue(typ, config)
	if err != nil {
		t.Fatal(err)
	}
	prop := proposedAsTerraformSends(t, encoded, proposed)
	start := time.Now()
	resp, err := server.PlanResourceChange(context.Background(), &tfprotov6.PlanResourceChangeRequest{
		TypeName: "svc_job_batch", PriorState: &encoded, ProposedNewState: &prop, Config: &cfg, PriorPrivate: private,
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range resp.Diagnostics {
		t.Errorf("plan: %s: %s", d.Summary, d.Detail)
	}
	planned, err := resp.PlannedState.Unmarshal(typ)
	if err != nil {
		t.Fatal(err)
	}
	if !planned.Equal(state) {
		t.Fatal("the plan of a finished batch changes it")
	}
	t.Logf("plan of %d finished rows: %s in the provider", rows, time.Since(start))
	readResp, err := server.ReadResource(context.Background(), &tfprotov6.ReadResourceRequest{TypeName: "svc_job_batch", CurrentState: &encoded})
	if err != nil {
		t.Fatal(err)
	}
	if len(readResp.Diagnostics) > 0 || len(readResp.NewState.MsgPack) > pluginProtocolMaxMessage/8 {
		t.Fatalf("read: %v, %d bytes", readResp.Diagnostics, len(readResp.NewState.MsgPack))
	}
}

// jobBatchServer answers as the framework does, for a settled batch: refresh, a plan that
// changes nothing or changes rows only, the plan of its destruction and the destruction.
func TestJobBatchServerAnswersAsTheFramework(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	state, config, proposed, private := batchStateValue(t, 3)
	typ := state.Type()
	running := withRowRunning(t, state, "sku-00000")
	text := func(i int) string {
		if i == 1 {
			return "another text"
		}
		return photoOfItem(i)
	}
	changedConfig, changedProposed := withRows(t, config, proposed, batchRowsWith(3, text))
	addedConfig, addedProposed := withRows(t, config, proposed, batchRowsOf(5))
	removedConfig, removedProposed := withRows(t, config, proposed, batchRowsOf(2))
	tests := []struct {
		name                    string
		state, config, proposed tftypes.Value
		warned                  bool
	}{
		{"nothing changes", state, config, proposed, false},
		{"a row changes", state, changedConfig, changedProposed, false},
		{"rows added", state, addedConfig, addedProposed, false},
		{"a row removed", state, removedConfig, removedProposed, false},
		{"a row still running", running, config, withAttr(t, running, "rows", batchRowsOf(3)), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			encoded, err := tfprotov6.NewDynamicValue(typ, tt.state)
			if err != nil {
				t.Fatal(err)
			}
			cfg, _ := tfprotov6.NewDynamicValue(typ, tt.config)
			prop := proposedAsTerraformSends(t, encoded, tt.proposed)
			req := &tfprotov6.PlanResourceChangeRequest{TypeName: jobBatchTypeName, PriorState: &encoded, ProposedNewState: &prop, Config: &cfg, PriorPrivate: private}
			framework, err := providerserver.NewProtocol6(newSvcProvider("test", time.Now))().PlanResourceChange(ctx, req)
			if err != nil || (len(framework.Diagnostics) > 0) != tt.warned {
				t.Fatalf("framework: %v %+v", err, framework.Diagnostics)
			}
			// Over no framework at all: a call it passed on would panic.
			ours, err := newJobBatchServer(nil, noProviderData).PlanResourceChange(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			assertSamePlan(t, typ, ours, framework)
		})
	}
	encoded, _ := tfprotov6.NewDynamicValue(typ, state)
	null, _ := tfprotov6.NewDynamicValue(typ, tftypes.NewValue(typ, nil))
	framework := providerserver.NewProtocol6(newSvcProvider("test", time.Now))()
	for _, s := range []tfprotov6.ProviderServer{framework, newJobBatchServer(nil, noProviderData)} {
		destroyPlan, err := s.PlanResourceChange(ctx, &tfprotov6.PlanResourceChangeRequest{TypeName: jobBatchTypeName, PriorState: &encoded, ProposedNewState: &null, Config: &null, PriorPrivate: private})
		if err != nil || len(destroyPlan.Diagnostics) > 0 || !decodeAs(t, typ, destroyPlan.PlannedState).IsNull() {
			t.Fatalf("%T: destroy plan %v %+v", s, err, destroyPlan)
		}
		read, err := s.ReadResource(ctx, &tfprotov6.ReadResourceRequest{TypeName: jobBatchTypeName, CurrentState: &encoded, Private: private})
		if err != nil || len(read.Diagnostics) > 0 || !decodeAs(t, typ, read.NewState).Equal(state) || !bytes.Equal(read.Private, private) {
			t.Fatalf("%T: read %v %+v", s, err, read)
		}
		destroy, err := s.ApplyResourceChange(ctx, &tfprotov6.ApplyResourceChangeRequest{TypeName: jobBatchTypeName, PriorState: &encoded, PlannedState: &null, Config: &null, PlannedPrivate: private})
		if err != nil || len(destroy.Diagnostics) > 0 || !decodeAs(t, typ, destroy.NewState).IsNull() {
			t.Fatalf("%T: destroy %v %+v", s, err, destroy)
		}
	}
}

// assertSamePlan fails unless two plans are the same: planned state and private state, what
// must be replaced, and diagnostics.
func assertSamePlan(t *testing.T, typ tftypes.Type, ours, framework *tfprotov6.PlanResourceChangeResponse) {
	t.Helper()
	if got, want := decodeAs(t, typ, ours.PlannedState), decodeAs(t, typ, framework.PlannedState); !got.Equal(want) {
		t.Errorf("planned state:\n%v\nthe framework's:\n%v", got, want)
	}
	if !bytes.Equal(ours.PlannedPrivate, framework.PlannedPrivate) {
		t.Errorf("planned private %q, the framework's %q", ours.PlannedPrivate, framework.PlannedPrivate)
	}
	if len(ours.RequiresReplace) != len(framework.RequiresReplace) {
		t.Errorf("requires replace %v, the framework's %v", ours.RequiresReplace, framework.RequiresReplace)
	}
	if got, want := diagnosticLines(ours.Diagnostics), diagnosticLines(framework.Diagnostics); !slices.Equal(got, want) {
		t.Errorf("diagnostics %q, the framework's %q", got, want)
	}
}

// diagnosticLines is each diagnostic's severity, summary and detail, one line each.
func diagnosticLines(diags []*tfprotov6.Diagnostic) []string {
	var lines []string
	for _, d := range diags {
		lines = append(lines, fmt.Sprintf("%v: %s: %s", d.Severity, d.Summary, d.Detail))
	}
	return lines
}

func decodeAs(t testing.TB, typ tftypes.Type, v *tfprotov6.DynamicValue) tftypes.Value {
	t.Helper()
	got, err := v.Unmarshal(typ)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// proposedAsTerraformSends is the proposed new state of a batch as Terraform encodes it: the
// prior state's encoding with the attributes that differ in place. Terraform encodes equal
// values alike (map keys sorted), which tftypes, encoding a map in Go's order, does not.
func proposedAsTerraformSends(t testing.TB, prior tfprotov6.DynamicValue, proposed tftypes.Value) tfprotov6.DynamicValue {
	t.Helper()
	typ := proposed.Type().(tftypes.Object)
	priorValue, err := prior.Unmarshal(typ)
	if err != nil {
		t.Fatal(err)
	}
	fields, _, ok := msgpackObjectFields(prior.MsgPack)
	var priorAttrs, attrs map[string]tftypes.Value
	if !ok || priorValue.As(&priorAttrs) != nil || proposed.As(&attrs) != nil {
		t.Fatal("not an object")
	}
	for name, v := range attrs {
		if v.Equal(priorAttrs[name]) {
			continue
		}
		one := tftypes.Object{AttributeTypes: map[string]tftypes.Type{name: typ.AttributeTypes[name]}}
		encoded, err := tfprotov6.NewDynamicValue(one, tftypes.NewValue(one, map[string]tftypes.Value{name: v}))
		if err != nil {
			t.Fatal(err)
		}
		alone, _, _ := msgpackObjectFields(encoded.MsgPack)
		fields[name] = alone[name]
	}
	var b bytes.Buffer
	enc := msgpack.NewEncoder(&b)
	if err := enc.EncodeMapLen(len(fields)); err != nil {
		t.Fatal(err)
	}
	for _, name := range slices.Sorted(maps.Keys(fields)) {
		if err := enc.EncodeString(name); err != nil {
			t.Fatal(err)
		}
		b.Write(fields[name])
	}
	got, err := (&tfprotov6.DynamicValue{MsgPack: b.Bytes()}).Unmarshal(typ)
	if err != nil || !got.Equal(proposed) {
		t.Fatalf("the proposed state re-encoded reads otherwise (%v)", err)
	}
	return tfprotov6.DynamicValue{MsgPack: b.Bytes()}
}

// The batch's plan is answered without the framework only when nothing but the rows changes,
// and the rows are valid: anything else goes to the framework.
func TestJobBatchServerPlansOnlyWhenNothingButRowsChange(t *testing.T) {
	t.Parallel()
	state, config, proposed, private := batchStateValue(t, 3)
	typ := state.Type().(tftypes.Object)
	encoded, err := tfprotov6.NewDynamicValue(typ, state)
	if err != nil {
		t.Fatal(err)
	}
	with := func(v tftypes.Value, name string, attr tftypes.Value) tftypes.Value {
		return withAttr(t, v, name, attr)
	}
	// rows as tomap() gives them: { key = { node = { input = value } } }, a map of maps of maps.
	inputsType := tftypes.Map{ElementType: tftypes.String}
	nodesType := tftypes.Map{ElementType: inputsType}
	rowsMap := func(node, text string) tftypes.Value {
		rows := map[string]tftypes.Value{}
		for i := range 3 {
			t := photoOfItem(i)
			if i == 1 {
				t = text
			}
			rows[fmt.Sprintf("sku-%05d", i)] = tftypes.NewValue(nodesType, map[string]tftypes.Value{
				node: tftypes.NewValue(inputsType, map[string]tftypes.Value{"text": tftypes.NewValue(tftypes.String, t)})})
		}
		return tftypes.NewValue(tftypes.Map{ElementType: nodesType}, rows)
	}
	tests := []struct {
		name             string
		config, proposed tftypes.Value
		planned          bool
	}{
		{"nothing changes", config, proposed, true},
		{"the rows as a map", with(config, "rows", rowsMap("6", photoOfItem(1))), with(proposed, "rows", rowsMap("6", photoOfItem(1))), true},
		{"a row changes", with(config, "rows", rowsMap("6", "another text")), with(proposed, "rows", rowsMap("6", "another text")), true},
		{"a row names a node the template lacks", with(config, "rows", rowsMap("7", "text")), with(proposed, "rows", rowsMap("7", "text")), false},
		{"a setting changes", with(config, "max_in_flight", tftypes.NewValue(tftypes.Number, 4)), with(proposed, "max_in_flight", tftypes.NewValue(tftypes.Number, 4)), false},
		{"a default the state does not hold", config, with(proposed, "max_in_flight", tftypes.NewValue(tftypes.Number, 4)), false},
		{"rows unknown", with(config, "rows", tftypes.NewValue(tftypes.DynamicPseudoType, tftypes.UnknownValue)), with(proposed, "rows", tftypes.NewValue(tftypes.DynamicPseudoType, tftypes.UnknownValue)), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg, err := tfprotov6.NewDynamicValue(typ, tt.config)
			if err != nil {
				t.Fatal(err)
			}
			prop := proposedAsTerraformSends(t, encoded, tt.proposed)
			planned := newJobBatchServer(nil, noProviderData).(*jobBatchServer).planRows(context.Background(), &tfprotov6.PlanResourceChangeRequest{
				TypeName: jobBatchTypeName, PriorState: &encoded, ProposedNewState: &prop, Config: &cfg, PriorPrivate: private})
			if (planned != nil) != tt.planned {
				t.Fatalf("planned %v, want %v", planned != nil, tt.planned)
			}
		})
	}
}

// A batch's state of the current schema version goes back as Terraform sent it, and reads as
// the framework's upgrade of it; one with an attribute the schema lacks, or of another version,
// is the framework's to upgrade.
func TestBatchStateOfTheCurrentVersionGoesBackAsSent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	layered := newJobBatchServer(providerserver.NewProtocol6(newSvcProvider("test", time.Now))(), noProviderData).(*jobBatchServer)
	framework := providerserver.NewProtocol6(newSvcProvider("test", time.Now))()
	state := map[string]any{"id": "0b0e6c0e-6a43-4c1b-9d61-3b0f3f1e2c11", "workflow": `{"6":{"class_type":"SaveText","inputs":{}}}`,
		"rows": nil, "max_in_flight": 16, "cancel_on_destroy": true, "rerun_failed": false, "output_dir": nil,
		"partner_api_key_wo": nil, "timeouts": nil, "succeeded": 1, "failed": 0,
		"results": map[string]any{"a": map[string]any{"id": "8d3f1c2e-0000-4000-8000-000000000000", "status": "succeeded",
			"outputs": map[string]any{"6": []string{"a0c4e7f1-0000-4000-8000-000000000000"}}, "error": nil}}}
	current, err := json.Marshal(state)
	if err != nil {
		t.Fatal(err)
	}
	state["progress"] = nil
	stray, _ := json.Marshal(state)
	tests := []struct {
		name    string
		version int64
		state   []byte
		asSent  bool
	}{
		{"current", layered.version, current, true},
		{"an attribute the schema lacks", layered.version, stray, false},
		{"another version", layered.version + 1, current, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := &tfprotov6.UpgradeResourceStateRequest{TypeName: jobBatchTypeName, Version: tt.version, RawState: &tfprotov6.RawState{JSON: tt.state}}
			if got := stateAsSent(req, layered.version, layered.typ); (got != nil) != tt.asSent {
				t.Fatalf("handed back as sent: %v, want %v", got != nil, tt.asSent)
			}
			if !tt.asSent {
				return
			}
			ours, err := layered.UpgradeResourceState(ctx, req)
			if err != nil || len(ours.Diagnostics) > 0 || !bytes.Equal(ours.UpgradedState.JSON, tt.state) {
				t.Fatalf("ours: %v %+v", err, ours)
			}
			theirs, err := framework.UpgradeResourceState(ctx, req)
			if err != nil || len(theirs.Diagnostics) > 0 {
				t.Fatalf("framework: %v %+v", err, theirs)
			}
			a, errA := ours.UpgradedState.Unmarshal(layered.typ)
			b, errB := theirs.UpgradedState.Unmarshal(layered.typ)
			if errA != nil || errB != nil || !a.Equal(b) {
				t.Fatalf("ours %v (%v), the framework's %v (%v)", a, errA, b, errB)
			}
		})
	}
}

// validationRecorder is a server that records the configuration it is asked to validate.
type validationRecorder struct {
	tfprotov6.ProviderServer
	config *tfprotov6.DynamicValue
}

func (r *validationRecorder) ValidateResourceConfig(ctx context.Context, req *tfprotov6.ValidateResourceConfigRequest) (*tfprotov6.ValidateResourceConfigResponse, error) {
	r.config = req.Config
	return r.ProviderServer.ValidateResourceConfig(ctx, req)
}

// The batch layer's validation, which hands the framework known rows as an empty object, says
// what the framework says of the whole configuration: valid or not, and for rows null, unknown
// or not allowed (a CLI without write-only attributes).
func TestJobBatchServerValidatesAsTheFramework(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, config, _, _ := batchStateValue(t, 3)
	typ := config.Type()
	rowsType := batchRowsOf(3).Type()
	writeOnly := &tfprotov6.ValidateResourceConfigClientCapabilities{WriteOnlyAttributesAllowed: true}
	tests := []struct {
		name         string
		config       tftypes.Value
		capabilities *tfprotov6.ValidateResourceConfigClientCapabilities
		standIn      bool // the framework is handed the rows as an empty object
		wantErrors   int
	}{
		{"valid", config, writeOnly, true, 0},
		{"workflow not JSON", withAttr(t, config, "workflow", tftypes.NewValue(tftypes.String, `{"6":`)), writeOnly, true, 1},
		{"max_in_flight out of range", withAttr(t, config, "max_in_flight", tftypes.NewValue(tftypes.Number, 0)), writeOnly, true, 1},
		{"rows null", withAttr(t, config, "rows", tftypes.NewValue(tftypes.DynamicPseudoType, nil)), writeOnly, false, 1},
		{"rows unknown", withAttr(t, config, "rows", tftypes.NewValue(tftypes.DynamicPseudoType, tftypes.UnknownValue)), writeOnly, false, 0},
		{"rows null of an object type", withAttr(t, config, "rows", tftypes.NewValue(rowsType, nil)), writeOnly, false, 1},
		{"rows unknown of an object type", withAttr(t, config, "rows", tftypes.NewValue(rowsType, tftypes.UnknownValue)), writeOnly, false, 0},
		{"rows a list", withAttr(t, config, "rows", tftypes.NewValue(tftypes.List{ElementType: tftypes.String}, []tftypes.Value{})), writeOnly, false, 0},
		{"rows an empty map", withAttr(t, config, "rows", tftypes.NewValue(tftypes.Map{ElementType: tftypes.String}, map[string]tftypes.Value{})), writeOnly, true, 0},
		{"write-only not allowed", config, nil, true, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg, err := tfprotov6.NewDynamicValue(typ, tt.config)
			if err != nil {
				t.Fatal(err)
			}
			req := &tfprotov6.ValidateResourceConfigRequest{TypeName: jobBatchTypeName, Config: &cfg, ClientCapabilities: tt.capabilities}
			framework, err := providerserver.NewProtocol6(newSvcProvider("test", time.Now))().ValidateResourceConfig(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			recorder := &validationRecorder{ProviderServer: providerserver.NewProtocol6(newSvcProvider("test", time.Now))()}
			ours, err := newJobBatchServer(recorder, noProviderData).ValidateResourceConfig(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := diagnosticPaths(ours.Diagnostics), diagnosticPaths(framework.Diagnostics); !slices.Equal(got, want) {
				t.Errorf("diagnostics:\n%v\nthe framework's:\n%v", got, want)
			}
			if n := errorCount(framework.Diagnostics); n != tt.wantErrors {
				t.Errorf("the framework found %d errors, want %d: %v", n, tt.wantErrors, diagnosticPaths(framework.Diagnostics))
			}
			handed := decodeAs(t, typ, recorder.config)
			var attrs map[string]tftypes.Value
			if err := handed.As(&attrs); err != nil {
				t.Fatal(err)
			}
			standIn := tftypes.NewValue(tftypes.Object{AttributeTypes: map[string]tftypes.Type{}}, map[string]tftypes.Value{})
			if got := attrs["rows"].Equal(standIn); got != tt.standIn {
				t.Errorf("the framework was handed rows %v; stand-in expected: %v", attrs["rows"], tt.standIn)
			}
			var configured map[string]tftypes.Value
			if err := tt.config.As(&configured); err != nil {
				t.Fatal(err)
			}
			if !withAttr(t, handed, "rows", configured["rows"]).Equal(tt.config) {
				t.Errorf("the framework was handed %v, want the configuration but for its rows", handed)
			}
		})
	}
}

// diagnosticPaths is diagnostics as lines of severity, summary, detail and attribute path.
func diagnosticPaths(diags []*tfprotov6.Diagnostic) []string {
	var lines []string
	for _, d := range diags {
		lines = append(lines, fmt.Sprintf("%v: %s: %s (at %v)", d.Severity, d.Summary, d.Detail, d.Attribute))
	}
	return lines
}

func errorCount(diags []*tfprotov6.Diagnostic) int {
	n := 0
	for _, d := range diags {
		if d.Severity == tfprotov6.DiagnosticSeverityError {
			n++
		}
	}
	return n
}
