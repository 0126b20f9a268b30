package main

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"
)

func TestGCPercentFor(t *testing.T) {
	const mib = 1 << 20
	for _, c := range []struct {
		live, floor uint64
		want        int
	}{
		{10 * mib, 64 * mib, 640},  // a small heap: the floor decides
		{64 * mib, 64 * mib, 200},  // 100% would be below the base
		{500 * mib, 64 * mib, 200}, // a large heap: GOGC's 200% as before
		{0, 64 * mib, 1e6},         // nothing live yet: bounded
	} {
		if got := gcPercentFor(c.live, c.floor, 200); got != c.want {
			t.Errorf("gcPercentFor(%d MiB live, %d MiB floor) = %d, want %d", c.live/mib, c.floor/mib, got, c.want)
		}
	}
}

// TestHeapFloorFollowsEachCollection: after a collection the percent is
// set for the live heap it found, and after the stop nothing is set but
// the base.
func TestHeapFloorFollowsEachCollection(t *testing.T) {
	set := make(chan int, 100)
	h := &heapFloor{floor: 1 << 40, base: 200, last: 200, set: func(p int) int { set <- p; return 0 },
		sample: []metrics.Sample{{Name: "/gc/heap/live:bytes"}}}
	h.arm()
	deadline := time.After(10 * time.Second)
	for got := false; !got; {
		runtime.GC()
		select {
		case p := <-set:
			if p <= 200 {
				t.Fatalf("a 1 TiB floor over a small live heap set %d%%, want far more than 200", p)
			}
			got = true
		case <-time.After(10 * time.Millisecond):
		case <-deadline:
			t.Fatal("no percent set within 10 s of collections")
		}
	}
	h.mu.Lock()
	h.stopped = true
	h.mu.Unlock()
	for len(set) > 0 {
		<-set
	}
	runtime.GC()
	runtime.GC()
	select {
	case p := <-set:
		t.Fatalf("stopped, yet %d%% was set", p)
	case <-time.After(100 * time.Millisecond):
	}
}

// TestHeapFloorStartsAndStops: started, the floor sets the percent in
// force for the live heap (above the base for a small heap); stopped, the
// base is back.
func TestHeapFloorStartsAndStops(t *testing.T) {
	if _, set := os.LookupEnv("GOGC"); set {
		t.Skip("GOGC is set: the floor is off by design")
	}
	base := debug.SetGCPercent(200)
	defer debug.SetGCPercent(base)
	// The live heap is this test binary's, which the package's other
	// tests may have grown past 32 MiB (where the floor is below 200%):
	// the floor must set what the formula says for it.
	live := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(live)
	want := gcPercentFor(live[0].Value.Uint64(), 64<<20, 200)
	stop := startHeapFloor(64)
	raised := gcPercent()
	stop()
	after := gcPercent()
	if raised != want {
		t.Errorf("with a 64 MiB floor over a live heap of %d bytes the percent is %d, want %d", live[0].Value.Uint64(), raised, want)
	}
	if after != 200 {
		t.Errorf("after the stop the percent is %d, want the base, 200", after)
	}
}

// gcPercent is the GC percent in force.
func gcPercent() int {
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(s)
	return int(s[0].Value.Uint64())
}
