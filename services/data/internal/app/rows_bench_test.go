package app

import (
	"testing"
	"time"
)

// A bulk load validates every row with buildRow (a million keyword rows
// in the loader benchmark); these keep its cost per row in view.

func BenchmarkBuildRow(b *testing.B) {
	r, _ := Lookup("keywords")
	obj := map[string]any{"keyword": "sourdough bread", "position": 3.0, "url": "https://bakery.example/bread",
		"search_volume": 1900.0, "difficulty": 41.5, "status": "active", "tracked_at": "2026-11-20T08:00:00Z",
		"id": "0190b7a8-3c1e-7d2f-9a4b-5c6d7e8f9a0b", "created_at": "2026-11-01"}
	now := time.Date(2026, 11, 22, 5, 46, 3, 0, time.UTC)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := buildRow(r, "0190b7a8-3c1e-7d2f-9a4b-5c6d7e8f9a0c", "", obj, now); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkFilterValue(b *testing.B) {
	r, _ := Lookup("keywords")
	fd, _ := r.Field("status")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := fd.rule().ParseFilter(fd.Name, "active"); err != nil {
			b.Fatal(err)
		}
	}
}
