package provider

import (
	"fmt"

	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// Helpers of the batch's tests: a row as its results element, and back.

// value is the row as a results element.
func (r *batchRow) value() tftypes.Value { return r.result().terraformValue() }

// batchRowOf reads a results element with the row's bookkeeping; ok is false when the element
// is not a known row object.
func batchRowOf(v tftypes.Value, book batchBookRow) (*batchRow, bool) {
	res, err := batchResultOf(v)
	if err != nil {
		return nil, false
	}
	return rowOfResult(res, book)
}

// batchRowInputs reads the rows value against the template (batchRowInputsOf).
func batchRowInputs(template string, rows tftypes.Value) ([]batchRowInput, error) {
	raw, err := goValueOf(rows)
	if err != nil {
		return nil, fmt.Errorf("rows: %w", err)
	}
	return batchRowInputsOf(template, raw)
}
