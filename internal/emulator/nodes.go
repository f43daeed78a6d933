package emulator

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	_ "image/gif" // LoadImage decodes what uploads may hold
	_ "image/jpeg"
	"image/png"
	"math"
	"math/rand/v2"
	"path"
	"strings"
)

// Value types carried between nodes.
const (
	typeInt    = "INT"
	typeFloat  = "FLOAT"
	typeString = "STRING"
	typeImage  = "IMAGE"
	typeMask   = "MASK"
)

// imageBatch is the in-memory IMAGE value: a batch of RGBA images.
type imageBatch []*image.NRGBA

// maskBatch is the in-memory MASK value (1 - alpha, as the engine does).
type maskBatch []*image.Gray

// inputSpec describes one input of a node class.
type inputSpec struct {
	Name     string
	Type     string
	Required bool
	Default  any
	Min, Max float64 // numeric bounds when Max > Min
	Asset    bool    // also accepts a core/ASSET reference object (STRING inputs)
	// Choices lists the accepted values of a choice (combo) input; object_info renders it as a
	// list of strings in place of the type. Asset inputs list the uploaded file names instead.
	Choices []string
	// ControlAfterGenerate marks a seed-like input: the editor draws a control widget after it
	// (fixed, increment, randomize...) whose value it stores but never sends.
	ControlAfterGenerate bool
	// ForceInput inputs are sockets only: the editor draws no widget for them.
	ForceInput bool
}

// nodeClass is a node type the engine can execute.
type nodeClass struct {
	Name        string
	Inputs      []inputSpec
	Outputs     []string // output slot types
	OutputNames []string
	Output      bool   // an output node: execution starts from these
	StepsInput  string // input holding the sampler step count (progress weight), if any
	Category    string
	run         func(ctx context.Context, x *nodeRun, in map[string]any) ([]any, error)
}

// nodeRun is what a node sees of the engine while it executes.
type nodeRun struct {
	s      *Server
	j      *job
	nodeID string
	class  *nodeClass
	// step reports sampler progress: step i of n.
	step func(i, n int)
	// sleepStep waits one sampler step (StepDuration); it fails when the job is canceled.
	sleepStep func(ctx context.Context) error
}

// nodeClasses is the registry of built-in node classes, by name. Other files may
// add classes in init functions.
var nodeClasses = map[string]*nodeClass{}

func registerNode(c *nodeClass) {
	if _, dup := nodeClasses[c.Name]; dup {
		panic("emulator: node class registered twice: " + c.Name)
	}
	nodeClasses[c.Name] = c
}

// ImageFlip's flip_method labels, as the engine's core node names them.
const flipVertically, flipHorizontally = "x-axis: vertically", "y-axis: horizontally"

