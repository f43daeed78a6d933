package workflow

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/svc-org/terraform-provider-svc/internal/canonicaljson"
)

// testObjectInfo is a hand-written object_info document in the engine's shape (testdata).
func testObjectInfo(t testing.TB) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/object_info.json")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// One fixture per rule: a hand-written UI export and the exact API JSON it converts to.
var fromUICases = []struct {
	name string
	ui   string
	want string
}{
	{
		name: "widgets by input_order, the seed's control and the loader's upload skipped, links taken",
		ui: `{"last_node_id": 3, "last_link_id": 2, "version": 0.4, "groups": [], "extra": {}, "config": {},
		"nodes": [
		  {"id": 1, "type": "Loader", "mode": 0, "inputs": [], "outputs": [{"name": "IMAGE", "type": "IMAGE", "links": [1], "slot_index": 0}, {"name": "MASK", "type": "MASK", "links": []}],
		   "widgets_values": ["a.png", "image"], "properties": {}},
		  {"id": 2, "type": "Sampler", "mode": 0, "title": "Sampler A", "inputs": [{"name": "image", "type": "IMAGE", "link": 1}],
		   "outputs": [{"name": "IMAGE", "type": "IMAGE", "links": [2]}], "widgets_values": [123, "randomize", 30, "heun", 0.5]},
		  {"id": 3, "type": "Save", "mode": 0, "inputs": [{"name": "images", "type": "IMAGE", "link": 2}], "outputs": [], "widgets_values": ["pref"]}
		],
		"links": [[1, 1, 0, 2, 0, "IMAGE"], [2, 2, 0, 3, 0, "IMAGE"]]}`,
		want: `{"1":{"_meta":{"title":"Load Image"},"class_type":"Loader","inputs":{"image":"a.png"}},` +
			`"2":{"_meta":{"title":"Sampler A"},"class_type":"Sampler","inputs":{"denoise":0.5,"image":["1",0],"sampler":"heun","seed":123,"steps":30}},` +
			`"3":{"_meta":{"title":"Save Image"},"class_type":"Save","inputs":{"filename_prefix":"pref","images":["2",0]}}}`,
	},
	{
		name: "the upload button's value comes after the loader's last required widget",
		ui: `{"nodes": [{"id": 1, "type": "MaskLoader", "mode": 0, "inputs": [], "outputs": [{"name": "MASK", "type": "MASK", "links": []}],
		   "widgets_values": ["a.png", "red", "image"]}], "links": []}`,
		want: `{"1":{"_meta":{"title":"Load Mask"},"class_type":"MaskLoader","inputs":{"channel":"red","image":"a.png"}}}`,
	},
	{
		name: "without input_order widgets follow the document's key order; noise_seed has a control without the flag",
		ui: `{"nodes": [{"id": 4, "type": "LegacyNoise", "mode": 0, "inputs": [{"name": "latent", "type": "LATENT", "link": null}], "outputs": [],
		   "widgets_values": [0.25, 18446744073709551615, "fixed", "hello"]}], "links": []}`,
		want: `{"4":{"_meta":{"title":"Legacy Noise"},"class_type":"LegacyNoise","inputs":{"alpha":"hello","noise_seed":18446744073709551615,"zeta":0.25}}}`,
	},
	{
		name: "forceInput inputs have no widget; the widget between them keeps its position",
		ui: `{"nodes": [
		  {"id": 1, "type": "Text", "mode": 0, "inputs": [], "outputs": [{"name": "STRING", "type": "STRING", "links": [1]}], "widgets_values": ["left"]},
		  {"id": 2, "type": "Text", "mode": 0, "inputs": [], "outputs": [{"name": "STRING", "type": "STRING", "links": [2]}], "widgets_values": ["right"]},
		  {"id": 3, "type": "Join", "mode": 0, "inputs": [{"name": "text_a", "type": "STRING", "link": 1}, {"name": "text_b", "type": "STRING", "link": 2}],
		   "outputs": [{"name": "STRING", "type": "STRING", "links": [3]}], "widgets_values": [" + "]},
		  {"id": 4, "type": "SaveText", "mode": 0, "inputs": [{"name": "text", "type": "STRING", "link": 3}], "outputs": [], "widgets_values": []}
		], "links": [[1, 1, 0, 3, 0, "STRING"], [2, 2, 0, 3, 1, "STRING"], [3, 3, 0, 4, 0, "STRING"]]}`,
		want: `{"1":{"_meta":{"title":"Text"},"class_type":"Text","inputs":{"value":"left"}},` +
			`"2":{"_meta":{"title":"Text"},"class_type":"Text","inputs":{"value":"right"}},` +
			`"3":{"_meta":{"title":"Join Text"},"class_type":"Join","inputs":{"separator":" + ","text_a":["1",0],"text_b":["2",0]}},` +
			`"4":{"_meta":{"title":"Save Text"},"class_type":"SaveText","inputs":{"text":["3",0]}}}`,
	},
	{
		name: "a widget turned into a linked input keeps its widgets_values slot and takes the link",
		ui: `{"nodes": [
		  {"id": 1, "type": "Text", "mode": 0, "inputs": [], "outputs": [{"name": "STRING", "type": "STRING", "links": [1]}], "widgets_values": ["; "]},
		  {"id": 3, "type": "Join", "mode": 0, "inputs": [{"name": "text_a", "type": "STRING", "link": null},
		     {"name": "separator", "type": "STRING", "widget": {"name": "separator"}, "link": 1}, {"name": "text_b", "type": "STRING", "link": null}],
		   "outputs": [{"name": "STRING", "type": "STRING", "links": []}], "widgets_values": ["stale"]}
		], "links": [[1, 1, 0, 3, 1, "STRING"]]}`,
		want: `{"1":{"_meta":{"title":"Text"},"class_type":"Text","inputs":{"value":"; "}},` +
			`"3":{"_meta":{"title":"Join Text"},"class_type":"Join","inputs":{"separator":["1",0]}}}`,
	},
	{
		name: "a COMBO with control_after_generate stores two values after its own",
		ui: `{"nodes": [{"id": 9, "type": "Pick", "mode": 0, "inputs": [], "outputs": [{"name": "STRING", "type": "STRING", "links": []}],
		   "widgets_values": ["b", "increment", "", true]}], "links": []}`,
		want: `{"9":{"_meta":{"title":"Pick"},"class_type":"Pick","inputs":{"choice":"b","flag":true}}}`,
	},
	{
		name: "widgets_values as an object keyed by widget name",
		ui: `{"nodes": [
		  {"id": 1, "type": "Loader", "mode": 0, "inputs": [], "outputs": [{"name": "IMAGE", "type": "IMAGE", "links": [1]}], "widgets_values": {"image": "b.png", "upload": "image"}},
		  {"id": 2, "type": "Sampler", "mode": 0, "inputs": [{"name": "image", "type": "IMAGE", "link": 1}], "outputs": [],
		   "widgets_values": {"steps": 10, "seed": 5, "control_after_generate": "fixed", "sampler": "euler", "denoise": 1.0}}
		], "links": [[1, 1, 0, 2, 0, "IMAGE"]]}`,
		want: `{"1":{"_meta":{"title":"Load Image"},"class_type":"Loader","inputs":{"image":"b.png"}},` +
			`"2":{"_meta":{"title":"Noise Sampler"},"class_type":"Sampler","inputs":{"denoise":1,"image":["1",0],"sampler":"euler","seed":5,"steps":10}}}`,
	},
	{
		name: "notes are never sent",
		ui: `{"nodes": [
		  {"id": 1, "type": "Note", "mode": 0, "inputs": [], "outputs": [], "widgets_values": ["remember the seed"]},
		  {"id": 2, "type": "MarkdownNote", "mode": 0, "inputs": [], "outputs": [], "widgets_values": ["# title"]},
		  {"id": 3, "type": "Text", "mode": 0, "inputs": [], "outputs": [], "widgets_values": ["x"]}
		], "links": []}`,
		want: `{"3":{"_meta":{"title":"Text"},"class_type":"Text","inputs":{"value":"x"}}}`,
	},
	{
		name: "a muted node is not sent; its consumers lose the input, a widget turned into an input too",
		ui: `{"nodes": [
		  {"id": 1, "type": "Loader", "mode": 2, "inputs": [], "outputs": [{"name": "IMAGE", "type": "IMAGE", "links": [1]}], "widgets_values": ["a.png", "image"]},
		  {"id": 2, "type": "Invert", "mode": 0, "inputs": [{"name": "image", "type": "IMAGE", "link": 1}], "outputs": [], "widgets_values": []},
		  {"id": 3, "type": "Text", "mode": 2, "inputs": [], "outputs": [{"name": "STRING", "type": "STRING", "links": [2]}], "widgets_values": ["muted"]},
		  {"id": 4, "type": "Join", "mode": 0, "inputs": [{"name": "separator", "type": "STRING", "widget": {"name": "separator"}, "link": 2}],
		   "outputs": [], "widgets_values": ["stale"]}
		], "links": [[1, 1, 0, 2, 0, "IMAGE"], [2, 3, 0, 4, 0, "STRING"]]}`,
		want: `{"2":{"_meta":{"title":"Invert Image"},"class_type":"Invert","inputs":{}},` +
			`"4":{"_meta":{"title":"Join Text"},"class_type":"Join","inputs":{}}}`,
	},
	{
		name: "a bypassed node passes the input in the same slot when its type fits",
		ui: `{"nodes": [
		  {"id": 1, "type": "Loader", "mode": 0, "inputs": [], "outputs": [{"name": "IMAGE", "type": "IMAGE", "links": [1]}], "widgets_values": ["a.png", "image"]},
		  {"id": 2, "type": "Invert", "mode": 4, "inputs": [{"name": "image", "type": "IMAGE", "link": 1}], "outputs": [{"name": "IMAGE", "type": "IMAGE", "links": [2]}]},
		  {"id": 3, "type": "Save", "mode": 0, "inputs": [{"name": "images", "type": "IMAGE", "link": 2}], "outputs": [], "widgets_values": ["p"]}
		], "links": [[1, 1, 0, 2, 0, "IMAGE"], [2, 2, 0, 3, 0, "IMAGE"]]}`,
		want: `{"1":{"_meta":{"title":"Load Image"},"class_type":"Loader","inputs":{"image":"a.png"}},` +
			`"3":{"_meta":{"title":"Save Image"},"class_type":"Save","inputs":{"filename_prefix":"p","images":["1",0]}}}`,
	},
	{
		name: "a bypassed node passes its first input of the output's type when the same slot does not fit",
		ui: `{"nodes": [
		  {"id": 1, "type": "Loader", "mode": 0, "inputs": [], "outputs": [{"name": "IMAGE", "type": "IMAGE", "links": [2]}, {"name": "MASK", "type": "MASK", "links": [1]}], "widgets_values": ["a.png", "image"]},
		  {"id": 2, "type": "Blend", "mode": 4, "inputs": [{"name": "mask", "type": "MASK", "link": 1}, {"name": "image", "type": "IMAGE", "link": 2}],
		   "outputs": [{"name": "IMAGE", "type": "IMAGE", "links": [3]}]},
		  {"id": 3, "type": "Save", "mode": 0, "inputs": [{"name": "images", "type": "IMAGE", "link": 3}], "outputs": [], "widgets_values": ["p"]}
		], "links": [[1, 1, 1, 2, 0, "MASK"], [2, 1, 0, 2, 1, "IMAGE"], [3, 2, 0, 3, 0, "IMAGE"]]}`,
		want: `{"1":{"_meta":{"title":"Load Image"},"class_type":"Loader","inputs":{"image":"a.png"}},` +
			`"3":{"_meta":{"title":"Save Image"},"class_type":"Save","inputs":{"filename_prefix":"p","images":["1",0]}}}`,
	},
	{
		name: "a bypassed node with no input of the output's type passes nothing",
		ui: `{"nodes": [
		  {"id": 1, "type": "Loader", "mode": 0, "inputs": [], "outputs": [{"name": "MASK", "type": "MASK", "links": [1]}], "widgets_values": ["a.png", "image"]},
		  {"id": 2, "type": "Blend", "mode": 4, "inputs": [{"name": "mask", "type": "MASK", "link": 1}, {"name": "image", "type": "IMAGE", "link": null}],
		   "outputs": [{"name": "IMAGE", "type": "IMAGE", "links": [3]}]},
		  {"id": 3, "type": "Save", "mode": 0, "inputs": [{"name": "images", "type": "IMAGE", "link": 3}], "outputs": [], "widgets_values": ["p"]}
		], "links": [[1, 1, 1, 2, 0, "MASK"], [3, 2, 0, 3, 0, "IMAGE"]]}`,
		want: `{"1":{"_meta":{"title":"Load Image"},"class_type":"Loader","inputs":{"image":"a.png"}},` +
			`"3":{"_meta":{"title":"Save Image"},"class_type":"Save","inputs":{"filename_prefix":"p"}}}`,
	},
	{
		name: "a bypassed node's input typed * passes whatever comes in the same slot",
		ui: `{"nodes": [
		  {"id": 1, "type": "Loader", "mode": 0, "inputs": [], "outputs": [{"name": "IMAGE", "type": "IMAGE", "links": [1]}], "widgets_values": ["a.png", "image"]},
		  {"id": 2, "type": "AnyPassThrough", "mode": 4, "inputs": [{"name": "anything", "type": "*", "link": 1}], "outputs": [{"name": "out", "type": "IMAGE", "links": [2]}]},
		  {"id": 3, "type": "Invert", "mode": 0, "inputs": [{"name": "image", "type": "IMAGE", "link": 2}], "outputs": []}
		], "links": [[1, 1, 0, 2, 0, "IMAGE"], [2, 2, 0, 3, 0, "IMAGE"]]}`,
		want: `{"1":{"_meta":{"title":"Load Image"},"class_type":"Loader","inputs":{"image":"a.png"}},` +
			`"3":{"_meta":{"title":"Invert Image"},"class_type":"Invert","inputs":{"image":["1",0]}}}`,
	},
	{
		name: "reroutes are followed through",
		ui: `{"nodes": [
		  {"id": 1, "type": "Loader", "mode": 0, "inputs": [], "outputs": [{"name": "IMAGE", "type": "IMAGE", "links": [1]}], "widgets_values": ["a.png", "image"]},
		  {"id": 5, "type": "Reroute", "mode": 0, "inputs": [{"name": "", "type": "*", "link": 1}], "outputs": [{"name": "", "type": "IMAGE", "links": [2]}], "properties": {"showOutputText": false}},
		  {"id": 6, "type": "Reroute", "mode": 0, "inputs": [{"name": "", "type": "*", "link": 2}], "outputs": [{"name": "", "type": "IMAGE", "links": [3]}]},
		  {"id": 7, "type": "Reroute", "mode": 0, "inputs": [{"name": "", "type": "*", "link": null}], "outputs": [{"name": "", "type": "IMAGE", "links": [4]}]},
		  {"id": 3, "type": "Blend", "mode": 0, "inputs": [{"name": "mask", "type": "MASK", "link": 4}, {"name": "image", "type": "IMAGE", "link": 3}], "outputs": []}
		], "links": [[1, 1, 0, 5, 0, "IMAGE"], [2, 5, 0, 6, 0, "IMAGE"], [3, 6, 0, 3, 1, "IMAGE"], [4, 7, 0, 3, 0, "MASK"]]}`,
		want: `{"1":{"_meta":{"title":"Load Image"},"class_type":"Loader","inputs":{"image":"a.png"}},` +
			`"3":{"_meta":{"title":"Blend"},"class_type":"Blend","inputs":{"image":["1",0]}}}`,
	},
	{
		name: "a primitive node is replaced by its value (its control value is not)",
		ui: `{"nodes": [
		  {"id": 8, "type": "PrimitiveNode", "mode": 0, "title": "seed", "inputs": [],
		   "outputs": [{"name": "INT", "type": "INT", "widget": {"name": "seed"}, "links": [7]}], "widgets_values": [4242, "fixed"]},
		  {"id": 2, "type": "Sampler", "mode": 0, "inputs": [{"name": "image", "type": "IMAGE", "link": null},
		     {"name": "seed", "type": "INT", "widget": {"name": "seed"}, "link": 7}], "outputs": [], "widgets_values": [1, "randomize", 20, "euler", 1]}
		], "links": [[7, 8, 0, 2, 1, "INT"]]}`,
		want: `{"2":{"_meta":{"title":"Noise Sampler"},"class_type":"Sampler","inputs":{"denoise":1,"sampler":"euler","seed":4242,"steps":20}}}`,
	},
	{
		name: "a subgraph is expanded: inner ids outer:inner, links through its input and output nodes",
		ui:   subgraphExport,
		want: `{"1":{"_meta":{"title":"Load Image"},"class_type":"Loader","inputs":{"image":"a.png"}},` +
			`"2:1":{"_meta":{"title":"Invert Image"},"class_type":"Invert","inputs":{"image":["1",0]}},` +
			`"2:3":{"_meta":{"title":"Noise Sampler"},"class_type":"Sampler","inputs":{"denoise":1,"image":["2:1",0],"sampler":"euler","seed":7,"steps":4}},` +
			`"3":{"_meta":{"title":"Save Image"},"class_type":"Save","inputs":{"filename_prefix":"sub","images":["2:3",0]}}}`,
	},
	{
		name: "a subgraph input unconnected outside and not drawn as a widget leaves the inner widget's value",
		ui: strings.Replace(promotedWidgetExport,
			`{"id": 6, "type": "noise", "mode": 0, "inputs": [{"name": "image", "type": "IMAGE", "link": 5}, {"name": "seed", "type": "INT", "widget": {"name": "seed"}, "link": null}]`,
			`{"id": 6, "type": "noise", "mode": 0, "inputs": [{"name": "image", "type": "IMAGE", "link": 5}, {"name": "seed", "type": "INT", "link": null}]`, 1),
		want: `{"1":{"_meta":{"title":"Load Image"},"class_type":"Loader","inputs":{"image":"a.png"}},` +
			`"2:1":{"_meta":{"title":"Noise Sampler"},"class_type":"Sampler","inputs":{"denoise":1,"image":["1",0],"sampler":"euler","seed":777,"steps":3}},` +
			`"3":{"_meta":{"title":"Save Image"},"class_type":"Save","inputs":{"filename_prefix":"a","images":["2:1",0]}},` +
			`"4:1":{"_meta":{"title":"Noise Sampler"},"class_type":"Sampler","inputs":{"denoise":1,"image":["1",0],"sampler":"euler","seed":888,"steps":3}},` +
			`"5":{"_meta":{"title":"Save Image"},"class_type":"Save","inputs":{"filename_prefix":"b","images":["4:1",0]}},` +
			`"6:1":{"_meta":{"title":"Noise Sampler"},"class_type":"Sampler","inputs":{"denoise":1,"image":["1",0],"sampler":"euler","seed":5,"steps":3}},` +
			`"7":{"_meta":{"title":"Save Image"},"class_type":"Save","inputs":{"filename_prefix":"c","images":["6:1",0]}}}`,
	},
	{
		name: "nested subgraphs, a muted subgraph and one passing its input straight out",
		ui:   nestedSubgraphExport,
		want: `{"1":{"_meta":{"title":"Load Image"},"class_type":"Loader","inputs":{"image":"a.png"}},` +
			`"2:5:1":{"_meta":{"title":"Invert Image"},"class_type":"Invert","inputs":{"image":["1",0]}},` +
			`"3":{"_meta":{"title":"Save Image"},"class_type":"Save","inputs":{"filename_prefix":"nested","images":["2:5:1",0]}},` +
			`"4":{"_meta":{"title":"Save Image"},"class_type":"Save","inputs":{"filename_prefix":"through","images":["1",0]}},` +
			`"6":{"_meta":{"title":"Save Image"},"class_type":"Save","inputs":{"filename_prefix":"muted"}}}`,
	},
	{
		name: "a subgraph node's widget for an unlinked input gives each instance its own value",
		ui:   promotedWidgetExport,
		want: `{"1":{"_meta":{"title":"Load Image"},"class_type":"Loader","inputs":{"image":"a.png"}},` +
			`"2:1":{"_meta":{"title":"Noise Sampler"},"class_type":"Sampler","inputs":{"denoise":1,"image":["1",0],"sampler":"euler","seed":777,"steps":3}},` +
			`"3":{"_meta":{"title":"Save Image"},"class_type":"Save","inputs":{"filename_prefix":"a","images":["2:1",0]}},` +
			`"4:1":{"_meta":{"title":"Noise Sampler"},"class_type":"Sampler","inputs":{"denoise":1,"image":["1",0],"sampler":"euler","seed":888,"steps":3}},` +
			`"5":{"_meta":{"title":"Save Image"},"class_type":"Save","inputs":{"filename_prefix":"b","images":["4:1",0]}},` +
			`"6:1":{"_meta":{"title":"Noise Sampler"},"class_type":"Sampler","inputs":{"denoise":1,"image":["1",0],"sampler":"euler","seed":5,"steps":3}},` +
			`"7":{"_meta":{"title":"Save Image"},"class_type":"Save","inputs":{"filename_prefix":"c","images":["6:1",0]}}}`,
	},
}

