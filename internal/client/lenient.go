package client

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
)

// A job record is decoded field by field when it does not decode whole: a value that does not
// fit its field (progress.value 1e400, a size_bytes written 1e18, a string where a number
// belongs) leaves that field empty and becomes a warning, while the id, the status and every
// other field are kept. Losing the record over one such field would lose the job's id (and a
// job the provider cannot name is billed and run again); calling it failed would taint it.

// UnmarshalJSON decodes a job record, leniently when it does not decode strictly (see above).
// Warnings says what was left out.
func (j *Job) UnmarshalJSON(data []byte) error {
	type plain Job // the same fields without this method
	if err := json.Unmarshal(data, (*plain)(j)); err == nil {
		j.DecodeWarnings = nil
		return nil
	}
	*j = Job{}
	var l lenientDecoder
	if err := l.decode(data, reflect.ValueOf((*plain)(j)).Elem(), ""); err != nil {
		return err
	}
	j.DecodeWarnings = l.warnings()
	return nil
}

// noteNonFinite records that the record held n NaN or Infinity tokens (not JSON), read as null.
func (j *Job) noteNonFinite(n int) {
	j.DecodeWarnings = append(j.DecodeWarnings, fmt.Sprintf("%d value(s) written NaN or Infinity, which are not JSON numbers, were left empty", n))
}

// nonFiniteTolerant is a decoded type that accepts NaN and Infinity tokens as null (see decodeJSON).
type nonFiniteTolerant interface{ noteNonFinite(n int) }

// lenientDecoder decodes JSON into a value field by field, collecting a warning for each value
// that does not fit instead of failing.
type lenientDecoder struct {
	list    []string
	dropped int
}

func (l *lenientDecoder) warn(path string, raw json.RawMessage, kind reflect.Type) {
	if len(l.list) >= maxEchoedItems {
		l.dropped++
		return
	}
	l.list = append(l.list, fmt.Sprintf("%s = %s does not fit a %s; it was left empty",
		strings.TrimPrefix(path, "."), capEcho(printable(string(raw), false), 40), describeKind(kind)))
}

func (l *lenientDecoder) count() int { return len(l.list) + l.dropped }

func (l *lenientDecoder) warnings() []string {
	if l.dropped > 0 {
		return append(l.list, fmt.Sprintf("... and %d more such values", l.dropped))
	}
	return l.list
}

// decode fills v from raw. Only a top-level document that is not a JSON object is an error.
func (l *lenientDecoder) decode(raw json.RawMessage, v reflect.Value, path string) error {
	if json.Unmarshal(raw, v.Addr().Interface()) == nil {
		return nil
	}
	v.SetZero() // a failed strict decode may have filled part of it
	switch v.Kind() {
	case reflect.Struct:
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(raw, &fields); err != nil {
			if path == "" {
				return fmt.Errorf("the record is not a JSON object: %w", err)
			}
			l.warn(path, raw, v.Type())
			return nil
		}
		l.decodeStruct(fields, v, path)
	case reflect.Pointer:
		// A scalar that does not fit stays null (not measured, not known) rather than zero.
		before, elem := l.count(), reflect.New(v.Type().Elem())
		_ = l.decode(raw, elem.Elem(), path)
		if l.count() == before || elem.Elem().Kind() == reflect.Struct {
			v.Set(elem)
		}
	case reflect.Slice:
		l.decodeSlice(raw, v, path)
	case reflect.Map:
		l.decodeMap(raw, v, path)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if n, ok := integralNumber(raw, v.Type().Bits()); ok {
			v.SetInt(n)
			return nil
		}
		l.warn(path, raw, v.Type())
	default:
		l.warn(path, raw, v.Type())
	}
	return nil
}

// decodeStruct decodes each field from the member its json tag names. An embedded struct
// without a tag has its fields promoted, as encoding/json reads them: they come from the same
// members.
func (l *lenientDecoder) decodeStruct(fields map[string]json.RawMessage, v reflect.Value, path string) {
	t := v.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" && f.Anonymous && f.Type.Kind() == reflect.Struct {
			l.decodeStruct(fields, v.Field(i), path)
			continue
		}
		if name == "" || name == "-" {
			continue
		}
		if raw, ok := fields[name]; ok {
			_ = l.decode(raw, v.Field(i), path+"."+name)
		}
	}
}

func (l *lenientDecoder) decodeSlice(raw json.RawMessage, v reflect.Value, path string) {
	var items []json.RawMessage
	if json.Unmarshal(raw, &items) != nil {
		l.warn(path, raw, v.Type())
		return
	}
	s := reflect.MakeSlice(v.Type(), len(items), len(items))
	for i, item := range items {
		_ = l.decode(item, s.Index(i), fmt.Sprintf("%s[%d]", path, i))
	}
	v.Set(s)
}

func (l *lenientDecoder) decodeMap(raw json.RawMessage, v reflect.Value, path string) {
	var entries map[string]json.RawMessage
	if v.Type().Key().Kind() != reflect.String || json.Unmarshal(raw, &entries) != nil {
		l.warn(path, raw, v.Type())
		return
	}
	m := reflect.MakeMapWithSize(v.Type(), len(entries))
	for k, item := range entries {
		elem := reflect.New(v.Type().Elem()).Elem()
		_ = l.decode(item, elem, path+"."+k)
		m.SetMapIndex(reflect.ValueOf(k).Convert(v.Type().Key()), elem)
	}
	v.Set(m)
}

// integralNumber reads a JSON number written with a fraction or an exponent ("1e18", "5.0") that
// is nevertheless a whole number within bits.
func integralNumber(raw json.RawMessage, bits int) (int64, bool) {
	f, err := strconv.ParseFloat(strings.TrimSpace(string(raw)), 64)
	if err != nil || f != math.Trunc(f) {
		return 0, false
	}
	limit := math.Ldexp(1, bits-1)
	if f < -limit || f >= limit {
		return 0, false
	}
	return int64(f), true
}

func describeKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return fmt.Sprintf("%d-bit whole number", t.Bits())
	case reflect.Float32, reflect.Float64:
		return "finite number"
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Slice:
		return "list"
	case reflect.Map, reflect.Struct:
		return "object"
	}
	return t.String()
}

// nullNonFinite replaces the NaN and Infinity tokens some servers write outside strings (they
// are not JSON) with null, and says how many it replaced.
func nullNonFinite(data []byte) ([]byte, int) {
	var out []byte
	n := 0
	inString, escaped := false, false
	for i := 0; i < len(data); i++ {
		c := data[i]
		switch {
		case inString:
			escaped, inString = c == '\\' && !escaped, inString && (c != '"' || escaped)
		case c == '"':
			inString = true
		default:
			if tok := nonFiniteAt(data[i:]); tok > 0 {
				if out == nil {
					out = append(make([]byte, 0, len(data)), data[:i]...)
				}
				out = append(out, "null"...)
				i += tok - 1
				n++
				continue
			}
		}
		if out != nil {
			out = append(out, c)
		}
	}
	if out == nil {
		return data, 0
	}
	return out, n
}

// nonFiniteAt is the length of a NaN or Infinity token at the start of b, or 0.
func nonFiniteAt(b []byte) int {
	for _, tok := range []string{"NaN", "-NaN", "Infinity", "-Infinity", "+Infinity"} {
		if len(b) >= len(tok) && string(b[:len(tok)]) == tok {
			return len(tok)
		}
	}
	return 0
}
