package client

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// routerAnswer is a router error answer with its type, request id and optional Retry-After.
func routerAnswer(code int, typ, retryAfter string) http.HandlerFunc {
	h := map[string]string{"X-Svc-Error-Type": typ, "X-Svc-Request-Id": "r-" + typ}
	if retryAfter != "" {
		h["Retry-After"] = retryAfter
	}
	return status(code, h, `{"detail":"x"}`)
}

// The answers that say the run under the key goes on are resent, with the same key, beyond
// max_retries (3 here) until the context's deadline; every other retryable answer stays bounded.
func TestRouterStillRunningResentBeyondMaxRetries(t *testing.T) {
	ok := status(200, map[string]string{"Content-Type": "application/json", "X-Svc-Request-Id": "r-ok"}, `{"ok":true}`)
	tests := []struct {
		name     string
		answer   http.HandlerFunc
		requests int // with 8 such answers before the result
		wantErr  bool
	}{
		{"409 concurrency_limit_exceeded: the original call still runs", routerAnswer(409, "concurrency_limit_exceeded", "0"), 9, false},
		{"409 concurrency_limit_exceeded without Retry-After", routerAnswer(409, "concurrency_limit_exceeded", ""), 9, false},
		{"504 deadline_exceeded with Retry-After: resend to collect", routerAnswer(504, "deadline_exceeded", "0"), 9, false},
		{"504 deadline_exceeded without Retry-After is bounded", routerAnswer(504, "deadline_exceeded", ""), 4, true},
		{"504 provider_timeout is bounded", routerAnswer(504, "provider_timeout", "0"), 4, true},
		{"429 rate_limited is bounded (refused before dispatch)", routerAnswer(429, "rate_limited", "0"), 4, true},
		{"429 concurrency_limit_exceeded is bounded", routerAnswer(429, "concurrency_limit_exceeded", "0"), 4, true},
		{"502 is bounded", routerAnswer(502, "provider_error", ""), 4, true},
	}
	for _, tt := range tests {
		for _, route := range []string{"invoke", "submit"} {
			t.Run(tt.name+"/"+route, func(t *testing.T) {
				last := ok
				if route == "submit" {
					last = status(201, map[string]string{"Content-Type": "application/json", "X-Svc-Request-Id": "r-ok"},
						`{"request_id":"0b0c8f2e-0000-4000-8000-0000000000a1","status":"IN_QUEUE","status_url":"/s","response_url":"/r","cancel_url":"/c"}`)
				}
				s, c := scriptedClient(t, append(repeat(tt.answer, 8), last))
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				in := InvokeInput{Model: "demo/echo", Input: json.RawMessage(`{"prompt":"x"}`), IdempotencyKey: "k1"}
				var err error
				if route == "invoke" {
					var res *RouterResult
					if res, err = c.InvokeModel(ctx, in); res != nil {
						res.Body.Close()
					}
				} else {
					_, err = c.SubmitModelRequest(ctx, in)
				}
				if (err != nil) != tt.wantErr {
					t.Fatalf("error %v, want error: %v", err, tt.wantErr)
				}
				s.assertAttempts(t, tt.requests, "k1")
			})
		}
	}
}

// A "come back later" answer followed by another one (a 500) is no longer the router's last
// word: when the deadline then ends a held resend, the error does not claim the run goes on.
func TestRouterComeBackAnswerForgottenAfterAnotherAnswer(t *testing.T) {
	// The third attempt is held, and the operation ends while it is (cancelled then, not by a
	// wall-clock deadline, so a slow machine cannot change the sequence).
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	hold := func(_ http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		cancel()
		<-r.Context().Done()
	}
	s, c := scriptedClient(t, []http.HandlerFunc{routerAnswer(409, "concurrency_limit_exceeded", "0"), routerAnswer(500, "internal_error", ""), hold})
	_, err := c.InvokeModel(ctx, InvokeInput{Model: "demo/echo", Input: json.RawMessage(`{}`), IdempotencyKey: "k1"})
	var unknown *UnknownOutcomeError
	if !errors.As(err, &unknown) || RouterStillRunning(err) || strings.Contains(err.Error(), "the last answer, HTTP 409") {
		t.Fatalf("err = %v; want an unknown outcome that does not name the earlier 409 as the last answer", err)
	}
	if n := s.count(); n != 3 {
		t.Fatalf("%d requests, want 3", n)
	}
}

// When the deadline comes first, the error keeps the key and the router's last answer, and
// says the run goes on (RouterStillRunning), whether the deadline was seen before a wait the
// router asked for or ended an attempt or a wait.
func TestRouterStillRunningUntilTheDeadline(t *testing.T) {
	hold := func(_ http.ResponseWriter, r *http.Request) { // the router holds the call
		_, _ = io.Copy(io.Discard, r.Body) // net/http notices the client leaving only once the body is read
		<-r.Context().Done()
	}
	tests := []struct {
		name     string
		steps    []http.HandlerFunc
		minReqs  int
		maxReqs  int
		wantText []string
	}{
		// Retry-After 60 s cannot be honoured within the 300 ms left: the answer comes back at once.
		{"Retry-After beyond the deadline", []http.HandlerFunc{routerAnswer(504, "deadline_exceeded", "60")}, 1, 1,
			[]string{"HTTP 504 deadline_exceeded", "request id r-deadline_exceeded", "Idempotency-Key k1"}},
		// The deadline ends a held resend: the error still names the router's last answer.
		{"deadline during a held resend", []http.HandlerFunc{routerAnswer(409, "concurrency_limit_exceeded", "0"), hold}, 2, 2,
			[]string{"context deadline exceeded", "the last answer, HTTP 409 concurrency_limit_exceeded (request id r-concurrency_limit_exceeded)", "Idempotency-Key k1"}},
		// Resent, far beyond max_retries, until the deadline: whichever way it ends, the answer is named.
		{"resent until the deadline", []http.HandlerFunc{routerAnswer(409, "concurrency_limit_exceeded", "0")}, 5, 1 << 30,
			[]string{"HTTP 409 concurrency_limit_exceeded", "request id r-concurrency_limit_exceeded", "Idempotency-Key k1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, c := scriptedClient(t, tt.steps)
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer cancel()
			_, err := c.InvokeModel(ctx, InvokeInput{Model: "demo/echo", Input: json.RawMessage(`{}`), IdempotencyKey: "k1"})
			var unknown *UnknownOutcomeError
			if !errors.As(err, &unknown) || unknown.IdempotencyKey != "k1" || !RouterStillRunning(err) {
				t.Fatalf("want a still-running UnknownOutcomeError with the key, got %v", err)
			}
			for _, want := range tt.wantText {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q lacks %q", err, want)
				}
			}
			if n := s.count(); n < tt.minReqs || n > tt.maxReqs {
				t.Fatalf("%d requests, want %d to %d", n, tt.minReqs, tt.maxReqs)
			}
		})
	}
}
