package memory

import (
	"fmt"
	"testing"
	"time"

	"github.com/atrium-hq/atrium/platform/memdb"
	"github.com/atrium-hq/atrium/services/actions/internal/app/seocache"
)

// Expired SEO answers do not pile up in memory: each write removes up to
// 16 of them, and none that is still valid.
func TestSEOCacheForgetsExpiredAnswers(t *testing.T) {
	s := New(memdb.New(nil))
	at := time.Date(2026, 5, 1, 8, 0, 0, 0, time.UTC)
	for i := range 40 {
		_ = s.CacheAnswer(t.Context(), fmt.Sprintf("old-%d", i), seocache.Answer{Value: []byte("{}"), StoredAt: at, ExpiresAt: at.Add(time.Hour)})
	}
	later := at.Add(2 * time.Hour)
	for i := range 3 {
		_ = s.CacheAnswer(t.Context(), fmt.Sprintf("new-%d", i), seocache.Answer{Value: []byte("{}"), StoredAt: later, ExpiresAt: later.Add(24 * time.Hour)})
		if got, want := len(s.seo), 40-16*(i+1)+i+1; i < 2 && got != want {
			t.Fatalf("after %d writes, %d answers kept, want %d", i+1, got, want)
		}
	}
	if len(s.seo) != 3 {
		t.Fatalf("%d answers kept, want the 3 valid ones", len(s.seo))
	}
}
