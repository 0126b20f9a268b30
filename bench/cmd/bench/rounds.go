package main

import (
	"context"
	"fmt"
	"os/exec"
	"slices"
	"strings"
)

// spread is the median of per-round figures with their range, as the
// benches that alternate Atrium and the floor over rounds print them: one
// round on a shared machine says little, the median and the spread of
// several say how much the figure moved.
type spread struct{ median, min, max float64 }

func spreadOf(vals []float64) spread {
	if len(vals) == 0 {
		return spread{}
	}
	s := slices.Clone(vals)
	slices.Sort(s)
	m := s[len(s)/2]
	if len(s)%2 == 0 {
		m = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return spread{median: m, min: s[0], max: s[len(s)-1]}
}

// text prints the median and the range with format f (e.g. "%.0f").
func (s spread) text(f string) string {
	return fmt.Sprintf(f+" ("+f+"–"+f+")", s.median, s.min, s.max)
}

// commitText is `git describe --always --dirty` of the working directory,
// the commit a run's figures belong to.
func commitText(ctx context.Context) string {
	out, err := exec.CommandContext(ctx, "git", "describe", "--always", "--dirty").Output()
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(out))
}
