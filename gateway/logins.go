package gateway

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/atrium-hq/atrium/gateway/internal/rest"
)

// maxLoginBuckets bounds the sign-in buckets held at once. Past it the
// fullest are dropped first by the sweep, and, if that is not enough, any:
// a flood of invented email addresses must not grow the gateway without
// bound (the per-address limit already slows one client down).
const maxLoginBuckets = 200_000

// loginLimiter bounds sign-in attempts per email address and per client
// address, before the CRM is asked (so before any password hash is
// computed). Each is a token bucket of n attempts refilled evenly over
// the window: n attempts at once, then one every window/n.
type loginLimiter struct {
	perEmail, perAddress int
	window               time.Duration
	now                  func() time.Time

	mu      sync.Mutex
	buckets map[string]*loginBucket
}

type loginBucket struct {
	l *rate.Limiter
	n int
}

func newLoginLimiter(perEmail, perAddress int, window time.Duration, now func() time.Time) *loginLimiter {
	return &loginLimiter{perEmail: perEmail, perAddress: perAddress, window: window, now: now, buckets: map[string]*loginBucket{}}
}

// refused is a refused attempt: which limit, and when to try again.
type refused struct {
	what  string // "for this email address", "from your address (…)"
	limit int
	wait  time.Duration
}

// allow takes one attempt from the address's bucket and, when email is
// not empty, from the email's; it refuses when either is empty. A refused
// attempt takes nothing.
func (l *loginLimiter) allow(email, address string) *refused {
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	type take struct {
		key, what string
		n         int
	}
	takes := []take{{"addr:" + address, "from your address (" + address + ")", l.perAddress}}
	if email != "" {
		takes = append(takes, take{"email:" + email, "for this email address", l.perEmail})
	}
	var rs []*rate.Reservation
	for _, t := range takes {
		b := l.buckets[t.key]
		if b == nil {
			if len(l.buckets) >= maxLoginBuckets {
				l.sweepLocked(now)
			}
			b = &loginBucket{l: rate.NewLimiter(rate.Limit(float64(t.n)/l.window.Seconds()), t.n), n: t.n}
			l.buckets[t.key] = b
		}
		r := b.l.ReserveN(now, 1)
		if wait := r.DelayFrom(now); wait > 0 {
			r.CancelAt(now)
			for _, prev := range rs {
				prev.CancelAt(now)
			}
			return &refused{what: t.what, limit: t.n, wait: wait}
		}
		rs = append(rs, r)
	}
	return nil
}

// run sweeps the full buckets every minute until ctx ends.
func (l *loginLimiter) run(ctx context.Context) {
	t := time.NewTicker(time.Minute)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			l.mu.Lock()
			l.sweepLocked(l.now())
			l.mu.Unlock()
		}
	}
}

// sweepLocked drops the buckets that are full again (the same as none),
// and, while too many remain, any.
func (l *loginLimiter) sweepLocked(now time.Time) {
	for k, b := range l.buckets {
		if b.l.TokensAt(now) >= float64(b.n) {
			delete(l.buckets, k)
		}
	}
	for k := range l.buckets {
		if len(l.buckets) < maxLoginBuckets*9/10 {
			break
		}
		delete(l.buckets, k)
	}
}

// write answers a refused attempt: 429, Retry-After in whole seconds, and
// when to try again.
func (l *loginLimiter) write(w http.ResponseWriter, r *refused) {
	secs := max(1, int(math.Ceil(r.wait.Seconds())))
	w.Header().Set("Retry-After", strconv.Itoa(secs))
	rest.WriteJSON(w, http.StatusTooManyRequests, rest.Body{Error: fmt.Sprintf(
		"too many sign-in attempts %s: at most %d in %s; try again in %d second(s), at %s",
		r.what, r.limit, l.window, secs, l.now().Add(time.Duration(secs)*time.Second).UTC().Format(time.RFC3339))})
}
