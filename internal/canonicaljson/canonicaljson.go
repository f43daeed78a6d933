// Package canonicaljson writes JSON documents in one canonical spelling: object keys sorted,
// no insignificant whitespace, and every number spelled one way for its exact decimal value
// (1, 1.0, 1e0 and 10E-1 are all written 1). Two documents that mean the same are then equal
// byte for byte, which is how the provider tells a formatting change from a real one.
//
// Numbers are rewritten from their decimal digits, never through float64, so integers beyond
// 2^53 and long fractions keep every digit.
package canonicaljson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// Canonical returns data in canonical form, or a *SyntaxError locating the first problem.
func Canonical(data []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, locate(data, err)
	}
	end := dec.InputOffset()
	if rest := bytes.TrimLeft(data[end:], " \t\r\n"); len(rest) > 0 {
		at := end + int64(len(data[end:])-len(rest))
		line, col := lineColumn(data, at)
		return nil, &SyntaxError{Line: line, Column: col, Msg: "something follows the end of the document"}
	}
	var b bytes.Buffer
	if err := write(&b, v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// Equal reports whether a and b are valid JSON documents with the same canonical form.
func Equal(a, b []byte) bool {
	ca, err := Canonical(a)
	if err != nil {
		return false
	}
	cb, err := Canonical(b)
	return err == nil && bytes.Equal(ca, cb)
}

func write(b *bytes.Buffer, v any) error {
	switch v := v.(type) {
	case map[string]any:
		b.WriteByte('{')
		for i, k := range slices.Sorted(maps.Keys(v)) {
			if i > 0 {
				b.WriteByte(',')
			}
			writeString(b, k)
			b.WriteByte(':')
			if err := write(b, v[k]); err != nil {
				return err
			}
		}
		b.WriteByte('}')
	case []any:
		b.WriteByte('[')
		for i, e := range v {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := write(b, e); err != nil {
				return err
			}
		}
		b.WriteByte(']')
	case string:
		writeString(b, v)
	case json.Number:
		b.WriteString(Number(string(v)))
	case bool:
		b.WriteString(strconv.FormatBool(v))
	case nil:
		b.WriteString("null")
	default:
		return fmt.Errorf("canonicaljson: unexpected %T", v)
	}
	return nil
}

// writeString writes s as a JSON string; <, > and & stay as they are (no HTML escaping).
func writeString(b *bytes.Buffer, s string) {
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a Go string always encodes
	b.Truncate(b.Len() - 1)
}

// maxPlainDigits is how far a number is written without an exponent (as JavaScript does):
// up to 21 integer digits, and down to six zeros after the point.
const maxPlainDigits = 21

// Number returns the canonical spelling of a valid JSON number literal: the same exact value,
// written without a redundant sign, leading or trailing zeros, or exponent. A literal whose
// exponent does not fit an int64 is returned unchanged.
func Number(lit string) string {
	neg, digits, exp, ok := splitNumber(lit)
	if !ok {
		return lit
	}
	digits = strings.TrimLeft(digits, "0")
	if digits == "" {
		return "0"
	}
	trimmed := strings.TrimRight(digits, "0")
	exp += int64(len(digits) - len(trimmed))
	digits = trimmed
	sign := ""
	if neg {
		sign = "-"
	}
	n := int64(len(digits))
	point := n + exp // where the decimal point falls, counted from the first digit
	switch {
	case exp >= 0 && point <= maxPlainDigits:
		return sign + digits + strings.Repeat("0", int(exp))
	case exp < 0 && point > 0:
		return sign + digits[:point] + "." + digits[point:]
	case exp < 0 && point > -6:
		return sign + "0." + strings.Repeat("0", int(-point)) + digits
	}
	mantissa := digits[:1]
	if n > 1 {
		mantissa += "." + digits[1:]
	}
	return sign + mantissa + "e" + strconv.FormatInt(point-1, 10)
}

// splitNumber reads a JSON number literal as sign, digits and the power of ten they are
// multiplied by: -12.5e3 is (true, "125", 2).
func splitNumber(lit string) (neg bool, digits string, exp int64, ok bool) {
	s := lit
	if strings.HasPrefix(s, "-") {
		neg, s = true, s[1:]
	}
	mant, expPart, hasExp := strings.Cut(strings.ToLower(s), "e")
	if hasExp {
		e, err := strconv.ParseInt(expPart, 10, 64)
		if err != nil || e > 1<<40 || e < -(1<<40) {
			return false, "", 0, false
		}
		exp = e
	}
	intPart, frac, _ := strings.Cut(mant, ".")
	return neg, intPart + frac, exp - int64(len(frac)), intPart+frac != ""
}

// SyntaxError locates a JSON syntax error by line and column (both from 1).
type SyntaxError struct {
	Line, Column int
	Msg          string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("invalid JSON at line %d, column %d: %s", e.Line, e.Column, e.Msg)
}

// locate turns a decoding error into a SyntaxError with the line and column of the offset it
// names (the end of the document when it names none, as for a truncated document).
func locate(data []byte, err error) error {
	offset := int64(len(data))
	msg := err.Error()
	var syn *json.SyntaxError
	if errors.As(err, &syn) {
		offset = syn.Offset
		if offset > 0 {
			offset-- // Offset counts the byte that was read past
		}
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		msg = "the document ends early (an unclosed object, array or string)"
		if len(bytes.TrimSpace(data)) == 0 {
			msg = "the document is empty"
		}
	}
	line, col := lineColumn(data, offset)
	return &SyntaxError{Line: line, Column: col, Msg: msg}
}

func lineColumn(data []byte, offset int64) (line, col int) {
	offset = min(max(offset, 0), int64(len(data)))
	before := data[:offset]
	line = bytes.Count(before, []byte("\n")) + 1
	col = len(before) - (bytes.LastIndexByte(before, '\n') + 1) + 1
	return line, col
}
