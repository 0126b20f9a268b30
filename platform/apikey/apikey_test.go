package apikey

import (
	"strings"
	"testing"
)

func TestGeneratedKeysAreWellFormed(t *testing.T) {
	seen := map[string]bool{}
	for range 200 {
		s, err := Generate()
		if err != nil {
			t.Fatal(err)
		}
		if !WellFormed(s) || len(s) != Len || seen[s] {
			t.Fatalf("generated %q: well formed %v, length %d (want %d), repeated %v", s, WellFormed(s), len(s), Len, seen[s])
		}
		seen[s] = true
		if p := DisplayPrefix(s); !strings.HasPrefix(s, p) || len(p) != 12 {
			t.Fatalf("display prefix %q of %q", p, s)
		}
	}
	for _, bad := range []string{"", "atr_", "atr_" + strings.Repeat("a", 42), "atr_" + strings.Repeat("a", 44),
		"xyz_" + strings.Repeat("a", 43), "atr_" + strings.Repeat("!", 43), "ATR_" + strings.Repeat("a", 43)} {
		if WellFormed(bad) {
			t.Errorf("%q accepted", bad)
		}
	}
}