// builtinNodeClasses are the engine's own node classes, registered at start.
var builtinNodeClasses = []*nodeClass{
	{
		Name: "EmptyImage", Category: "image",
		Inputs: []inputSpec{
			{Name: "width", Type: typeInt, Required: true, Default: 512, Min: 1, Max: 4096},
			{Name: "height", Type: typeInt, Required: true, Default: 512, Min: 1, Max: 4096},
			{Name: "batch_size", Type: typeInt, Required: true, Default: 1, Min: 1, Max: 64},
			{Name: "color", Type: typeInt, Required: true, Default: 0, Min: 0, Max: 0xFFFFFF},
		},
		Outputs: []string{typeImage}, OutputNames: []string{"IMAGE"},
		run: runEmptyImage,
	},
	{
		Name: "ImageInvert", Category: "image",
		Inputs:  []inputSpec{{Name: "image", Type: typeImage, Required: true}},
		Outputs: []string{typeImage}, OutputNames: []string{"IMAGE"},
		run: func(_ context.Context, _ *nodeRun, in map[string]any) ([]any, error) {
			src := in["image"].(imageBatch)
			out := make(imageBatch, len(src))
			for i, im := range src {
				c := cloneNRGBA(im)
				for p := 0; p < len(c.Pix); p += 4 {
					c.Pix[p], c.Pix[p+1], c.Pix[p+2] = 255-c.Pix[p], 255-c.Pix[p+1], 255-c.Pix[p+2]
				}
				out[i] = c
			}
			return []any{out}, nil
		},
	},
	{
		Name: "ImageBlur", Category: "image/postprocessing",
		Inputs: []inputSpec{
			{Name: "image", Type: typeImage, Required: true},
			{Name: "blur_radius", Type: typeInt, Required: true, Default: 1, Min: 1, Max: 31},
			{Name: "sigma", Type: typeFloat, Required: true, Default: 1.0, Min: 0.1, Max: 10},
		},
		Outputs: []string{typeImage}, OutputNames: []string{"IMAGE"},
		run: func(_ context.Context, _ *nodeRun, in map[string]any) ([]any, error) {
			src := in["image"].(imageBatch)
			r := asInt(in["blur_radius"])
			out := make(imageBatch, len(src))
			for i, im := range src {
				out[i] = boxBlur(im, r)
			}
			return []any{out}, nil
		},
	},
	{
		// As the engine's core node: flip_method is a choice of two labels.
		Name: "ImageFlip", Category: "image/transform",
		Inputs: []inputSpec{
			{Name: "image", Type: typeImage, Required: true},
			{Name: "flip_method", Type: typeString, Required: true, Default: flipVertically, Choices: []string{flipVertically, flipHorizontally}},
		},
		Outputs: []string{typeImage}, OutputNames: []string{"IMAGE"},
		run: func(_ context.Context, _ *nodeRun, in map[string]any) ([]any, error) {
			src := in["image"].(imageBatch)
			vertical := asString(in["flip_method"]) == flipVertically
			out := make(imageBatch, len(src))
			for i, im := range src {
				c := image.NewNRGBA(im.Rect)
				w, h := im.Rect.Dx(), im.Rect.Dy()
				for y := 0; y < h; y++ {
					for x := 0; x < w; x++ {
						sx, sy := w-1-x, y
						if vertical {
							sx, sy = x, h-1-y
						}
						copy(c.Pix[y*c.Stride+4*x:y*c.Stride+4*x+4], im.Pix[sy*im.Stride+4*sx:sy*im.Stride+4*sx+4])
					}
				}
				out[i] = c
			}
			return []any{out}, nil
		},
	},
	{
		Name: "LoadImage", Category: "image",
		Inputs:  []inputSpec{{Name: "image", Type: typeString, Required: true, Asset: true}},
		Outputs: []string{typeImage, typeMask}, OutputNames: []string{"IMAGE", "MASK"},
		run: runLoadImage,
	},
	{
		Name: "SaveImage", Category: "image", Output: true,
		Inputs: []inputSpec{
			{Name: "images", Type: typeImage, Required: true},
			{Name: "filename_prefix", Type: typeString, Required: true, Default: "svc"},
		},
		run: func(_ context.Context, x *nodeRun, in map[string]any) ([]any, error) {
			return nil, saveImages(x, in["images"].(imageBatch), asString(in["filename_prefix"]))
		},
	},
	{
		Name: "PreviewImage", Category: "image", Output: true,
		Inputs: []inputSpec{{Name: "images", Type: typeImage, Required: true}},
		run: func(_ context.Context, x *nodeRun, in map[string]any) ([]any, error) {
			suffix := make([]byte, 5)
			for i := range suffix {
				suffix[i] = "abcdefghijklmnopqrstuvwxyz"[rand.IntN(26)]
			}
			return nil, saveImages(x, in["images"].(imageBatch), "svc_temp_"+string(suffix))
		},
	},
	{
		Name: "PrimitiveString", Category: "utils/primitive",
		Inputs:  []inputSpec{{Name: "value", Type: typeString, Required: true, Default: ""}},
		Outputs: []string{typeString}, OutputNames: []string{"STRING"},
		run: func(_ context.Context, _ *nodeRun, in map[string]any) ([]any, error) {
			return []any{asString(in["value"])}, nil
		},
	},
	{
		Name: "PrimitiveInt", Category: "utils/primitive",
		Inputs:  []inputSpec{{Name: "value", Type: typeInt, Required: true, Default: 0}},
		Outputs: []string{typeInt}, OutputNames: []string{"INT"},
		run: func(_ context.Context, _ *nodeRun, in map[string]any) ([]any, error) {
			return []any{asInt(in["value"])}, nil
		},
	},
	{
		Name: "PrimitiveFloat", Category: "utils/primitive",
		Inputs:  []inputSpec{{Name: "value", Type: typeFloat, Required: true, Default: 0.0}},
		Outputs: []string{typeFloat}, OutputNames: []string{"FLOAT"},
		run: func(_ context.Context, _ *nodeRun, in map[string]any) ([]any, error) {
			return []any{asFloat(in["value"])}, nil
		},
	},
	{
		Name: "SaveText", Category: "utils", Output: true,
		Inputs: []inputSpec{
			{Name: "text", Type: typeString, Required: true},
			{Name: "filename_prefix", Type: typeString, Required: true, Default: "svc"},
		},
		run: func(_ context.Context, x *nodeRun, in map[string]any) ([]any, error) {
			name := x.j.nextName(asString(in["filename_prefix"]), "txt")
			x.s.commitOutput(x.j, x.nodeID, name, "text", "text/plain", []byte(asString(in["text"])))
			return nil, nil
		},
	},
	{
		Name: "ImageNoiseSampler", Category: "sampling", StepsInput: "steps",
		Inputs: []inputSpec{
			{Name: "image", Type: typeImage, Required: true},
			{Name: "seed", Type: typeInt, Required: true, Default: 0, Min: 0, Max: math.MaxInt64, ControlAfterGenerate: true},
			{Name: "steps", Type: typeInt, Required: true, Default: 20, Min: 1, Max: 10000},
			{Name: "denoise", Type: typeFloat, Required: false, Default: 1.0, Min: 0, Max: 1},
		},
		Outputs: []string{typeImage}, OutputNames: []string{"IMAGE"},
		run: runNoiseSampler,
	},
}

func init() {
	for _, c := range builtinNodeClasses {
		registerNode(c)
	}
}

