package workflow

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/svc-org/terraform-provider-svc/internal/canonicaljson"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		wantErr string
		ui      bool
	}{
		{name: "api format", in: `{"1":{"class_type":"EmptyImage","inputs":{"width":8}},"2":{"class_type":"SaveImage","inputs":{"images":["1",0]}}}`},
		{name: "inputs optional", in: `{"1":{"class_type":"EmptyImage"}}`},
		{name: "ui export", in: `{"last_node_id":2,"nodes":[{"id":1}],"links":[[1,1,0,2,0,"IMAGE"]],"version":0.4}`, ui: true, wantErr: "UI-format"},
		{name: "array", in: `[1,2]`, wantErr: "must be a JSON object"},
		{name: "string", in: `"x"`, wantErr: "must be a JSON object"},
		{name: "truncated", in: `{"1":{"class_type":`, wantErr: "not valid JSON"},
		{name: "empty object", in: `{}`, wantErr: "no nodes"},
		{name: "node not object", in: `{"1":5}`, wantErr: `node "1" must be an object`},
		{name: "no class_type", in: `{"1":{"inputs":{}}}`, wantErr: `node "1" has no class_type`},
		{name: "nodes key that is a node id", in: `{"nodes":{"class_type":"X"},"links":{"class_type":"Y"}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.in))
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
			}
			if errors.Is(err, ErrUIFormat) != tt.ui {
				t.Fatalf("errors.Is(err, ErrUIFormat) = %v, want %v", !tt.ui, tt.ui)
			}
		})
	}
}

func TestSetInputs(t *testing.T) {
	wf := `{"1":{"class_type":"EmptyImage","inputs":{"width":8},"_meta":{"title":"canvas"}},"2":{"class_type":"SaveImage","inputs":{"images":["1",0]}}}`
	out, err := SetInputs([]byte(wf), map[string]map[string]any{
		"1": {"width": 64, "height": 32},
		"2": {"filename_prefix": "x", "images": []any{"1", 0}},
	})
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]map[string]any
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"width": 64.0, "height": 32.0}
	if !reflect.DeepEqual(got["1"]["inputs"], want) {
		t.Fatalf("node 1 inputs = %v, want %v", got["1"]["inputs"], want)
	}
	if got["1"]["_meta"] == nil {
		t.Fatal("other node fields must be kept")
	}
	if _, err := SetInputs([]byte(wf), map[string]map[string]any{"9": {"x": 1}}); err == nil || !strings.Contains(err.Error(), `no node "9"`) {
		t.Fatalf("unknown node: err = %v", err)
	}
}

func TestNodeIDsAndLinkSource(t *testing.T) {
	g, err := Parse([]byte(`{"10":{"class_type":"SaveImage"},"2":{"class_type":"SaveImage"},"3":{"class_type":"EmptyImage"}}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := g.NodeIDs("SaveImage"); !reflect.DeepEqual(got, []string{"10", "2"}) {
		t.Fatalf("NodeIDs = %v", got)
	}
	for in, want := range map[string]string{`["1",0]`: "1", `["12", 3]`: "12", `["1","0"]`: "", `[1,0]`: "", `"x"`: "", `["1",0,2]`: ""} {
		if got, ok := LinkSource(json.RawMessage(in)); got != want || ok != (want != "") {
			t.Errorf("LinkSource(%s) = %q, %v, want %q", in, got, ok, want)
		}
	}
}

// FuzzParse checks Parse never panics and agrees with a plain reading of the JSON: whatever it
// accepts is a non-empty JSON object, not the UI export, whose values are all objects with a
// class_type; whatever it calls a UI export has "nodes" and "links" arrays. SetInputs keeps every
// node of an accepted workflow and its result is accepted again.
func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		`{"1":{"class_type":"A","inputs":{"x":["2",0]}}}`, `{"nodes":[],"links":[]}`, `[]`, `{`, `{"1":null}`,
		` {"1":{"class_type":"A","inputs":null}} `, `{"1":{"class_type":"A"},"1":{"class_type":""}}`,
		`{"nodes":{"class_type":"X"},"links":[]}`, `{"last_node_id":1,"nodes":[{"id":1}],"links":[],"version":0.4}`,
		`{"1":{"class_type":"A","inputs":5}}`, `{"\u00ff":{"class_type":"\ud800"}}`, `{"1":{"class_type":"A"}} x`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		g, err := Parse(data)
		var top map[string]json.RawMessage
		plainErr := json.Unmarshal(data, &top)
		if errors.Is(err, ErrUIFormat) {
			if plainErr != nil || !IsUIFormat(top) {
				t.Fatalf("%q called a UI export", data)
			}
			return
		}
		if err != nil {
			return
		}
		if plainErr != nil || top == nil {
			t.Fatalf("%q accepted, but it is not a JSON object: %v", data, plainErr)
		}
		if len(g) == 0 || len(g) != len(top) || IsUIFormat(top) {
			t.Fatalf("%q accepted as %d nodes (object has %d keys, UI format %v)", data, len(g), len(top), IsUIFormat(top))
		}
		for id, n := range g {
			if n.ClassType == "" || n.Inputs == nil {
				t.Fatalf("node %q accepted without class_type or inputs: %+v", id, n)
			}
			if _, ok := top[id]; !ok {
				t.Fatalf("node %q is not a key of the workflow", id)
			}
		}
		// Patching any node keeps the workflow an API-format workflow with the same nodes.
		for id := range g {
			out, err := SetInputs(data, map[string]map[string]any{id: {"fuzz_input": 1}})
			if err != nil {
				t.Fatalf("SetInputs on accepted workflow %q: %v", data, err)
			}
			g2, err := Parse(out)
			if err != nil {
				t.Fatalf("SetInputs(%q) = %q, which Parse refuses: %v", data, out, err)
			}
			if len(g2) != len(g) || g2[id].ClassType != g[id].ClassType || string(g2[id].Inputs["fuzz_input"]) != "1" {
				t.Fatalf("SetInputs(%q) = %q lost nodes or the patch", data, out)
			}
			break
		}
	})
}