// subgraphExport has a subgraph node (2) whose inside inverts and samples the image it is given.
const subgraphExport = `{
  "nodes": [
    {"id": 1, "type": "Loader", "mode": 0, "inputs": [], "outputs": [{"name": "IMAGE", "type": "IMAGE", "links": [1]}], "widgets_values": ["a.png", "image"]},
    {"id": 2, "type": "6f1c2b8e-0000-4000-8000-00000000000a", "mode": 0, "inputs": [{"name": "image", "type": "IMAGE", "link": 1}],
     "outputs": [{"name": "IMAGE", "type": "IMAGE", "links": [2]}], "widgets_values": []},
    {"id": 3, "type": "Save", "mode": 0, "inputs": [{"name": "images", "type": "IMAGE", "link": 2}], "outputs": [], "widgets_values": ["sub"]}
  ],
  "links": [[1, 1, 0, 2, 0, "IMAGE"], [2, 2, 0, 3, 0, "IMAGE"]],
  "definitions": {"subgraphs": [{
    "id": "6f1c2b8e-0000-4000-8000-00000000000a", "name": "Invert and noise", "version": 1,
    "inputNode": {"id": -10, "bounding": [0, 0, 10, 10]}, "outputNode": {"id": -20, "bounding": [0, 0, 10, 10]},
    "inputs": [{"id": "in-1", "name": "image", "type": "IMAGE", "linkIds": [10]}],
    "outputs": [{"id": "out-1", "name": "IMAGE", "type": "IMAGE", "linkIds": [12]}],
    "widgets": [],
    "nodes": [
      {"id": 1, "type": "Invert", "mode": 0, "inputs": [{"name": "image", "type": "IMAGE", "link": 10}], "outputs": [{"name": "IMAGE", "type": "IMAGE", "links": [11]}]},
      {"id": 3, "type": "Sampler", "mode": 0, "inputs": [{"name": "image", "type": "IMAGE", "link": 11}], "outputs": [{"name": "IMAGE", "type": "IMAGE", "links": [12]}],
       "widgets_values": [7, "fixed", 4, "euler", 1.0]}
    ],
    "links": [
      {"id": 10, "origin_id": -10, "origin_slot": 0, "target_id": 1, "target_slot": 0, "type": "IMAGE"},
      {"id": 11, "origin_id": 1, "origin_slot": 0, "target_id": 3, "target_slot": 0, "type": "IMAGE"},
      {"id": 12, "origin_id": 3, "origin_slot": 0, "target_id": -20, "target_slot": 0, "type": "IMAGE"}
    ]
  }]}
}`

