package provider

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

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
