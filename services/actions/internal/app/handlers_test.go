package app

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestWordCount(t *testing.T) {
	for in, want := range map[string]int{
		"":                                 0,
		"one two  three":                   3,
		"<p>Hello <b>bold</b> world</p>":   3,
		"<h2>A</h2><p>b c</p>":             3,
		"tag<br/>split":                    2,
		"<img alt=\"not words here\"> one": 1,
	} {
		if got := WordCount(in); got != want {
			t.Errorf("WordCount(%q) = %d, want %d", in, got, want)
		}
	}
}

func TestRunRowsKeepLongTextShort(t *testing.T) {
	long := strings.Repeat("é", 2000)
	got := shortened(map[string]any{"content": long, "id": "x", "n": 1.5})
	s := got["content"].(string)
	if utf8.RuneCountInString(s) > runDataMax+60 || !strings.Contains(s, "2000 characters") || got["id"] != "x" || got["n"] != 1.5 {
		t.Fatalf("shortened = %v", got)
	}
}
