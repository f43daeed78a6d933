package provider

import (
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

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

// batchRowInputsOf is batchRowInputs of rows as plain Go values (goValueOf).
func batchRowInputsOf(template string, rows any) ([]batchRowInput, error) {
	byKey, err := batchRowOverrides(rows)
	if err != nil {
		return nil, err
	}
	out := make([]batchRowInput, 0, len(byKey))
	var tmpl *workflow.Template
	for _, key := range slices.Sorted(maps.Keys(byKey)) {
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

// batchRowDirName checks that a row key can name a directory under output_dir: one path
// element, no separator, not "." or "..".
func batchRowDirName(key string) error {
	if key == "" || key == "." || key == ".." || strings.ContainsAny(key, `/\`) || strings.ContainsRune(key, 0) ||
		filepath.Base(key) != key {
		return fmt.Errorf("row key %q cannot name a directory under output_dir (it must be one path element, without / or \\)", key)
	}
	return nil
}