// promotedWidgetExport has three instances of one subgraph whose seed input is drawn as a widget
// on the subgraph node: two hold their own seed, the third none (the inner widget's value stands).
const promotedWidgetExport = `{
  "nodes": [
    {"id": 1, "type": "Loader", "mode": 0, "outputs": [{"name": "IMAGE", "type": "IMAGE", "links": [1, 3, 5]}], "widgets_values": ["a.png", "image"]},
    {"id": 2, "type": "noise", "mode": 0, "inputs": [{"name": "image", "type": "IMAGE", "link": 1}, {"name": "seed", "type": "INT", "widget": {"name": "seed"}, "link": null}],
     "outputs": [{"name": "IMAGE", "type": "IMAGE", "links": [2]}], "widgets_values": [777]},
    {"id": 3, "type": "Save", "mode": 0, "inputs": [{"name": "images", "type": "IMAGE", "link": 2}], "widgets_values": ["a"]},
    {"id": 4, "type": "noise", "mode": 0, "inputs": [{"name": "image", "type": "IMAGE", "link": 3}, {"name": "seed", "type": "INT", "widget": {"name": "seed"}, "link": null}],
     "outputs": [{"name": "IMAGE", "type": "IMAGE", "links": [4]}], "widgets_values": {"seed": 888}},
    {"id": 5, "type": "Save", "mode": 0, "inputs": [{"name": "images", "type": "IMAGE", "link": 4}], "widgets_values": ["b"]},
    {"id": 6, "type": "noise", "mode": 0, "inputs": [{"name": "image", "type": "IMAGE", "link": 5}, {"name": "seed", "type": "INT", "widget": {"name": "seed"}, "link": null}],
     "outputs": [{"name": "IMAGE", "type": "IMAGE", "links": [6]}], "widgets_values": []},
    {"id": 7, "type": "Save", "mode": 0, "inputs": [{"name": "images", "type": "IMAGE", "link": 6}], "widgets_values": ["c"]}
  ],
  "links": [[1, 1, 0, 2, 0, "IMAGE"], [2, 2, 0, 3, 0, "IMAGE"], [3, 1, 0, 4, 0, "IMAGE"], [4, 4, 0, 5, 0, "IMAGE"], [5, 1, 0, 6, 0, "IMAGE"], [6, 6, 0, 7, 0, "IMAGE"]],
  "definitions": {"subgraphs": [{"id": "noise", "name": "Noise", "inputNode": {"id": -10}, "outputNode": {"id": -20},
    "inputs": [{"name": "image", "type": "IMAGE", "linkIds": [50]}, {"name": "seed", "type": "INT", "linkIds": [51]}],
    "outputs": [{"name": "IMAGE", "type": "IMAGE", "linkIds": [52]}],
    "nodes": [{"id": 1, "type": "Sampler", "mode": 0,
      "inputs": [{"name": "image", "type": "IMAGE", "link": 50}, {"name": "seed", "type": "INT", "widget": {"name": "seed"}, "link": 51}],
      "outputs": [{"name": "IMAGE", "type": "IMAGE", "links": [52]}], "widgets_values": [5, "fixed", 3, "euler", 1]}],
    "links": [{"id": 50, "origin_id": -10, "origin_slot": 0, "target_id": 1, "target_slot": 0, "type": "IMAGE"},
              {"id": 51, "origin_id": -10, "origin_slot": 1, "target_id": 1, "target_slot": 1, "type": "INT"},
              {"id": 52, "origin_id": 1, "origin_slot": 0, "target_id": -20, "target_slot": 0, "type": "IMAGE"}]}]}
}`

