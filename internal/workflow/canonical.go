package workflow

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"
)

// Canonical returns data re-encoded in one canonical form: object keys sorted, no insignificant
// whitespace, strings escaped only where JSON requires it (no HTML escaping), and numbers written
// the same way however they were spelt (1.0, 1e0 and 1 all become 1). Integers are kept exactly,
// whatever their size: seeds go up to 2^64-1, beyond what a float64 holds. Two documents that
// differ only in formatting, key order or number spelling have the same canonical bytes.
func Canonical(data []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("not valid JSON: %w", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("not valid JSON: more than one value")
	}
	var b bytes.Buffer
	if err := writeCanonical(&b, v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func writeCanonical(b *bytes.Buffer, v any) error {
	switch x := v.(type) {
	case map[string]any:
		b.WriteByte('{')
		for i, k := range slices.Sorted(maps.Keys(x)) {
			if i > 0 {
				b.WriteByte(',')
			}
			writeCanonicalString(b, k)
			b.WriteByte(':')
			if err := writeCanonical(b, x[k]); err != nil {
				return err
			}
		}
		b.WriteByte('}')
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := writeCanonical(b, e); err != nil {
				return err
			}
		}
		b.WriteByte(']')
	case string:
		writeCanonicalString(b, x)
	case json.Number:
		n, err := canonicalNumber(x)
		if err != nil {
			return err
		}
		b.WriteString(n)
	default: // bool, nil
		enc, err := json.Marshal(x)
		if err != nil {
			return err
		}
		b.Write(enc)
	}
	return nil
}

func writeCanonicalString(b *bytes.Buffer, s string) {
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	b.Truncate(b.Len() - 1)
}

// canonicalNumber writes an integer literal exactly (without a sign on zero), and any other
// number as the shortest decimal that reads back as the same float64, integral values without a
// fraction: the form encoding/json gives a float64.
func canonicalNumber(n json.Number) (string, error) {
	s := string(n)
	if !strings.ContainsAny(s, ".eE") {
		i, ok := new(big.Int).SetString(s, 10)
		if !ok {
			return "", fmt.Errorf("not a number: %s", s)
		}
		return i.String(), nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(f, 0) {
		return "", fmt.Errorf("number out of range: %s", s)
	}
	if f == math.Trunc(f) && math.Abs(f) < 1e21 {
		i, _ := new(big.Float).SetFloat64(f).Int(nil)
		return i.String(), nil
	}
	enc, err := json.Marshal(f)
	return string(enc), err
}
