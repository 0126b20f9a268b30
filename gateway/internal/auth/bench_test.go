package auth

import (
	"testing"
	"time"
)

// BenchmarkAuthenticateCached is the per-request cost of API key
// authentication when the key is in the cache: header parsing, format
// check, SHA-256 and the cache lookup.
func BenchmarkAuthenticateCached(b *testing.B) {
	crm := &countingCRM{key: activeKey()}
	k, _ := newKeys(b, crm, time.Hour)
	if _, err := k.Authenticate(b.Context(), "Bearer "+secretKey); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := k.Authenticate(b.Context(), "Bearer "+secretKey); err != nil {
			b.Fatal(err)
		}
	}
}