// nestedSubgraphExport: subgraph node 2 (outer) holds subgraph node 5 (inner) holding an Invert;
// node 7 is a muted instance of the outer subgraph; "through" passes its input straight out.
const nestedSubgraphExport = `{
  "nodes": [
    {"id": 1, "type": "Loader", "mode": 0, "inputs": [], "outputs": [{"name": "IMAGE", "type": "IMAGE", "links": [1, 3, 5]}], "widgets_values": ["a.png", "image"]},
    {"id": 2, "type": "outer", "mode": 0, "inputs": [{"name": "image", "type": "IMAGE", "link": 1}], "outputs": [{"name": "IMAGE", "type": "IMAGE", "links": [2]}]},
    {"id": 3, "type": "Save", "mode": 0, "inputs": [{"name": "images", "type": "IMAGE", "link": 2}], "outputs": [], "widgets_values": ["nested"]},
    {"id": 8, "type": "through", "mode": 0, "inputs": [{"name": "image", "type": "IMAGE", "link": 3}], "outputs": [{"name": "IMAGE", "type": "IMAGE", "links": [4]}]},
    {"id": 4, "type": "Save", "mode": 0, "inputs": [{"name": "images", "type": "IMAGE", "link": 4}], "outputs": [], "widgets_values": ["through"]},
    {"id": 7, "type": "outer", "mode": 2, "inputs": [{"name": "image", "type": "IMAGE", "link": 5}], "outputs": [{"name": "IMAGE", "type": "IMAGE", "links": [6]}]},
    {"id": 6, "type": "Save", "mode": 0, "inputs": [{"name": "images", "type": "IMAGE", "link": 6}], "outputs": [], "widgets_values": ["muted"]}
  ],
  "links": [[1, 1, 0, 2, 0, "IMAGE"], [2, 2, 0, 3, 0, "IMAGE"], [3, 1, 0, 8, 0, "IMAGE"], [4, 8, 0, 4, 0, "IMAGE"], [5, 1, 0, 7, 0, "IMAGE"], [6, 7, 0, 6, 0, "IMAGE"]],
  "definitions": {"subgraphs": [
    {"id": "outer", "name": "Outer", "inputNode": {"id": -10}, "outputNode": {"id": -20},
     "inputs": [{"name": "image", "type": "IMAGE", "linkIds": [20]}], "outputs": [{"name": "IMAGE", "type": "IMAGE", "linkIds": [21]}],
     "nodes": [{"id": 5, "type": "inner", "mode": 0, "inputs": [{"name": "image", "type": "IMAGE", "link": 20}], "outputs": [{"name": "IMAGE", "type": "IMAGE", "links": [21]}]}],
     "links": [{"id": 20, "origin_id": -10, "origin_slot": 0, "target_id": 5, "target_slot": 0, "type": "IMAGE"},
               {"id": 21, "origin_id": 5, "origin_slot": 0, "target_id": -20, "target_slot": 0, "type": "IMAGE"}]},
    {"id": "inner", "name": "Inner", "inputNode": {"id": -10}, "outputNode": {"id": -20},
     "inputs": [{"name": "image", "type": "IMAGE", "linkIds": [30]}], "outputs": [{"name": "IMAGE", "type": "IMAGE", "linkIds": [31]}],
     "nodes": [{"id": 1, "type": "Invert", "mode": 0, "inputs": [{"name": "image", "type": "IMAGE", "link": 30}], "outputs": [{"name": "IMAGE", "type": "IMAGE", "links": [31]}]}],
     "links": [{"id": 30, "origin_id": -10, "origin_slot": 0, "target_id": 1, "target_slot": 0, "type": "IMAGE"},
               {"id": 31, "origin_id": 1, "origin_slot": 0, "target_id": -20, "target_slot": 0, "type": "IMAGE"}]},
    {"id": "through", "name": "Through", "inputNode": {"id": -10}, "outputNode": {"id": -20},
     "inputs": [{"name": "image", "type": "IMAGE", "linkIds": [40]}], "outputs": [{"name": "IMAGE", "type": "IMAGE", "linkIds": [40]}],
     "nodes": [], "links": [{"id": 40, "origin_id": -10, "origin_slot": 0, "target_id": -20, "target_slot": 0, "type": "IMAGE"}]}
  ]}
}`