// PatchCanonical must write exactly what SetInputs then canonicaljson.Canonical write: a
// batch's rows are told apart by the digest of those bytes, and any difference would re-run
// every row of every batch already applied.
func TestTemplatePatchCanonicalMatchesSetInputs(t *testing.T) {
	t.Parallel()
	templates := map[string]string{
		"plain": `{"1":{"class_type":"EmptyImage","inputs":{"width":8,"height":8.0,"color":0}},
			"2":{"class_type":"ImageNoiseSampler","inputs":{"image":["1",0],"seed":1e2,"steps":10,"denoise":0.50}},
			"3":{"class_type":"SaveImage","inputs":{"images":["2",0],"filename_prefix":"job <&>"},"_meta":{"title":"Save"}}}`,
		"inputs null or absent":     `{"1":{"class_type":"A","inputs":null},"2":{"class_type":"B"},"10":{"inputs":{"z":1,"a":2},"class_type":"C"}}`,
		"duplicate keys, last wins": `{"1":{"class_type":"A","inputs":{"x":1,"x":2}},"1":{"class_type":"B","inputs":{"y":"é","y":"ü"}}}`,
	}
	patches := []map[string]map[string]any{
		nil,
		{},
		{"1": {}},
		{"1": {"x": "new", "width": json.Number("16.0")}},
		{"2": {"seed": json.Number("12345678901234567890123"), "image": nil}},
		{"3": {"filename_prefix": "<b>&amp;</b> ☃", "extra": map[string]any{"b": []any{true, json.Number("1e-7")}, "a": nil}}},
		{"1": {"y": false}, "10": {"a": "A", "m": map[string]any{}}, "2": {"seed": json.Number("0")}},
		{"2": {"seed": int64(42), "denoise": 0.25, "steps": 7, "big": int64(-9007199254740993), "tiny": 1e-9}},
	}
	for name, tmpl := range templates {
		tp, err := NewTemplate([]byte(tmpl))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for i, p := range patches {
			want, wantErr := setInputsCanonical(tmpl, p)
			got, gotErr := tp.PatchCanonical(p)
			if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) || string(got) != string(want) {
				t.Errorf("%s, patch %d:\n got %s (%v)\nwant %s (%v)", name, i, got, gotErr, want, wantErr)
			}
		}
	}
}

// Random rows over random templates: the two paths agree on every one.
func TestTemplatePatchCanonicalRandom(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	values := []any{"a", "b c", "<x>", "ü", json.Number("1"), json.Number("1.50"), json.Number("-2e3"), true, nil,
		int64(-5), int64(1) << 62, 1.5, 3e21, 0.000001,
		[]any{"1", json.Number("0")}, map[string]any{"k": "v", "a": []any{}}}
	for range 300 {
		nodes := map[string]any{}
		for n := range 1 + r.IntN(4) {
			inputs := map[string]any{}
			for range r.IntN(4) {
				inputs[fmt.Sprintf("in%d", r.IntN(5))] = values[r.IntN(len(values))]
			}
			node := map[string]any{"class_type": fmt.Sprintf("C%d", n)}
			if r.IntN(5) > 0 {
				node["inputs"] = inputs
			}
			nodes[fmt.Sprint(n+1)] = node
		}
		tmpl, err := json.Marshal(nodes)
		if err != nil {
			t.Fatal(err)
		}
		patch := map[string]map[string]any{}
		for range r.IntN(3) {
			id := fmt.Sprint(1 + r.IntN(5)) // sometimes a node the template lacks
			if patch[id] == nil {
				patch[id] = map[string]any{}
			}
			patch[id][fmt.Sprintf("in%d", r.IntN(6))] = values[r.IntN(len(values))]
		}
		tp, err := NewTemplate(tmpl)
		if err != nil {
			t.Fatal(err)
		}
		want, wantErr := setInputsCanonical(string(tmpl), patch)
		got, gotErr := tp.PatchCanonical(patch)
		if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) || string(got) != string(want) {
			t.Fatalf("template %s, patch %v:\n got %s (%v)\nwant %s (%v)", tmpl, patch, got, gotErr, want, wantErr)
		}
	}
}

func setInputsCanonical(tmpl string, patches map[string]map[string]any) ([]byte, error) {
	wf, err := SetInputs([]byte(tmpl), patches)
	if err != nil {
		return nil, err
	}
	return canonicaljson.Canonical(wf)
}

func TestNewTemplateRefusesWhatParseRefuses(t *testing.T) {
	t.Parallel()
	for _, bad := range []string{`[]`, `{}`, `{"1":{"inputs":{}}}`, `{"nodes":[],"links":[]}`, `{"1":{"class_type":"A","inputs":[1]}}`} {
		_, want := Parse([]byte(bad))
		if _, err := NewTemplate([]byte(bad)); err == nil || want == nil {
			t.Errorf("%s: NewTemplate err %v, Parse err %v: want both to refuse it", bad, err, want)
		}
	}
}
