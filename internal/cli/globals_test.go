package cli

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// TestNoInitNoMutableGlobals keeps what `run` and the other commands do
// visible from where they are called: the package has no init function
// and no package-level variable that any of its code assigns (the seams
// tests need come in through Deps).
func TestNoInitNoMutableGlobals(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var parsed []*ast.File
	globals := map[string]token.Position{}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		parsed = append(parsed, f)
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil && d.Name.Name == "init" {
					t.Errorf("%s: func init: wire it where it is used", fset.Position(d.Pos()))
				}
			case *ast.GenDecl:
				if d.Tok != token.VAR {
					continue
				}
				for _, s := range d.Specs {
					for _, n := range s.(*ast.ValueSpec).Names {
						globals[n.Name] = fset.Position(n.Pos())
					}
				}
			}
		}
	}
	assigned := func(e ast.Expr, pos token.Pos) {
		for {
			switch x := e.(type) {
			case *ast.IndexExpr:
				e = x.X
				continue
			case *ast.SelectorExpr:
				e = x.X
				continue
			case *ast.StarExpr:
				e = x.X
				continue
			case *ast.Ident:
				if at, ok := globals[x.Name]; ok {
					t.Errorf("%s: assigns package-level var %s (declared at %s)", fset.Position(pos), x.Name, at)
				}
			}
			return
		}
	}
	for _, f := range parsed {
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.AssignStmt:
				if n.Tok == token.DEFINE {
					return true
				}
				for _, l := range n.Lhs {
					assigned(l, n.Pos())
				}
			case *ast.IncDecStmt:
				assigned(n.X, n.Pos())
			case *ast.UnaryExpr:
				if n.Op == token.AND {
					assigned(n.X, n.Pos()) // &global handed out to be written
				}
			}
			return true
		})
	}
}
