package client

import "context"

// Logger receives the client's structured log lines. The provider adapts it to tflog, which also
// masks the configured secrets; the client itself never logs a header value or a request body, and
// redacts credential-bearing query parameters from URLs.
type Logger interface {
	Debug(ctx context.Context, msg string, fields map[string]any)
	Trace(ctx context.Context, msg string, fields map[string]any)
	Warn(ctx context.Context, msg string, fields map[string]any)
}

type nopLogger struct{}

func (nopLogger) Debug(context.Context, string, map[string]any) {}
func (nopLogger) Trace(context.Context, string, map[string]any) {}
func (nopLogger) Warn(context.Context, string, map[string]any)  {}
