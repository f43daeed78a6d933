package provider

import (
	"context"
	"math"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
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

// TestBatchRowPathProbe is the apply of a one-row batch through jobBatchServer, left hanging as
// its submission reaches the service, for counting the files a row's path visits with the
// coverage profile (see internal/README.md): SVC_ROW_PATH=base stops before the apply,
// SVC_ROW_PATH=submit as the submission arrives; the blocks counted more in the second profile
// than in the first are the path's.
func TestBatchRowPathProbe(t *testing.T) {
	phase := os.Getenv("SVC_ROW_PATH")
	if phase == "" {
		t.Skip("set SVC_ROW_PATH=base or submit, with -coverprofile")
	}
	// The journal on, as Terraform runs the provider (it is on by default; the tests turn it off
	// through SVC_JOURNAL): what it runs before a submission is on the row's path.
	t.Setenv(journalEnv, t.TempDir())
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

// msgpackDynamicGoValue reads a dynamic value as goValueOf does, or refuses it: never another
// value.
func TestMsgpackDynamicGoValueReadsAsGoValueOf(t *testing.T) {
	t.Parallel()
	inputs := func(attrs map[string]tftypes.Value) tftypes.Value {
		types := map[string]tftypes.Type{}
		for k, v := range attrs {
			types[k] = v.Type()
		}
		return tftypes.NewValue(tftypes.Object{AttributeTypes: types}, attrs)
	}
	num := func(s string) tftypes.Value {
		f, _, err := big.ParseFloat(s, 10, 512, big.ToNearestEven)
		if err != nil {
			t.Fatal(err)
		}
		return tftypes.NewValue(tftypes.Number, f)
	}
	str := func(s string) tftypes.Value { return tftypes.NewValue(tftypes.String, s) }
	strings := tftypes.List{ElementType: tftypes.String}
	tests := []struct {
		name  string
		value tftypes.Value
		read  bool // false: refused, and left to the framework's decoding
	}{
		{"strings", inputs(map[string]tftypes.Value{"6": inputs(map[string]tftypes.Value{"text": str("a cat"), "empty": str("")})}), true},
		{"whole numbers", inputs(map[string]tftypes.Value{"2": inputs(map[string]tftypes.Value{"seed": num("0"), "big": num("9007199254740993"), "neg": num("-7"), "max": num("9223372036854775807")})}), true},
		{"fractions and a whole float", inputs(map[string]tftypes.Value{"2": inputs(map[string]tftypes.Value{"denoise": num("0.5"), "cfg": num("7.0"), "tiny": num("1e-300"), "huge": num("1e300")})}), true},
		{"bools, nulls and lists", inputs(map[string]tftypes.Value{"2": inputs(map[string]tftypes.Value{"on": tftypes.NewValue(tftypes.Bool, true),
			"none": tftypes.NewValue(tftypes.String, nil), "tags": tftypes.NewValue(strings, []tftypes.Value{str("a"), str("b")}),
			"set": tftypes.NewValue(tftypes.Set{ElementType: tftypes.Number}, []tftypes.Value{num("1"), num("2")}),
			"ref": tftypes.NewValue(tftypes.Tuple{ElementTypes: []tftypes.Type{tftypes.String, tftypes.Number}}, []tftypes.Value{str("1"), num("0")})})}), true},
		{"empty collections", inputs(map[string]tftypes.Value{"2": inputs(map[string]tftypes.Value{"tags": tftypes.NewValue(strings, []tftypes.Value{}),
			"none": tftypes.NewValue(tftypes.Map{ElementType: tftypes.String}, map[string]tftypes.Value{})})}), true},
		{"a map of rows (tomap)", tftypes.NewValue(tftypes.Map{ElementType: tftypes.Map{ElementType: tftypes.String}},
			map[string]tftypes.Value{"a": tftypes.NewValue(tftypes.Map{ElementType: tftypes.String}, map[string]tftypes.Value{"text": str("5")})}), true},
		// Terraform spells as a string a number that neither an int64 nor a float64 holds
		// exactly (0.1 among them): the type tells it from a string.
		{"strings that read as numbers beside numbers", inputs(map[string]tftypes.Value{"2": inputs(map[string]tftypes.Value{"seed": num("1"), "text": str("42"), "denoise": str("0.1")})}), true},
		{"numbers no float64 holds", inputs(map[string]tftypes.Value{"2": inputs(map[string]tftypes.Value{"denoise": num("0.1"), "fine": num("0.1000000000000000000000001")})}), true},
		{"an integer past int64", inputs(map[string]tftypes.Value{"2": inputs(map[string]tftypes.Value{"seed": num("18446744073709551615"), "huge": num("1e400")})}), true},
		{"unknown", inputs(map[string]tftypes.Value{"2": inputs(map[string]tftypes.Value{"seed": tftypes.NewValue(tftypes.Number, tftypes.UnknownValue)})}), false},
		{"null", tftypes.NewValue(tftypes.Object{AttributeTypes: map[string]tftypes.Type{}}, nil), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			encoded, err := tfprotov6.NewDynamicValue(tftypes.DynamicPseudoType, tt.value)
			if err != nil {
				t.Fatal(err)
			}
			got, ok := msgpackDynamicGoValue(encoded.MsgPack)
			if ok != tt.read {
				t.Fatalf("read %v (%#v), want %v", ok, got, tt.read)
			}
			if !ok {
				return
			}
			want, err := goValueOf(tt.value)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("got  %#v\nwant %#v", got, want)
			}
		})
	}
}