// fromUI converts uiExport with the node classes of objectInfo, as the provider does.
func fromUI(uiExport, objectInfo []byte) ([]byte, error) {
	defs, err := ParseClassDefs(objectInfo)
	if err != nil {
		return nil, err
	}
	return defs.FromUI(uiExport)
}

func TestFromUI(t *testing.T) {
	t.Parallel()
	info := testObjectInfo(t)
	for _, tt := range fromUICases {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := fromUI([]byte(tt.ui), info)
			if err != nil {
				t.Fatalf("FromUI: %v", err)
			}
			if string(got) != tt.want {
				t.Fatalf("FromUI =\n%s\nwant\n%s", got, tt.want)
			}
			if _, err := Parse(got); err != nil {
				t.Fatalf("the result is not an API workflow: %v", err)
			}
		})
	}
}

// Refusals name the node (id, class, title) and what did not fit.
func TestFromUIRefuses(t *testing.T) {
	t.Parallel()
	info := testObjectInfo(t)
	loader := `{"id": 1, "type": "Loader", "mode": 0, "inputs": [], "outputs": [{"name": "IMAGE", "type": "IMAGE", "links": [1]}], "widgets_values": ["a.png", "image"]}`
	tests := []struct {
		name      string
		ui        string
		wantNode  string
		wantClass string
		wantTitle string
		wantText  string
	}{
		{
			name:     "unknown class",
			ui:       `{"nodes": [{"id": 7, "type": "Mystery", "mode": 0, "title": "odd one", "inputs": [], "outputs": [], "widgets_values": [1]}], "links": []}`,
			wantNode: "7", wantClass: "Mystery", wantTitle: "odd one", wantText: `unknown class "Mystery"`,
		},
		{
			name: "widget count: the seed's control value is missing",
			ui: `{"nodes": [{"id": 2, "type": "Sampler", "mode": 0, "title": "KS", "inputs": [{"name": "image", "type": "IMAGE", "link": null}], "outputs": [],
			  "widgets_values": [1, 20, "euler", 1]}], "links": []}`,
			wantNode: "2", wantClass: "Sampler", wantTitle: "KS", wantText: "widgets_values has 4 values, but Sampler stores 5: [seed, control_after_generate, steps, sampler, denoise]",
		},
		{
			name: "widget values in the wrong order",
			ui: `{"nodes": [{"id": 2, "type": "Sampler", "mode": 0, "inputs": [], "outputs": [],
			  "widgets_values": [1, "randomize", "euler", 20, 1]}], "links": []}`,
			wantNode: "2", wantClass: "Sampler", wantText: `widgets_values[2] (steps) does not fit: "euler" is not a value of INT input "steps"`,
		},
		{
			name: "a fractional seed",
			ui: `{"nodes": [{"id": 2, "type": "Sampler", "mode": 0, "inputs": [], "outputs": [],
			  "widgets_values": [1.5, "randomize", 20, "euler", 1]}], "links": []}`,
			wantNode: "2", wantClass: "Sampler", wantText: `1.5 is not a value of INT input "seed"`,
		},
		{
			name:     "object widgets_values naming no widget",
			ui:       `{"nodes": [{"id": 3, "type": "Text", "mode": 0, "inputs": [], "outputs": [], "widgets_values": {"value": "x", "colour": "red"}}], "links": []}`,
			wantNode: "3", wantClass: "Text", wantText: `widgets_values has "colour", which is not a widget of Text`,
		},
		{
			name:     "object widgets_values missing an unlinked widget",
			ui:       `{"nodes": [{"id": 3, "type": "Text", "mode": 0, "inputs": [], "outputs": [], "widgets_values": {}}], "links": []}`,
			wantNode: "3", wantClass: "Text", wantText: `no value for widget "value"`,
		},
		{
			name: "a link from a missing node",
			ui: `{"nodes": [{"id": 3, "type": "Invert", "mode": 0, "inputs": [{"name": "image", "type": "IMAGE", "link": 1}], "outputs": []}],
			  "links": [[1, 99, 0, 3, 0, "IMAGE"]]}`,
			wantNode: "3", wantClass: "Invert", wantText: "link 1 comes from node 99, which the export does not have",
		},
		{
			name: "a link from a missing output slot",
			ui: `{"nodes": [` + loader + `, {"id": 3, "type": "Invert", "mode": 0, "inputs": [{"name": "image", "type": "IMAGE", "link": 1}], "outputs": []}],
			  "links": [[1, 1, 5, 3, 0, "IMAGE"]]}`,
			wantNode: "1", wantClass: "Loader", wantText: "output slot 5, but Loader has 2 outputs",
		},
		{
			name:     "an input wired to a link the export lacks",
			ui:       `{"nodes": [{"id": 3, "type": "Invert", "mode": 0, "inputs": [{"name": "image", "type": "IMAGE", "link": 42}], "outputs": []}], "links": []}`,
			wantNode: "3", wantClass: "Invert", wantText: "link 42, which the export does not have",
		},
		{
			name: "a link whose target is another node",
			ui: `{"nodes": [` + loader + `, {"id": 3, "type": "Invert", "mode": 0, "inputs": [{"name": "image", "type": "IMAGE", "link": 1}], "outputs": []}],
			  "links": [[1, 1, 0, 4, 0, "IMAGE"]]}`,
			wantNode: "3", wantClass: "Invert", wantText: "that link goes to node 4 slot 0",
		},
		{
			name: "a link into an input the class lacks",
			ui: `{"nodes": [` + loader + `, {"id": 3, "type": "Invert", "mode": 0, "inputs": [{"name": "picture", "type": "IMAGE", "link": 1}], "outputs": []}],
			  "links": [[1, 1, 0, 3, 0, "IMAGE"]]}`,
			wantNode: "3", wantClass: "Invert", wantText: `Invert has no input "picture"`,
		},
		{
			name: "a cycle",
			ui: `{"nodes": [
			  {"id": 1, "type": "Invert", "mode": 0, "title": "first", "inputs": [{"name": "image", "type": "IMAGE", "link": 2}], "outputs": [{"name": "IMAGE", "type": "IMAGE", "links": [1]}]},
			  {"id": 2, "type": "Invert", "mode": 0, "title": "second", "inputs": [{"name": "image", "type": "IMAGE", "link": 1}], "outputs": [{"name": "IMAGE", "type": "IMAGE", "links": [2]}]}
			], "links": [[1, 1, 0, 2, 0, "IMAGE"], [2, 2, 0, 1, 0, "IMAGE"]]}`,
			wantNode: "2", wantClass: "Invert", wantTitle: "second", wantText: `input "image" closes a cycle through node 1`,
		},
		{
			name: "a loop of reroutes",
			ui: `{"nodes": [
			  {"id": 2, "type": "Reroute", "mode": 0, "inputs": [{"name": "", "type": "*", "link": 7}], "outputs": [{"name": "", "type": "IMAGE", "links": [6]}]},
			  {"id": 3, "type": "Reroute", "mode": 0, "inputs": [{"name": "", "type": "*", "link": 6}], "outputs": [{"name": "", "type": "IMAGE", "links": [5, 7]}]},
			  {"id": 4, "type": "Invert", "mode": 0, "inputs": [{"name": "image", "type": "IMAGE", "link": 5}], "outputs": []}
			], "links": [[5, 3, 0, 4, 0, "IMAGE"], [6, 2, 0, 3, 0, "IMAGE"], [7, 3, 0, 2, 0, "IMAGE"]]}`,
			wantNode: "3", wantClass: "Reroute", wantText: "loop of links",
		},
		{
			name: "a subgraph output fed back into its own input",
			ui: `{"nodes": [
			  {"id": 1, "type": "sg", "mode": 0, "inputs": [{"name": "image", "type": "IMAGE", "link": 1}], "outputs": [{"name": "IMAGE", "type": "IMAGE", "links": [1, 2]}]},
			  {"id": 2, "type": "Invert", "mode": 0, "inputs": [{"name": "image", "type": "IMAGE", "link": 2}], "outputs": []}
			], "links": [[1, 1, 0, 1, 0, "IMAGE"], [2, 1, 0, 2, 0, "IMAGE"]],
			  "definitions": {"subgraphs": [{"id": "sg", "name": "Pass-through", "inputNode": {"id": -10}, "outputNode": {"id": -20},
			    "inputs": [{"name": "image", "type": "IMAGE", "linkIds": [10]}], "outputs": [{"name": "IMAGE", "type": "IMAGE", "linkIds": [10]}],
			    "nodes": [], "links": [{"id": 10, "origin_id": -10, "origin_slot": 0, "target_id": -20, "target_slot": 0, "type": "IMAGE"}]}]}}`,
			wantNode: "1", wantClass: "sg", wantTitle: "Pass-through", wantText: "output slot 0 is fed through a loop of links",
		},
		{
			name: "a subgraph that contains itself",
			ui: `{"nodes": [{"id": 1, "type": "self", "mode": 0, "inputs": [], "outputs": []}], "links": [],
			  "definitions": {"subgraphs": [{"id": "self", "name": "Ouroboros", "inputs": [], "outputs": [],
			    "nodes": [{"id": 1, "type": "self", "mode": 0, "inputs": [], "outputs": []}], "links": []}]}}`,
			wantNode: "1:1", wantClass: "self", wantTitle: "Ouroboros", wantText: "the subgraph contains itself",
		},
		{
			name: "a node inside a subgraph",
			ui: `{"nodes": [{"id": 4, "type": "sg", "mode": 0, "inputs": [], "outputs": []}], "links": [],
			  "definitions": {"subgraphs": [{"id": "sg", "name": "S", "inputs": [], "outputs": [],
			    "nodes": [{"id": 9, "type": "Text", "mode": 0, "inputs": [], "outputs": [], "widgets_values": [3]}], "links": []}]}}`,
			wantNode: "4:9", wantClass: "Text", wantText: `3 is not a value of STRING input "value"`,
		},
		{
			name:     "a mode the editor does not use",
			ui:       `{"nodes": [{"id": 5, "type": "Text", "mode": 1, "inputs": [], "outputs": [], "widgets_values": ["x"]}], "links": []}`,
			wantNode: "5", wantClass: "Text", wantText: "mode 1",
		},
		{
			name:     "a class whose definition cannot be read",
			ui:       `{"nodes": [{"id": 5, "type": "Broken", "mode": 0, "inputs": [], "outputs": []}], "links": []}`,
			wantNode: "5", wantClass: "Broken", wantText: "object_info required inputs cannot be read",
		},
		{
			name: "a primitive whose value does not fit its target",
			ui: `{"nodes": [
			  {"id": 8, "type": "PrimitiveNode", "mode": 0, "inputs": [], "outputs": [{"name": "INT", "type": "INT", "links": [7]}], "widgets_values": ["not a number", "fixed"]},
			  {"id": 2, "type": "Sampler", "mode": 0, "inputs": [{"name": "seed", "type": "INT", "widget": {"name": "seed"}, "link": 7}], "outputs": [], "widgets_values": [1, "randomize", 20, "euler", 1]}
			], "links": [[7, 8, 0, 2, 0, "INT"]]}`,
			wantNode: "2", wantClass: "Sampler", wantText: `input "seed" is fed a value (by a primitive node or a subgraph node's widget) that does not fit`,
		},
		{
			name:     "a subgraph node storing more widget values than it has widget inputs",
			ui:       strings.Replace(promotedWidgetExport, `"widgets_values": [777]`, `"widgets_values": [777, "fixed"]`, 1),
			wantNode: "2", wantClass: "noise", wantTitle: "Noise", wantText: "widgets_values has 2 values, but the subgraph node has 1 inputs drawn as widgets: [seed]",
		},
		{
			name:     "a subgraph node's widget value that does not fit the inner input",
			ui:       strings.Replace(promotedWidgetExport, `"widgets_values": [777]`, `"widgets_values": ["777"]`, 1),
			wantNode: "2:1", wantClass: "Sampler", wantText: `"777" is not a value of INT input "seed"`,
		},
		{
			name:     "two nodes with one id",
			ui:       `{"nodes": [{"id": 5, "type": "Text", "mode": 0, "widgets_values": ["x"]}, {"id": 5, "type": "Text", "mode": 0, "widgets_values": ["y"]}], "links": []}`,
			wantNode: "5", wantClass: "Text", wantText: "another node has the same id",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			out, err := fromUI([]byte(tt.ui), info)
			var ce *ConvertError
			if !errors.As(err, &ce) {
				t.Fatalf("FromUI = %s, %v; want a *ConvertError", out, err)
			}
			if ce.NodeID != tt.wantNode || ce.Class != tt.wantClass || ce.Title != tt.wantTitle {
				t.Errorf("refused node %q class %q title %q, want %q %q %q", ce.NodeID, ce.Class, ce.Title, tt.wantNode, tt.wantClass, tt.wantTitle)
			}
			msg := err.Error()
			if !strings.Contains(msg, tt.wantText) || !strings.Contains(msg, "node "+tt.wantNode+" ("+tt.wantClass) {
				t.Errorf("error %q does not name node %s (%s) and contain %q", msg, tt.wantNode, tt.wantClass, tt.wantText)
			}
		})
	}
}