func runEmptyImage(_ context.Context, _ *nodeRun, in map[string]any) ([]any, error) {
	w, h, n, c := asInt(in["width"]), asInt(in["height"]), asInt(in["batch_size"]), asInt(in["color"])
	fill := color.NRGBA{R: uint8(c >> 16), G: uint8(c >> 8), B: uint8(c), A: 255}
	out := make(imageBatch, n)
	for i := range out {
		im := image.NewNRGBA(image.Rect(0, 0, w, h))
		draw.Draw(im, im.Bounds(), &image.Uniform{C: fill}, image.Point{}, draw.Src)
		out[i] = im
	}
	return []any{out}, nil
}

func runLoadImage(_ context.Context, x *nodeRun, in map[string]any) ([]any, error) {
	x.s.mu.Lock()
	var a *asset
	switch v := in["image"].(type) {
	case string:
		a = x.s.assetByNameLocked(v)
	case map[string]any:
		id, _ := v["id"].(string)
		a = x.s.lookupAssetLocked(id)
	}
	x.s.mu.Unlock()
	if a == nil {
		return nil, fmt.Errorf("LoadImage: image not found: %v", in["image"])
	}
	img, _, err := image.Decode(a.content())
	if err != nil {
		return nil, fmt.Errorf("LoadImage: cannot decode %q: %w", a.name, err)
	}
	b := img.Bounds()
	rgba := image.NewNRGBA(image.Rect(0, 0, b.Dx(), b.Dy()))
	draw.Draw(rgba, rgba.Bounds(), img, b.Min, draw.Src)
	mask := image.NewGray(rgba.Bounds())
	for i := 0; i < len(mask.Pix); i++ {
		mask.Pix[i] = 255 - rgba.Pix[4*i+3]
	}
	return []any{imageBatch{rgba}, maskBatch{mask}}, nil
}

func runNoiseSampler(ctx context.Context, x *nodeRun, in map[string]any) ([]any, error) {
	src := in["image"].(imageBatch)
	seed, steps, denoise := asInt(in["seed"]), asInt(in["steps"]), asFloat(in["denoise"])
	out := make(imageBatch, len(src))
	for i, im := range src {
		out[i] = cloneNRGBA(im)
	}
	amp := 64 * denoise / float64(steps)
	for step := 1; step <= steps; step++ {
		if err := x.sleepStep(ctx); err != nil {
			return nil, err
		}
		rng := rand.New(rand.NewPCG(uint64(seed), uint64(step)))
		for _, im := range out {
			for p := 0; p < len(im.Pix); p += 4 {
				for c := 0; c < 3; c++ {
					v := float64(im.Pix[p+c]) + (rng.Float64()*2-1)*amp
					im.Pix[p+c] = uint8(math.Max(0, math.Min(255, math.Round(v))))
				}
			}
		}
		x.step(step, steps)
	}
	return []any{out}, nil
}

// saveImages commits one PNG per batch item as outputs of the running job.
func saveImages(x *nodeRun, images imageBatch, prefix string) error {
	for _, im := range images {
		var buf bytes.Buffer
		if err := png.Encode(&buf, im); err != nil {
			return err
		}
		name := x.j.nextName(prefix, "png")
		x.s.commitOutput(x.j, x.nodeID, name, "image", "image/png", buf.Bytes())
	}
	return nil
}

func cloneNRGBA(im *image.NRGBA) *image.NRGBA {
	c := image.NewNRGBA(im.Rect)
	copy(c.Pix, im.Pix)
	return c
}

// boxBlur is a separable box blur of radius r (edges clamped).
func boxBlur(src *image.NRGBA, r int) *image.NRGBA {
	w, h := src.Rect.Dx(), src.Rect.Dy()
	pass := func(in *image.NRGBA, horizontal bool) *image.NRGBA {
		out := image.NewNRGBA(in.Rect)
		for y := 0; y < h; y++ {
			for x := 0; x < w; x++ {
				var sum [4]int
				for k := -r; k <= r; k++ {
					xx, yy := x, y
					if horizontal {
						xx = min(max(x+k, 0), w-1)
					} else {
						yy = min(max(y+k, 0), h-1)
					}
					o := yy*in.Stride + xx*4
					for c := 0; c < 4; c++ {
						sum[c] += int(in.Pix[o+c])
					}
				}
				o := y*out.Stride + x*4
				for c := 0; c < 4; c++ {
					out.Pix[o+c] = uint8(sum[c] / (2*r + 1))
				}
			}
		}
		return out
	}
	return pass(pass(src, true), false)
}

// sanitizePrefix keeps the file-name part of a filename_prefix.
func sanitizePrefix(p string) string {
	p = path.Base(strings.ReplaceAll(p, `\`, "/"))
	if p == "." || p == "/" || p == "" {
		return "svc"
	}
	return p
}

func asInt(v any) int {
	switch n := v.(type) {
	case int:
		return n
	case float64:
		return int(n)
	}
	return 0
}

func asFloat(v any) float64 {
	switch n := v.(type) {
	case int:
		return float64(n)
	case float64:
		return n
	}
	return 0
}

func asString(v any) string {
	s, _ := v.(string)
	return s
}
