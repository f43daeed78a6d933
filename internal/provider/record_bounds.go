package provider

import (
	"fmt"
	"unicode/utf8"
)

// What a service record may put into state is bounded: every value in state is walked by
// Terraform and the framework on every plan, so a hostile or runaway record (tens of thousands
// of outputs, a traceback of megabytes) would make each later plan take minutes and gigabytes.
const (
	// maxOutputsInState is how many outputs state lists. A workflow's outputs are the files its
	// save nodes wrote: a large batch is a few hundred; beyond a thousand, nobody reads them one
	// by one in Terraform, and the list is already the largest value in state. The rest are
	// counted in outputs_omitted and remain readable through the service.
	maxOutputsInState = 1000
	// maxTextInState bounds a message, name, id or URL from a record (8 KiB: far above any real
	// one, signed URLs included).
	maxTextInState = 8 << 10
	// maxTracebackInState bounds a traceback; its end, where the failing call is, is kept.
	maxTracebackInState = 64 << 10
)

// uniqueBounded returns items without repeats (the first of several items with the same key is
// kept, in order), at most maxOutputsInState of them, and how many distinct items were left out.
func uniqueBounded[T any](items []T, key func(T) string) (kept []T, omitted int) {
	seen := make(map[string]struct{}, min(len(items), maxOutputsInState))
	kept = make([]T, 0, min(len(items), maxOutputsInState))
	for _, it := range items {
		k := key(it)
		if _, dup := seen[k]; dup {
			continue
		}
		seen[k] = struct{}{}
		if len(kept) < maxOutputsInState {
			kept = append(kept, it)
		} else {
			omitted++
		}
	}
	return kept, omitted
}

// boundText keeps the start of s, at most maxTextInState bytes, and says how much was cut.
func boundText(s string) string {
	if len(s) <= maxTextInState {
		return s
	}
	cut := maxTextInState
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut-- // never split a character
	}
	return fmt.Sprintf("%s… [%d more bytes not kept]", s[:cut], len(s)-cut)
}

// boundTail keeps the end of s, at most limit bytes, and says how much was cut.
func boundTail(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	start := len(s) - limit
	for start < len(s) && !utf8.RuneStart(s[start]) {
		start++
	}
	return fmt.Sprintf("[%d earlier bytes not kept] …%s", start, s[start:])
}

// boundTextPtr is boundText for an optional value.
func boundTextPtr(s *string) *string {
	if s == nil {
		return nil
	}
	b := boundText(*s)
	return &b
}

// boundTracebackPtr is boundTail for an optional traceback.
func boundTracebackPtr(s *string) *string {
	if s == nil {
		return nil
	}
	b := boundTail(*s, maxTracebackInState)
	return &b
}