func TestFromUIRefusesDocuments(t *testing.T) {
	t.Parallel()
	info := testObjectInfo(t)
	tests := []struct{ name, ui, info, want string }{
		{"an API-format workflow", `{"1": {"class_type": "Text", "inputs": {"value": "x"}}}`, "", "already an API-format workflow"},
		{"neither format", `{"nodes": {}, "version": 1}`, "", "not a UI-format export"},
		{"nothing that runs", `{"nodes": [{"id": 1, "type": "Note", "mode": 0, "widgets_values": ["hi"]}], "links": []}`, "", "no node that runs"},
		{"not JSON", `{"nodes": [`, "", "not a JSON object"},
		{"a malformed link", `{"nodes": [], "links": [[1, 2]]}`, "", "a link must be"},
		{"object_info that is not an object", `{"nodes": [], "links": []}`, `[1]`, "object_info is not a JSON object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			oi := info
			if tt.info != "" {
				oi = []byte(tt.info)
			}
			out, err := fromUI([]byte(tt.ui), oi)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("FromUI = %s, %v; want an error containing %q", out, err, tt.want)
			}
		})
	}
}

// A UI export that differs only in formatting, key order and number spelling converts to the
// same bytes: a reformatted file is no change.
func TestFromUIReformattedIsIdentical(t *testing.T) {
	t.Parallel()
	info := testObjectInfo(t)
	for _, tt := range fromUICases {
		want, err := fromUI([]byte(tt.ui), info)
		if err != nil {
			t.Fatal(err)
		}
		var indented bytes.Buffer
		if err := json.Indent(&indented, []byte(tt.ui), "", "\t\t"); err != nil {
			t.Fatal(err)
		}
		resorted := reorderKeys(t, []byte(tt.ui))
		for _, variant := range [][]byte{indented.Bytes(), resorted, bytes.ReplaceAll(resorted, []byte(`1.0`), []byte(`1e0`))} {
			got, err := fromUI(variant, info)
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("%s: reformatted export converts to\n%s (%v)\nwant\n%s", tt.name, got, err, want)
			}
		}
	}
}

