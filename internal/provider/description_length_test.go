package provider

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// maxDescriptionLength bounds every description string written in Go: a description says what
// one thing is in a paragraph; prose (how a resource behaves, worked cases) is its page's, in
// templates/, which tfplugindocs renders around the schema.
const maxDescriptionLength = 500

// TestNoDescriptionStringIsProse fails on a description string written in Go (a string literal,
// or literals joined by +, given as a Description or MarkdownDescription, or a constant or
// variable named *Doc) longer than maxDescriptionLength.
func TestNoDescriptionStringIsProse(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	found := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for where, length := range descriptionStrings(f) {
			found++
			if length > maxDescriptionLength {
				t.Errorf("%s: %s: a description of %d characters (at most %d): move the prose to its page's template in templates/",
					name, where, length, maxDescriptionLength)
			}
		}
	}
	if found < 50 {
		t.Fatalf("only %d description strings found", found)
	}
}

// descriptionStrings are the lengths of f's description strings, by what they describe: the
// constant or variable they are, or the key they are given as (the resource for a schema's
// own, as far as a file names it).
func descriptionStrings(f *ast.File) map[string]int {
	out := map[string]int{}
	add := func(where string, e ast.Expr) {
		if n, ok := literalLength(e); ok && n > out[where] {
			out[where] = n
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.ValueSpec:
			for i, id := range n.Names {
				if strings.HasSuffix(id.Name, "Doc") && i < len(n.Values) {
					add(id.Name, n.Values[i])
				}
			}
		case *ast.KeyValueExpr:
			if key, ok := n.Key.(*ast.Ident); ok && (key.Name == "MarkdownDescription" || key.Name == "Description") {
				add(key.Name, n.Value)
			}
		}
		return true
	})
	return out
}

// literalLength is the length of the string literals of e, literals joined by +; ok is false
// when e holds none.
func literalLength(e ast.Expr) (n int, ok bool) {
	switch e := e.(type) {
	case *ast.BasicLit:
		if e.Kind != token.STRING {
			return 0, false
		}
		s, err := strconv.Unquote(e.Value)
		return len(s), err == nil
	case *ast.BinaryExpr:
		if e.Op != token.ADD {
			return 0, false
		}
		x, okX := literalLength(e.X)
		y, okY := literalLength(e.Y)
		return x + y, okX || okY
	case *ast.ParenExpr:
		return literalLength(e.X)
	}
	return 0, false
}
