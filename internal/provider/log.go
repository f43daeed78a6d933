package provider

import (
	"context"
	"strings"

	"github.com/hashicorp/terraform-plugin-log/tflog"
)

// Every log line is masked on a context of its own. tflog applies a mask by rewriting the field
// map its context holds, in place, at each log call; a masked context shared with a goroutine
// (the client's event-stream and socket readers log from theirs) would have that map written by
// one goroutine while the other reads it: a data race, and a possible fatal "concurrent map
// writes". So the secrets travel in the context as a plain value (withLogSecrets), and each line
// takes a fresh masked copy of the logger options (maskSecrets), whose map only it writes.

// logSecretsKey is the context key of the secrets to mask in log lines.
type logSecretsKey struct{}

// withLogSecrets returns ctx carrying secrets (added to any it carries) for the log helpers.
func withLogSecrets(ctx context.Context, secrets []string) context.Context {
	all := append(append([]string(nil), logSecrets(ctx)...), secrets...)
	return context.WithValue(ctx, logSecretsKey{}, all)
}

func logSecrets(ctx context.Context) []string {
	s, _ := ctx.Value(logSecretsKey{}).([]string)
	return s
}

func logInfo(ctx context.Context, msg string, fields map[string]any) {
	tflog.Info(maskSecrets(ctx, logSecrets(ctx)), msg, fields)
}

func logWarn(ctx context.Context, msg string, fields map[string]any) {
	tflog.Warn(maskSecrets(ctx, logSecrets(ctx)), msg, fields)
}

func logDebug(ctx context.Context, msg string, fields map[string]any) {
	tflog.Debug(maskSecrets(ctx, logSecrets(ctx)), msg, fields)
}

// tflogLogger adapts the client's Logger to tflog, masking every configured secret (and any the
// context carries) in the message and in field values, whatever the field is called.
type tflogLogger struct {
	secrets []string
}

func (l tflogLogger) Debug(ctx context.Context, msg string, fields map[string]any) {
	tflog.Debug(l.mask(ctx), msg, fields)
}

func (l tflogLogger) Trace(ctx context.Context, msg string, fields map[string]any) {
	tflog.Trace(l.mask(ctx), msg, fields)
}

func (l tflogLogger) Warn(ctx context.Context, msg string, fields map[string]any) {
	tflog.Warn(l.mask(ctx), msg, fields)
}

func (l tflogLogger) mask(ctx context.Context) context.Context {
	return maskSecrets(ctx, append(append([]string(nil), l.secrets...), logSecrets(ctx)...))
}

// maskSecrets returns a copy of ctx's logger options masking the given secrets in messages and
// field values. The copy is the caller's alone: log through it once and drop it.
func maskSecrets(ctx context.Context, secrets []string) context.Context {
	if len(secrets) == 0 {
		return ctx
	}
	ctx = tflog.MaskMessageStrings(ctx, secrets...)
	return tflog.MaskAllFieldValuesStrings(ctx, secrets...)
}

// redact removes secrets from text bound for a diagnostic. The client never puts a credential in
// an error, but a hostile or broken service could echo one back in a body excerpt.
func redact(text string, secrets []string) string {
	for _, s := range secrets {
		if len(s) >= 4 {
			text = strings.ReplaceAll(text, s, "(redacted)")
		}
	}
	return text
}