// reorderKeys re-encodes a document with its object keys sorted and numbers as written.
func reorderKeys(t *testing.T, data []byte) []byte {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatal(err)
	}
	out, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// FuzzFromUI: any input converts to a valid, canonical API workflow whose links point at nodes
// and output slots that exist, or is refused with an error; it never panics.
func FuzzFromUI(f *testing.F) {
	info := testObjectInfo(f)
	defs, err := ParseClassDefs(info)
	if err != nil {
		f.Fatal(err)
	}
	for _, tt := range fromUICases {
		f.Add([]byte(tt.ui))
	}
	f.Add([]byte(`{"nodes": [{"id": 1, "type": "Reroute", "inputs": [{"link": 1}]}], "links": [[1, 1, 0, 1, 0]]}`))
	f.Fuzz(func(t *testing.T, ui []byte) {
		out, err := defs.FromUI(ui)
		if err != nil {
			return
		}
		checkConverted(t, defs, out)
	})
}

func checkConverted(t *testing.T, defs ClassDefs, out []byte) {
	t.Helper()
	g, err := Parse(out)
	if err != nil {
		t.Fatalf("output is not an API workflow: %v\n%s", err, out)
	}
	if canon, err := canonicaljson.Canonical(out); err != nil || !bytes.Equal(canon, out) {
		t.Fatalf("output is not canonical: %s", out)
	}
	for id, n := range g {
		def := defs[n.ClassType]
		if def == nil {
			t.Fatalf("node %s has class %q, which object_info lacks", id, n.ClassType)
		}
		for name, v := range n.Inputs {
			if _, ok := def.Input(name); !ok {
				t.Fatalf("node %s has input %q, which %s lacks", id, name, n.ClassType)
			}
			var link []any
			if json.Unmarshal(v, &link) != nil {
				continue
			}
			from, ok := LinkSource(v)
			if !ok {
				t.Fatalf("node %s input %q is an array but not a link: %s", id, name, v)
			}
			slot := int(link[1].(float64))
			if src, exists := g[from]; !exists || slot < 0 || slot >= len(defs[src.ClassType].Outputs) {
				t.Fatalf("node %s input %q links to %s slot %d, which does not exist", id, name, from, slot)
			}
		}
	}
}
