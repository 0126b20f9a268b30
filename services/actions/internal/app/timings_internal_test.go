package app

import (
	"testing"
	"time"
)

// TestTypicalSecondsIsTheMedianOfRecentRuns: before any run the declared
// figure; then the median of the runs, so one slow run does not move it;
// and only the last timingWindow runs count.
func TestTypicalSecondsIsTheMedianOfRecentRuns(t *testing.T) {
	a := &Actions{}
	if got := a.TypicalSeconds("generate_blog", 45); got != 45 {
		t.Fatalf("before any run: %v, want the declared 45", got)
	}
	for _, d := range []time.Duration{2 * time.Second, 3 * time.Second, 90 * time.Second} {
		a.timings.observe("generate_blog", d)
	}
	if got := a.TypicalSeconds("generate_blog", 45); got != 3 {
		t.Fatalf("after runs of 2, 3 and 90 s: %v, want their median 3", got)
	}
	if got := a.TypicalSeconds("seo_audit", 5); got != 5 {
		t.Fatalf("another action's runs moved seo_audit to %v", got)
	}
	for range timingWindow {
		a.timings.observe("generate_blog", 10*time.Second)
	}
	if got := a.TypicalSeconds("generate_blog", 45); got != 10 {
		t.Fatalf("after %d runs of 10 s: %v, want 10 (older runs out of the window)", timingWindow, got)
	}
}
