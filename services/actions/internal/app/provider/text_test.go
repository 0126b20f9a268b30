package provider_test

import (
	"testing"

	"github.com/atrium-hq/atrium/services/actions/internal/app/provider"
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
		if got := provider.WordCount(in); got != want {
			t.Errorf("WordCount(%q) = %d, want %d", in, got, want)
		}
	}
}
