package client

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"unicode/utf8"
)

// Limits on what the client repeats of a response in an error or a log line. A header or a body
// is the server's to choose: a hostile or broken one (a 1 MiB request id, say) must not flood
// the user's terminal or the log.
const (
	maxEchoedHeader  = 200  // a request id, an error type
	maxEchoedMessage = 1000 // a service's error message, which may span lines
	maxEchoedItems   = 20   // node errors, field errors
)

// requestIDOf is the X-Svc-Request-Id of h, printable and capped.
func requestIDOf(h http.Header) string {
	return echoHeader(h.Get("X-Svc-Request-Id"))
}

// echoHeader renders a header value from a response printable and at most maxEchoedHeader bytes.
func echoHeader(v string) string {
	return capEcho(printable(v, false), maxEchoedHeader)
}

// capEcho cuts s to at most limit bytes (on a rune boundary) and says how much was cut.
func capEcho(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	return fmt.Sprintf("%s…(truncated, %d bytes in all)", cutOnRune(s, limit), len(s))
}

// cutOnRune returns the longest start of s, at most limit bytes, that does not split a rune.
func cutOnRune(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	cut := limit
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut]
}

// peekErrorCode reads the error code of an error answer's body (bounded) and puts the bytes back,
// so the answer can still be decoded, or drained, by whoever reads it next.
func peekErrorCode(resp *http.Response) string {
	if resp.Body == nil {
		return ""
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	resp.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(body), resp.Body), resp.Body}
	var e APIError
	decodeErrorBody(&e, body)
	return e.Code
}
