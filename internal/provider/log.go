package provider

import (
	"context"
	"strings"

	"github.com/hashicorp/terraform-plugin-log/tflog"
)

// tflogLogger adapts the client's Logger to tflog, masking every configured secret in the
// message and in field values, whatever the field is called.
type tflogLogger struct {
	secrets []string
}

func (l tflogLogger) Debug(ctx context.Context, msg string, fields map[string]any) {
	tflog.Debug(maskSecrets(ctx, l.secrets), msg, fields)
}

func (l tflogLogger) Trace(ctx context.Context, msg string, fields map[string]any) {
	tflog.Trace(maskSecrets(ctx, l.secrets), msg, fields)
}

func (l tflogLogger) Warn(ctx context.Context, msg string, fields map[string]any) {
	tflog.Warn(maskSecrets(ctx, l.secrets), msg, fields)
}

// maskSecrets returns ctx with tflog masking of the given secrets in messages and field values.
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
