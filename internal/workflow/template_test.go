package workflow

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/svc-org/terraform-provider-svc/internal/canonicaljson"
)

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
