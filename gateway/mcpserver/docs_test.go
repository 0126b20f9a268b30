package mcpserver

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestDocsCountTheTools: docs/mcp.md's count of the tools ("Thirteen tools
// in four groups") and its table of them are the tools the server
// declares.
func TestDocsCountTheTools(t *testing.T) {
	tools, err := buildTools()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile("../../docs/mcp.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	m := regexp.MustCompile(`(?i)\b(\w+) tools in \w+ groups`).FindStringSubmatch(doc)
	words := []string{"zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
		"eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen", "twenty"}
	if m == nil || len(tools) >= len(words) || !strings.EqualFold(m[1], words[len(tools)]) {
		t.Errorf("docs/mcp.md says %q; the server declares %d tools", m, len(tools))
	}
	for _, tl := range tools {
		if !strings.Contains(doc, "| `"+tl.def.Name+"` |") {
			t.Errorf("docs/mcp.md's table lacks the tool %s", tl.def.Name)
		}
	}
}
