package main

import (
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// The garbage collector's heap floor of `atrium serve`.
//
// Every binary collects when its heap reaches three times what the last
// collection found live (GOGC=200, platform/cli.TuneGC). `atrium serve`
// runs the gateway and five services in one process whose live heap is
// small (about 10 MB under a flood of asynchronous submissions) while its
// request path allocates about 60 KB per submission: at GOGC=200 it
// collected 25 times per 10,000 submissions, each time with a mark phase
// taking half a core of the two and assists slowing the requests that
// allocate meanwhile. A floor lets the heap grow by at least
// --gc-min-heap-mib beyond the live heap before the next collection, and
// by the usual 200% once that is more: with 64 MiB, 9 collections per
// 10,000 submissions instead of 26, for at most 64 MiB more memory,
// whatever the live heap.
//
// GOGC set in the environment wins (the floor is off), and GOMEMLIMIT
// still bounds the heap: the runtime collects earlier as it nears the
// limit, whatever the percent.

// gcPercentFor is the GC percent that puts the next collection at
// max(live × (1 + base/100), live + floor).
func gcPercentFor(live, floor uint64, base int) int {
	if live == 0 {
		live = 1
	}
	p := math.Ceil(float64(floor) * 100 / float64(live))
	if p > 1e6 {
		p = 1e6
	}
	return max(base, int(p))
}

// heapFloor re-arms itself after every collection, until stopped.
type heapFloor struct {
	floor  uint64
	base   int
	sample []metrics.Sample
	// set is debug.SetGCPercent; tests see the values set.
	set func(int) int

	mu      sync.Mutex
	stopped bool
	// last is the percent last set, to skip unchanged ones.
	last int
}

// startHeapFloor keeps the collector's target at least floorMiB above
// the live heap, unless GOGC is set or floorMiB is 0. It returns the stop,
// which restores the base percent.
func startHeapFloor(floorMiB int) (stop func()) {
	if _, set := os.LookupEnv("GOGC"); set || floorMiB <= 0 {
		return func() {}
	}
	// The percent in force (TuneGC's), read without setting it: setting
	// -1 to learn it would stop the collector for a moment.
	gogc := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(gogc)
	if gogc[0].Value.Kind() != metrics.KindUint64 || gogc[0].Value.Uint64() == 0 {
		return func() {}
	}
	base := int(min(gogc[0].Value.Uint64(), 1e6)) //nolint:gosec // G115: bounded to 1e6 just before
	h := &heapFloor{floor: uint64(floorMiB) << 20, base: base, set: debug.SetGCPercent, last: base,
		sample: []metrics.Sample{{Name: "/gc/heap/live:bytes"}}}
	h.adjust()
	h.arm()
	return func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		h.stopped = true
		h.set(base)
	}
}

// arm registers a cleanup on a fresh object that nothing references, so
// that it runs once the next collection has found it unreachable. The
// cleanups run one at a time, on the runtime's cleanup goroutine.
func (h *heapFloor) arm() {
	sentinel := new([16]byte) // 16 bytes: not merged into a tiny block with other objects
	runtime.AddCleanup(sentinel, func(h *heapFloor) {
		if h.adjust() {
			h.arm()
		}
	}, h)
}

// adjust sets the percent for the live heap the last collection found;
// false once stopped.
func (h *heapFloor) adjust() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.stopped {
		return false
	}
	metrics.Read(h.sample)
	if h.sample[0].Value.Kind() != metrics.KindUint64 {
		return true
	}
	if p := gcPercentFor(h.sample[0].Value.Uint64(), h.floor, h.base); p != h.last {
		h.set(p)
		h.last = p
	}
	return true
}
