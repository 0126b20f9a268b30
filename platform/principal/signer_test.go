package principal

import (
	"strings"
	"testing"
	"time"
)

func TestSignVerify(t *testing.T) {
	s, err := NewSigner([]byte(strings.Repeat("k", 32)))
	if err != nil {
		t.Fatal(err)
	}
	p := Principal{Kind: KindKey, Subject: "key-1", Scopes: []Scope{ScopeRead}, AgencyID: "a1", SiteID: "s1"}
	got, err := s.Verify(s.Sign(p))
	if err != nil {
		t.Fatal(err)
	}
	if got.Kind != p.Kind || got.Subject != p.Subject || got.AgencyID != "a1" || got.SiteID != "s1" || !got.HasScope(ScopeRead) || got.HasScope(ScopeWrite) {
		t.Fatalf("round trip = %+v", got)
	}
}

func TestVerifyRejects(t *testing.T) {
	s, _ := NewSigner([]byte(strings.Repeat("k", 32)))
	other, _ := NewSigner([]byte(strings.Repeat("x", 32)))
	token := s.Sign(Principal{Kind: KindKey, AgencyID: "a1"})
	payload, sig, _ := strings.Cut(token, ".")
	forged := other.Sign(Principal{Kind: KindKey, AgencyID: "a2"})
	fpayload, _, _ := strings.Cut(forged, ".")

	for name, tok := range map[string]string{
		"other secret":      forged,
		"swapped payload":   fpayload + "." + sig,
		"no signature":      payload,
		"garbage":           "!!!.???",
		"empty":             "",
		"truncated sig":     payload + "." + sig[:10],
		"payload not JSON":  "bm90LWpzb24." + sig,
		"signature of none": "." + sig,
	} {
		if _, err := s.Verify(tok); err == nil {
			t.Errorf("%s: token accepted", name)
		}
	}

	// Tokens are short-lived, also once verified and cached.
	old := s.Sign(Principal{Kind: KindAdmin})
	if _, err := s.Verify(old); err != nil {
		t.Fatal(err)
	}
	s.now = func() time.Time { return time.Now().Add(tokenTTL + time.Second) }
	if _, err := s.Verify(old); err == nil {
		t.Error("expired token accepted")
	}
	never := s.Sign(Principal{Kind: KindAdmin, Subject: "fresh-at-expiry"})
	if _, err := s.Verify(never); err != nil {
		t.Errorf("a token signed now was refused: %v", err)
	}
}

// TestTokenReuse: a principal's token is reused while it has more than half
// its life left, then renewed; different principals never share one.
func TestTokenReuse(t *testing.T) {
	s, _ := NewSigner([]byte(strings.Repeat("k", 32)))
	now := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	s.now = func() time.Time { return now }
	a := Principal{Kind: KindKey, Subject: "k1", Scopes: []Scope{ScopeRead}, AgencyID: "a1"}
	t1 := s.Token(a)
	if s.Token(a) != t1 {
		t.Fatal("the same principal got a second token at once")
	}
	for _, other := range []Principal{
		{Kind: KindKey, Subject: "k1", Scopes: []Scope{ScopeRead, ScopeWrite}, AgencyID: "a1"},
		{Kind: KindKey, Subject: "k1", Scopes: []Scope{ScopeRead}, AgencyID: "a2"},
		{Kind: KindKey, Subject: "k1", Scopes: []Scope{ScopeRead}, AgencyID: "a1", SiteID: "s1"},
		{Kind: KindService, Subject: "k1", Scopes: []Scope{ScopeRead}, AgencyID: "a1"},
	} {
		tok := s.Token(other)
		got, err := s.Verify(tok)
		if tok == t1 || err != nil || got.AgencyID != other.AgencyID || got.SiteID != other.SiteID || got.Kind != other.Kind || len(got.Scopes) != len(other.Scopes) {
			t.Fatalf("principal %+v got token for %+v (%v)", other, got, err)
		}
	}
	now = now.Add(tokenTTL/2 + time.Second)
	t2 := s.Token(a)
	if t2 == t1 {
		t.Fatal("a token past half its life was reused")
	}
	if _, err := s.Verify(t2); err != nil {
		t.Fatal(err)
	}
}

func TestShortSecretRefused(t *testing.T) {
	if _, err := NewSigner([]byte("short")); err == nil {
		t.Fatal("short secret accepted")
	}
}

// BenchmarkSignVerify is the cost the principal adds to every proxied call:
// the gateway signs, the service verifies.
func BenchmarkSignVerify(b *testing.B) {
	s, _ := NewSigner([]byte(strings.Repeat("k", 32)))
	p := Principal{Kind: KindKey, Subject: "01a201ca-4651-7c23-8bfb-506131b18a4f", Scopes: []Scope{ScopeRead, ScopeWrite},
		AgencyID: "01a201ca-4651-7c23-8bfb-506131b18a4e", SiteID: "01a201ca-4651-7c23-8bfb-506131b18a4d"}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Verify(s.Sign(p)); err != nil {
			b.Fatal(err)
		}
	}
}