func TestMsgpackObjectFields(t *testing.T) {
	t.Parallel()
	typ := tftypes.Object{AttributeTypes: map[string]tftypes.Type{"a": tftypes.String, "b": tftypes.Number}}
	encoded, err := tfprotov6.NewDynamicValue(typ, tftypes.NewValue(typ, map[string]tftypes.Value{"a": tftypes.NewValue(tftypes.String, "x"), "b": tftypes.NewValue(tftypes.Number, nil)}))
	if err != nil {
		t.Fatal(err)
	}
	fields, null, ok := msgpackObjectFields(encoded.MsgPack)
	if !ok || null || len(fields) != 2 || !isMsgpackNull(fields["b"]) || string(fields["a"]) != "\xa1x" {
		t.Fatalf("fields %q, null %v, ok %v", fields, null, ok)
	}
	nullValue, _ := tfprotov6.NewDynamicValue(typ, tftypes.NewValue(typ, nil))
	if _, null, ok := msgpackObjectFields(nullValue.MsgPack); !null || !ok {
		t.Fatalf("null object: null %v, ok %v", null, ok)
	}
	if _, _, ok := msgpackObjectFields([]byte{0x92, 0x01, 0x02}); ok {
		t.Fatal("an array read as an object")
	}
}

// A number read from the encoding is what tftypes reads; NaN, which no Terraform number is, is
// refused rather than handed to big.NewFloat (which panics on it).
func TestBigFloatOf(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   any
		want string // "" when refused
	}{
		{int8(-7), "-7"}, {uint16(300), "300"}, {int64(9007199254740993), "9.007199254740993e+15"},
		{uint64(18446744073709551615), "1.8446744073709551615e+19"}, {float32(0.5), "0.5"}, {float64(1e300), "1e+300"},
		{"0.1", "0.1"}, {math.NaN(), ""}, {true, ""}, {"x", ""},
	}
	for _, tt := range tests {
		f, ok := bigFloatOf(tt.in)
		if got := ""; ok {
			got = f.Text('g', -1)
			if got != tt.want {
				t.Errorf("bigFloatOf(%#v) = %s, want %s", tt.in, got, tt.want)
			}
		} else if tt.want != "" {
			t.Errorf("bigFloatOf(%#v) refused, want %s", tt.in, tt.want)
		}
	}
}
