package mcpserver

import (
	"go/parser"
	"go/token"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestToolsCallThePortOnly: the tools reach the API through their port
// (API, atriumsdk implements it); no file of the package imports the Go
// SDK, so that what the tools need of the API is declared here and
// another implementation (a fake in a test, another transport) can
// stand in for it.
func TestToolsCallThePortOnly(t *testing.T) {
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	files := 0
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		files++
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if path == "github.com/atrium-hq/atrium/sdk/go" || strings.HasPrefix(path, "github.com/atrium-hq/atrium/sdk/") {
				t.Errorf("%s imports %s: the tools call the API through mcpserver.API (atriumsdk implements it with the SDK)", name, path)
			}
		}
	}
	if files < 5 {
		t.Fatalf("read %d files of the package, want its sources", files)
	}
}
