package gateway

import (
	"context"
	"fmt"
	"hash/maphash"
	"math"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"

	"github.com/atrium-hq/atrium/gateway/internal/rest"
	"github.com/atrium-hq/atrium/platform/principal"
)

// inFlightLimit bounds the requests a listener serves at once. Over the bound a
// request is refused at once: queueing it would hold its connection and
// memory while the ones ahead of it run, and a client told to come back
// soon is better served than one left waiting for its deadline.
type inFlightLimit struct {
	n   atomic.Int64
	max int64
}

func (f *inFlightLimit) acquire() bool {
	if f.n.Add(1) > f.max {
		f.n.Add(-1)
		return false
	}
	return true
}

func (f *inFlightLimit) release() { f.n.Add(-1) }

// writeOverloaded answers a request over the in-flight bound.
func writeOverloaded(w http.ResponseWriter, max int64) {
	w.Header().Set("Retry-After", "1")
	rest.WriteJSON(w, http.StatusServiceUnavailable, rest.Body{Error: fmt.Sprintf(
		"the server is at its limit of %d requests in flight on this listener; retry with exponential backoff", max)})
}

// rateLimiter is a token bucket per API key: each key may make burst
// requests at once, refilled at rate per second. The bucket is
// golang.org/x/time/rate's Limiter; what is ours is the map of them. A
// bucket is kept only while it is not full (run sweeps the others): a full
// bucket is the same as none, so dropping it changes nothing, and the
// memory held is bounded by the keys active within the time a bucket
// takes to refill. Only authenticated keys get a bucket.
type rateLimiter struct {
	rate   rate.Limit
	burst  int
	refill time.Duration // from empty to full
	now    func() time.Time
	seed   maphash.Seed
	shards [64]bucketShard
}

type bucketShard struct {
	mu      sync.Mutex
	buckets map[string]*rate.Limiter
}

func newRateLimiter(perSecond float64, burst int, now func() time.Time) *rateLimiter {
	l := &rateLimiter{rate: rate.Limit(perSecond), burst: burst, now: now, seed: maphash.MakeSeed()}
	l.refill = time.Duration(float64(burst) / perSecond * float64(time.Second))
	for i := range l.shards {
		l.shards[i].buckets = map[string]*rate.Limiter{}
	}
	return l
}

// allow takes a token from key's bucket. When there is none it returns
// false and how long until there is one.
func (l *rateLimiter) allow(key string) (bool, time.Duration) {
	now := l.now()
	s := &l.shards[maphash.String(l.seed, key)%uint64(len(l.shards))]
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.buckets[key]
	if b == nil {
		b = rate.NewLimiter(l.rate, l.burst)
		s.buckets[key] = b
	}
	// A reservation says when the token would be there; a request refused
	// now gives it back, so only served requests spend tokens.
	r := b.ReserveN(now, 1)
	if wait := r.DelayFrom(now); wait > 0 {
		r.CancelAt(now)
		return false, wait
	}
	return true, 0
}

// run sweeps the buckets every refill period (at least every second)
// until ctx ends.
func (l *rateLimiter) run(ctx context.Context) {
	t := time.NewTicker(max(l.refill, time.Second))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			l.sweep()
		}
	}
}

// sweep drops the buckets that are full again, one shard at a time so that
// requests wait for at most one shard's sweep.
func (l *rateLimiter) sweep() {
	now := l.now()
	for i := range l.shards {
		s := &l.shards[i]
		s.mu.Lock()
		for k, b := range s.buckets {
			if b.TokensAt(now) >= float64(l.burst) {
				delete(s.buckets, k)
			}
		}
		s.mu.Unlock()
	}
}

// size is the number of buckets held, for tests.
func (l *rateLimiter) size() int {
	n := 0
	for i := range l.shards {
		s := &l.shards[i]
		s.mu.Lock()
		n += len(s.buckets)
		s.mu.Unlock()
	}
	return n
}

// writeRateLimited answers a request over its key's rate limit: 429, and
// Retry-After in whole seconds until the key has a token again.
func (l *rateLimiter) writeRateLimited(w http.ResponseWriter, wait time.Duration) {
	secs := max(1, int(math.Ceil(wait.Seconds())))
	w.Header().Set("Retry-After", strconv.Itoa(secs))
	rest.WriteJSON(w, http.StatusTooManyRequests, rest.Body{Error: fmt.Sprintf(
		"rate limit exceeded: each API key (and each signed-in person) may make %s requests per second, in bursts of up to %d; retry after %d second(s)",
		strconv.FormatFloat(float64(l.rate), 'f', -1, 64), l.burst, secs)})
}

// rateKey is the bucket of a caller: its key, or a person's user (all of
// their sessions together).
func rateKey(p principal.Principal) string { return string(p.Kind) + ":" + p.Subject }
