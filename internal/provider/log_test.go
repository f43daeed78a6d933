package provider

import (
	"bytes"
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/hashicorp/terraform-plugin-log/tflog"
	"github.com/hashicorp/terraform-plugin-log/tflogtest"
)

// syncBuffer is a log sink safe for the concurrent writers below.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Secrets are masked in messages, in fields and in the context's own fields, for the provider's
// secrets and for those one operation adds (write-only values), while many goroutines log from
// one context, as the client's stream and socket readers do beside the apply. Under -race this
// also shows that no log line writes state another one reads.
func TestLogLinesMaskSecretsWhileLoggingConcurrently(t *testing.T) {
	const providerKey, writeOnly = "sk-provider-0123456789", "wo-partner-9876543210"
	out := &syncBuffer{}
	ctx := tflogtest.RootLogger(context.Background(), out)
	ctx = tflog.SetField(ctx, "echoed", "the service said "+providerKey)
	ctx = withLogSecrets(withLogSecrets(ctx, []string{providerKey}), []string{writeOnly})
	client := tflogLogger{secrets: []string{providerKey}}

	var wg sync.WaitGroup
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			fields := map[string]any{"error": "HTTP 401: bad key " + providerKey + " / " + writeOnly, "n": i}
			if i%2 == 0 {
				logInfo(ctx, "provider line with "+writeOnly, fields)
			} else {
				client.Debug(ctx, "client line with "+providerKey, fields)
			}
		}()
	}
	wg.Wait()
	logs := out.String()
	if n := strings.Count(logs, "\n"); n != 16 {
		t.Fatalf("%d log lines, want 16:\n%s", n, logs)
	}
	for _, secret := range []string{providerKey, writeOnly} {
		if strings.Contains(logs, secret) {
			t.Fatalf("a secret reached the log:\n%s", logs)
		}
	}
}

// Provider code logs through log.go's helpers only: a direct tflog call on a context masked
// with tflog.Mask* would rewrite the context's shared field map in place, racing with the
// client's goroutines that log from the same context (see log.go).
func TestProviderCodeLogsThroughTheMaskingHelpers(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") || name == "log.go" {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if pkg, ok := sel.X.(*ast.Ident); ok && pkg.Name == "tflog" {
				t.Errorf("%s: tflog.%s used directly; use logInfo, logWarn or logDebug (log.go)", fset.Position(sel.Pos()), sel.Sel.Name)
			}
			return true
		})
	}
}
