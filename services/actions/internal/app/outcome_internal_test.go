package app

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestRunRowsKeepLongTextShort(t *testing.T) {
	long := strings.Repeat("é", 2000)
	got := shortened(map[string]any{"content": long, "id": "x", "n": 1.5})
	s := got["content"].(string)
	if utf8.RuneCountInString(s) > runDataMax+60 || !strings.Contains(s, "2000 characters") || got["id"] != "x" || got["n"] != 1.5 {
		t.Fatalf("shortened = %v", got)
	}
}
