package app

import (
	"slices"
	"sync"
	"time"
)

// timingWindow is how many recent successful runs of an action its typical
// duration is the median of: enough to ride out one slow run, few enough
// to follow a provider that got slower this hour.
const timingWindow = 50

// timings keeps, per action, the durations of its last successful runs on
// this replica, for discovery's typical_seconds. Failed runs are left out:
// a timeout or a refused request says nothing about how long the work
// takes. Each replica measures its own runs; nothing is stored.
type timings struct {
	mu   sync.Mutex
	runs map[string]*ring
}

type ring struct {
	d    [timingWindow]time.Duration
	n, i int
}

func (t *timings) observe(action string, d time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.runs == nil {
		t.runs = map[string]*ring{}
	}
	r := t.runs[action]
	if r == nil {
		r = &ring{}
		t.runs[action] = r
	}
	r.d[r.i] = d
	r.i = (r.i + 1) % timingWindow
	r.n = min(r.n+1, timingWindow)
}

// median is the median duration of the action's recent successful runs,
// and whether there are any.
func (t *timings) median(action string) (time.Duration, bool) {
	t.mu.Lock()
	r := t.runs[action]
	if r == nil || r.n == 0 {
		t.mu.Unlock()
		return 0, false
	}
	d := slices.Clone(r.d[:r.n])
	t.mu.Unlock()
	slices.Sort(d)
	return d[len(d)/2], true
}

// TypicalSeconds is how long a run of the action usually takes: the median
// of its last successful runs on this replica, or declared, the catalog's
// figure for production providers, before it has run any.
func (a *Actions) TypicalSeconds(action string, declared float64) float64 {
	if d, ok := a.timings.median(action); ok {
		return d.Seconds()
	}
	return declared
}

// Execution says how actions can be called, for discovery: "both", every
// action either waits for its outcome (the spec's default) or, with
// Prefer: respond-async, is answered 202 with a run to follow (queue.go).
func (a *Actions) Execution() string { return "both" }
