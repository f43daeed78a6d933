package client

import "bytes"

// scanSSELines is a bufio.SplitFunc for event streams. The SSE format ends a line with CRLF, LF or
// a lone CR; bufio.ScanLines knows only the first two, so a lone CR would end up inside a field
// value (a "data:" line swallowing the next line, an event name holding a CR).
func scanSSELines(data []byte, atEOF bool) (advance int, token []byte, err error) {
	if atEOF && len(data) == 0 {
		return 0, nil, nil
	}
	if i := bytes.IndexAny(data, "\r\n"); i >= 0 {
		if data[i] == '\n' {
			return i + 1, data[:i], nil
		}
		// A CR: one line end on its own, or the first half of CRLF.
		if i+1 < len(data) {
			if data[i+1] == '\n' {
				return i + 2, data[:i], nil
			}
			return i + 1, data[:i], nil
		}
		if atEOF {
			return i + 1, data[:i], nil
		}
		return 0, nil, nil // wait for the next byte: it may be the LF of a CRLF
	}
	if atEOF {
		return len(data), data, nil
	}
	return 0, nil, nil
}
