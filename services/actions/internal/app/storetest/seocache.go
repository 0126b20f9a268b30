package storetest

import (
	"bytes"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/atrium-hq/atrium/services/actions/internal/app/seocache"
)

func cached(t *testing.T, s Store, key string, now time.Time) (seocache.Answer, bool) {
	t.Helper()
	a, ok, err := s.CachedAnswer(t.Context(), key, now)
	if err != nil {
		t.Fatalf("CachedAnswer: %v", err)
	}
	return a, ok
}

func cache(t *testing.T, s Store, key string, a seocache.Answer) {
	t.Helper()
	if err := s.CacheAnswer(t.Context(), key, a); err != nil {
		t.Fatalf("CacheAnswer: %v", err)
	}
}

// testSEOCacheExpiry: an answer is given back, with the times it was
// stored with, until it expires, and not from then on; another key has
// none.
func testSEOCacheExpiry(t *testing.T, s Store) {
	key := "k-" + id()
	a := seocache.Answer{Value: []byte(`{"Ideas":[{"Keyword":"sourdough"}]}`), StoredAt: base, ExpiresAt: base.Add(24 * time.Hour)}
	cache(t, s, key, a)
	for _, at := range []time.Time{base, base.Add(23*time.Hour + 59*time.Minute)} {
		got, ok := cached(t, s, key, at)
		if !ok || !bytes.Equal(got.Value, a.Value) || !got.StoredAt.Equal(a.StoredAt) || !got.ExpiresAt.Equal(a.ExpiresAt) {
			t.Fatalf("at %s: %+v, %v; want the answer stored", at, got, ok)
		}
	}
	for _, at := range []time.Time{base.Add(24 * time.Hour), base.Add(48 * time.Hour)} {
		if got, ok := cached(t, s, key, at); ok {
			t.Fatalf("at %s the expired answer %+v was given", at, got)
		}
	}
	if _, ok := cached(t, s, "k-"+id(), base); ok {
		t.Fatal("an unknown key has an answer")
	}
	// An expired answer is gone for good once later ones are written: a
	// purge of some, and never of those still valid.
	for i := range 40 {
		cache(t, s, fmt.Sprintf("old-%d-%s", i, key), seocache.Answer{Value: []byte("{}"), StoredAt: base, ExpiresAt: base.Add(time.Hour)})
	}
	later := seocache.Answer{Value: []byte("{}"), StoredAt: base.Add(2 * time.Hour), ExpiresAt: base.Add(26 * time.Hour)}
	for i := range 5 {
		cache(t, s, fmt.Sprintf("new-%d-%s", i, key), later)
	}
	for i := range 5 {
		if _, ok := cached(t, s, fmt.Sprintf("new-%d-%s", i, key), base.Add(3*time.Hour)); !ok {
			t.Fatalf("a valid answer was purged")
		}
	}
}

// testSEOCacheReplaces: a second answer under a key replaces the first;
// any bytes are kept as they are (a JSON answer may hold a NUL escape, a
// business name in any script).
func testSEOCacheReplaces(t *testing.T, s Store) {
	key := "k-" + id()
	cache(t, s, key, seocache.Answer{Value: []byte(`{"v":1}`), StoredAt: base, ExpiresAt: base.Add(time.Hour)})
	value := []byte("{\"name\":\"Caf\u00e9 Zo\u00eb \\u0000 \u6771\u4eac\"}\x00\xff")
	cache(t, s, key, seocache.Answer{Value: value, StoredAt: base.Add(time.Minute), ExpiresAt: base.Add(2 * time.Hour)})
	got, ok := cached(t, s, key, base.Add(90*time.Minute))
	if !ok || !bytes.Equal(got.Value, value) || !got.StoredAt.Equal(base.Add(time.Minute)) {
		t.Fatalf("replaced answer read back as %+v, %v", got, ok)
	}
	got.Value[0] = 'X'
	if again, _ := cached(t, s, key, base); again.Value[0] == 'X' {
		t.Fatal("changing an answer read back changed the stored one")
	}
}

// testSEOCacheConcurrentWriters: replicas that paid for the same question
// at once each store their answer without an error; one stays.
func testSEOCacheConcurrentWriters(t *testing.T, s Store) {
	key := "k-" + id()
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for i := range 16 {
		wg.Go(func() {
			errs <- s.CacheAnswer(t.Context(), key, seocache.Answer{Value: fmt.Appendf(nil, `{"writer":%d}`, i), StoredAt: base, ExpiresAt: base.Add(time.Hour)})
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("a concurrent write failed: %v", err)
		}
	}
	if _, ok := cached(t, s, key, base); !ok {
		t.Fatal("no answer after concurrent writes")
	}
}
