// Package apicount counts the exported names of the public packages the
// way issue #20 counts them (docs/design.md §1): exported top-level
// functions, types (aliases included), variables and constants, plus the
// exported methods of exported types and the exported methods of exported
// interfaces, in the non-test files of a normal build (no build tags). Its
// test keeps the total within budget.
package apicount

import (
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"path/filepath"
	"sort"
	"strings"
)

// Names returns the exported names of the package in dir, each as
// "kind Name" ("func New", "method Client.Acquire", ...), sorted.
func Names(dir string) ([]string, error) {
	fset := token.NewFileSet()
	paths, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	var files []*ast.File
	for _, p := range paths {
		if strings.HasSuffix(p, "_test.go") {
			continue
		}
		// A file a normal build leaves out (redlock's unsafe_on.go, of the
		// redlease_unsafe tag) is no part of the API.
		if ok, err := build.Default.MatchFile(dir, filepath.Base(p)); err != nil || !ok {
			if err != nil {
				return nil, err
			}
			continue
		}
		f, err := parser.ParseFile(fset, p, nil, 0)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	exportedTypes := map[string]bool{}
	for _, f := range files {
		for _, d := range f.Decls {
			if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.TYPE {
				for _, s := range g.Specs {
					if ts := s.(*ast.TypeSpec); ts.Name.IsExported() {
						exportedTypes[ts.Name.Name] = true
					}
				}
			}
		}
	}
	var names []string
	for _, f := range files {
		for _, d := range f.Decls {
			names = append(names, declNames(d, exportedTypes)...)
		}
	}
	sort.Strings(names)
	return names, nil
}

func declNames(d ast.Decl, exportedTypes map[string]bool) []string {
	var names []string
	switch d := d.(type) {
	case *ast.FuncDecl:
		if !d.Name.IsExported() {
			return nil
		}
		if d.Recv == nil {
			return []string{"func " + d.Name.Name}
		}
		if r := recvName(d.Recv.List[0].Type); exportedTypes[r] {
			names = append(names, "method "+r+"."+d.Name.Name)
		}
	case *ast.GenDecl:
		for _, s := range d.Specs {
			switch s := s.(type) {
			case *ast.TypeSpec:
				if !s.Name.IsExported() {
					continue
				}
				names = append(names, "type "+s.Name.Name)
				if it, ok := s.Type.(*ast.InterfaceType); ok {
					for _, m := range it.Methods.List {
						for _, n := range m.Names {
							if n.IsExported() {
								names = append(names, "imethod "+s.Name.Name+"."+n.Name)
							}
						}
					}
				}
			case *ast.ValueSpec:
				for _, n := range s.Names {
					if n.IsExported() {
						names = append(names, strings.ToLower(d.Tok.String())+" "+n.Name)
					}
				}
			}
		}
	}
	return names
}

func recvName(e ast.Expr) string {
	switch t := e.(type) {
	case *ast.StarExpr:
		return recvName(t.X)
	case *ast.IndexExpr:
		return recvName(t.X)
	case *ast.IndexListExpr:
		return recvName(t.X)
	case *ast.Ident:
		return t.Name
	}
	return ""
}

// Root is the module's root, relative to this package's directory.
var Root = filepath.Join("..", "..", "..")
