package retry_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/atrium-hq/atrium/services/webhooks/internal/retry"
)

// TestDefaultIsTheStandardSchedule: ten attempts, the waits the Standard
// Webhooks spec recommends, and Parse reads back what String writes.
func TestDefaultIsTheStandardSchedule(t *testing.T) {
	want := "5s,5m0s,30m0s,2h0m0s,5h0m0s,10h0m0s,14h0m0s,20h0m0s,24h0m0s"
	if got := retry.Default.String(); got != want || retry.Default.Attempts() != 10 {
		t.Fatalf("Default = %s (%d attempts), want %s (10)", got, retry.Default.Attempts(), want)
	}
	back, err := retry.Parse(retry.Default.String())
	if err != nil || back.String() != want {
		t.Fatalf("Parse(String()) = %v, %v", back, err)
	}
}

func TestParse(t *testing.T) {
	s, err := retry.Parse(" 1s, 2s ,500ms")
	if err != nil || s.String() != "1s,2s,500ms" {
		t.Fatalf("Parse = %v, %v; want 1s,2s,500ms", s, err)
	}
	if s, err := retry.Parse(""); err != nil || s.Attempts() != 1 {
		t.Fatalf("an empty schedule = %v, %v; want one attempt and no retry", s, err)
	}
	for _, bad := range []string{"5", "1s,,2s", "-1s", "0s", "200h", "soon"} {
		_, err := retry.Parse(bad)
		if err == nil || !strings.Contains(err.Error(), "a Go duration between 1ns and 168h") {
			t.Errorf("Parse(%q) = %v, want an error saying what a wait is", bad, err)
		}
	}
}

// TestAfterJittersWithinATenth: each retry comes at the schedule's wait,
// give or take a tenth; after the last attempt there is none.
func TestAfterJittersWithinATenth(t *testing.T) {
	s := retry.Schedule{10 * time.Second, time.Hour}
	at := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	seen := map[time.Time]bool{}
	for range 200 {
		next, ok := s.After(1, at, 0)
		if !ok || next.Before(at.Add(9*time.Second)) || next.After(at.Add(11*time.Second)) {
			t.Fatalf("After(1) = %v, %v; want within 9 to 11 s", next.Sub(at), ok)
		}
		seen[next] = true
	}
	if len(seen) < 10 {
		t.Errorf("200 retries fell on %d instants: no jitter", len(seen))
	}
	if next, ok := s.After(2, at, 0); !ok || next.Sub(at) < 54*time.Minute || next.Sub(at) > 66*time.Minute {
		t.Errorf("After(2) = %v, %v; want about an hour", next.Sub(at), ok)
	}
	if _, ok := s.After(3, at, 0); ok {
		t.Error("After(3) on a schedule of two retries: want no more attempts")
	}
	if next, _ := s.After(1, at, 2*time.Minute); next.Sub(at) != 2*time.Minute {
		t.Errorf("After(1) with Retry-After 2m = %v, want the receiver's 2m", next.Sub(at))
	}
}

func TestClassify(t *testing.T) {
	now := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	h := func(v string) http.Header { return http.Header{"Retry-After": {v}} }
	for _, tc := range []struct {
		status int
		h      http.Header
		want   retry.Outcome
		wait   time.Duration
	}{
		{200, nil, retry.Succeeded, 0},
		{204, nil, retry.Succeeded, 0},
		{301, nil, retry.Failed, 0},
		{308, nil, retry.Failed, 0},
		{400, nil, retry.Failed, 0},
		{410, nil, retry.Gone, 0},
		{429, h("120"), retry.Failed, 2 * time.Minute},
		{503, h(now.Add(90 * time.Second).Format(http.TimeFormat)), retry.Failed, 90 * time.Second},
		{503, h("soon"), retry.Failed, 0},
		{503, h("-5"), retry.Failed, 0},
		{500, h("120"), retry.Failed, 0},
	} {
		got, wait := retry.Classify(tc.status, tc.h, now)
		if got != tc.want || wait != tc.wait {
			t.Errorf("Classify(%d, %v) = %v, %v; want %v, %v", tc.status, tc.h, got, wait, tc.want, tc.wait)
		}
	}
}
