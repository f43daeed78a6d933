package provider

import (
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"math/big"
	"path/filepath"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/svc-org/terraform-provider-svc/internal/workflow"
)

// batchRowInput is one row of svc_job_batch as configured: the template with the row's
// overrides applied, canonical, and the digest of that workflow, which is what decides whether
// the row changed.
type batchRowInput struct {
	key      string
	workflow []byte // canonical JSON of the template with the row's overrides applied
	hash     string // digest of workflow
}

// batchRowInputs reads the rows value (a map or object of row key to `{ node = { input = value
// } }`) against the template and returns the rows sorted by key. Any row that names a node the
// template lacks, or is not shaped as an object of objects, is an error naming the row.
func batchRowInputs(template string, rows tftypes.Value) ([]batchRowInput, error) {
	raw, err := goValueOf(rows)
	if err != nil {
		return nil, fmt.Errorf("rows: %w", err)
	}
	return batchRowInputsOf(template, raw)
}

// batchRowInputsOf is batchRowInputs of rows as plain Go values (goValueOf).
func batchRowInputsOf(template string, rows any) ([]batchRowInput, error) {
	byKey, err := batchRowOverrides(rows)
	if err != nil {
		return nil, err
	}
	out := make([]batchRowInput, 0, len(byKey))
	var tmpl *workflow.Template
	for _, key := range slices.Sorted(mapKeys(byKey)) {
		if tmpl == nil {
			// The template is parsed once for every row (and not at all without rows).
			if tmpl, err = workflow.NewTemplate([]byte(template)); err != nil {
				return nil, fmt.Errorf("rows[%q]: %w", key, err)
			}
		}
		// The digest is of the canonical workflow: reformatting the template or a row, or
		// spelling a number another way, is no change.
		wf, err := tmpl.PatchCanonical(byKey[key])
		if err != nil {
			return nil, fmt.Errorf("rows[%q]: %w", key, err)
		}
		sum := sha256.Sum256(wf)
		out = append(out, batchRowInput{key: key, workflow: wf, hash: base64.RawURLEncoding.EncodeToString(sum[:18])})
	}
	return out, nil
}

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// batchRowOverrides converts rows, as plain Go values, into each row's overrides: node id to
// input name to a plain Go value that encodes to the equivalent JSON.
func batchRowOverrides(rows any) (map[string]map[string]map[string]any, error) {
	byKey, ok := rows.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("rows must be a map of row key to an object of node id to an object of inputs, as { sku1 = { \"6\" = { text = \"a cat\" } } }")
	}
	out := make(map[string]map[string]map[string]any, len(byKey))
	for key, row := range byKey {
		nodes, ok := row.(map[string]any)
		if !ok && row != nil {
			return nil, fmt.Errorf("rows[%q] must be an object of node id to an object of inputs", key)
		}
		patches := make(map[string]map[string]any, len(nodes))
		for node, inputs := range nodes {
			in, ok := inputs.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("rows[%q][%q] must be an object of input name to value", key, node)
			}
			patches[node] = in
		}
		out[key] = patches
	}
	return out, nil
}

// goValueOf converts a Terraform value into plain Go values that encode to the equivalent JSON;
// an unknown value anywhere is an error.
func goValueOf(v tftypes.Value) (any, error) {
	if !v.IsFullyKnown() {
		return nil, fmt.Errorf("value is not known yet")
	}
	if v.IsNull() {
		return nil, nil
	}
	typ := v.Type()
	switch {
	case typ.Is(tftypes.String):
		var s string
		return s, v.As(&s)
	case typ.Is(tftypes.Bool):
		var b bool
		return b, v.As(&b)
	case typ.Is(tftypes.Number):
		f := new(big.Float)
		if err := v.As(&f); err != nil {
			return nil, err
		}
		return jsonNumber(f), nil
	case typ.Is(tftypes.List{}), typ.Is(tftypes.Tuple{}), typ.Is(tftypes.Set{}):
		var elems []tftypes.Value
		if err := v.As(&elems); err != nil {
			return nil, err
		}
		return goListOf(elems)
	case typ.Is(tftypes.Map{}), typ.Is(tftypes.Object{}):
		var elems map[string]tftypes.Value
		if err := v.As(&elems); err != nil {
			return nil, err
		}
		return goMapOf(elems)
	}
	return nil, fmt.Errorf("unsupported value type %s", typ)
}

func goListOf(elems []tftypes.Value) ([]any, error) {
	out := make([]any, 0, len(elems))
	for _, e := range elems {
		g, err := goValueOf(e)
		if err != nil {
			return nil, err
		}
		out = append(out, g)
	}
	return out, nil
}

func goMapOf(elems map[string]tftypes.Value) (map[string]any, error) {
	out := make(map[string]any, len(elems))
	for k, e := range elems {
		g, err := goValueOf(e)
		if err != nil {
			return nil, err
		}
		out[k] = g
	}
	return out, nil
}

// batchRowDirName checks that a row key can name a directory under output_dir: one path
// element, no separator, not "." or "..".
func batchRowDirName(key string) error {
	if key == "" || key == "." || key == ".." || strings.ContainsAny(key, `/\`) || strings.ContainsRune(key, 0) ||
		filepath.Base(key) != key {
		return fmt.Errorf("row key %q cannot name a directory under output_dir (it must be one path element, without / or \\)", key)
	}
	return nil
}
