package retry

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Schedule is the wait before each retry: Schedule[0] before the second
// attempt, and so on; a delivery has len(Schedule)+1 attempts in all.
type Schedule []time.Duration

// Default is the Standard Webhooks schedule: the first attempt at once,
// then retries after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h and
// 24 h (about three days and a half in all).
var Default = Schedule{
	5 * time.Second, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour,
	5 * time.Hour, 10 * time.Hour, 14 * time.Hour, 20 * time.Hour, 24 * time.Hour,
}

// String is the schedule as Parse reads it.
func (s Schedule) String() string {
	out := make([]string, len(s))
	for i, d := range s {
		out[i] = d.String()
	}
	return strings.Join(out, ",")
}

// maxWait bounds one wait: a schedule is about days, not months.
const maxWait = 7 * 24 * time.Hour

// Parse reads a schedule written as comma-separated Go durations
// ("5s,5m,30m"), the value of --webhook-retry-schedule. Each must be
// positive and at most a week; an empty schedule means no retry.
func Parse(s string) (Schedule, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return Schedule{}, nil
	}
	var out Schedule
	for i, f := range strings.Split(s, ",") {
		d, err := time.ParseDuration(strings.TrimSpace(f))
		if err != nil || d <= 0 || d > maxWait {
			return nil, fmt.Errorf("retry schedule: wait %d is %q; each wait is a Go duration between 1ns and 168h, such as 5s, 5m or 2h, separated by commas", i+1, strings.TrimSpace(f))
		}
		out = append(out, d)
	}
	return out, nil
}

// Attempts is how many attempts a delivery gets in all.
func (s Schedule) Attempts() int { return len(s) + 1 }

// After returns when to try a delivery again after its attempt n (1 for
// the first) failed at failedAt, and false when that was the last attempt.
// The wait is the schedule's with jitter of up to a tenth either way, so
// that the deliveries of one burst do not all come back together; a
// Retry-After the receiver sent (retryAfter > 0) replaces the schedule's
// wait when it is longer.
func (s Schedule) After(n int, failedAt time.Time, retryAfter time.Duration) (time.Time, bool) {
	if n < 1 || n > len(s) {
		return time.Time{}, false
	}
	wait := s[n-1]
	if tenth := int64(wait / 10); tenth > 0 {
		wait += time.Duration(rand.Int64N(2*tenth+1) - tenth) //nolint:gosec // G404: jitter, not a secret
	}
	if retryAfter > wait {
		wait = min(retryAfter, maxWait)
	}
	return failedAt.Add(wait), true
}

// Outcome is what an attempt's answer means for its delivery.
type Outcome int

const (
	// Succeeded: a 2xx; the delivery is done.
	Succeeded Outcome = iota
	// Failed: anything else (a 3xx, since redirects are not followed, a
	// 4xx, a 5xx, no answer in time, a refused connection); retried on
	// the schedule.
	Failed
	// Gone: 410 Gone; the receiver asks for the endpoint to be disabled.
	Gone
)

// Classify reads an attempt's HTTP answer: its outcome, and for 429 and
// 503 the wait its Retry-After asks for (seconds or an HTTP date, read at
// now), 0 otherwise.
func Classify(status int, h http.Header, now time.Time) (Outcome, time.Duration) {
	switch {
	case status >= 200 && status < 300:
		return Succeeded, 0
	case status == http.StatusGone:
		return Gone, 0
	case status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable:
		return Failed, retryAfter(h.Get("Retry-After"), now)
	}
	return Failed, 0
}

// retryAfter reads a Retry-After value (RFC 9110: delay-seconds or an
// HTTP-date); a value it cannot read, or one in the past, is 0.
func retryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
		if secs <= 0 {
			return 0
		}
		return min(time.Duration(secs)*time.Second, maxWait)
	}
	if at, err := http.ParseTime(v); err == nil && at.After(now) {
		return min(at.Sub(now), maxWait)
	}
	return 0
}
