package storetest

import (
	"testing"

	"github.com/atrium-hq/atrium/services/actions/internal/app/action"
)

// testBrandingByAgency: an agency has no branding until it puts one; a
// put replaces it whole (a logo removed is gone); another agency's is its
// own.
func testBrandingByAgency(t *testing.T, s Store) {
	ctx := t.Context()
	a, b := id(), id()
	if got, ok, err := s.Branding(ctx, a); err != nil || ok {
		t.Fatalf("a new agency's branding = %+v, %v, %v; want none", got, ok, err)
	}
	first := action.Branding{Name: "Northwind SEO", LogoAssetID: id(), Primary: "#123456", Accent: "#abcdef"}
	if err := s.PutBranding(ctx, a, first); err != nil {
		t.Fatal(err)
	}
	if got, ok, err := s.Branding(ctx, a); err != nil || !ok || got != first {
		t.Fatalf("branding = %+v, %v, %v; want %+v", got, ok, err, first)
	}
	second := action.Branding{Name: "Northwind & Co — SEO", Primary: "#000000", Accent: "#ffffff"}
	if err := s.PutBranding(ctx, a, second); err != nil {
		t.Fatal(err)
	}
	if got, _, _ := s.Branding(ctx, a); got != second {
		t.Fatalf("after a second put: %+v; want %+v (the logo removed)", got, second)
	}
	if got, ok, err := s.Branding(ctx, b); err != nil || ok {
		t.Fatalf("another agency sees %+v, %v, %v; want none", got, ok, err)
	}
}
