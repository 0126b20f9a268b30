package app_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/atrium-hq/atrium/platform/apperr"
	"github.com/atrium-hq/atrium/platform/memdb"
	"github.com/atrium-hq/atrium/platform/principal"
	"github.com/atrium-hq/atrium/services/collections/internal/adapters/memory"
	"github.com/atrium-hq/atrium/services/collections/internal/app"
)

// TestCanonicalLocale: the tags of the accepted form come back in their
// canonical case; anything else is refused.
func TestCanonicalLocale(t *testing.T) {
	for in, want := range map[string]string{
		"en": "en", "DE-at": "de-AT", "zh-hant-tw": "zh-Hant-TW", "es-419": "es-419", "gsw": "gsw", "sr-LATN": "sr-Latn",
	} {
		if got, ok := app.CanonicalLocale(in); !ok || got != want {
			t.Errorf("CanonicalLocale(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
	for _, in := range []string{"", "e", "engl", "de_AT", "de-", "-de", "de-A", "de-AUT", "de-12", "de-AT-x", "zh-Hant-Hans", "de-AT-1996", "dé", "en-US-u-ca"} {
		if got, ok := app.CanonicalLocale(in); ok {
			t.Errorf("CanonicalLocale(%q) accepted as %q", in, got)
		}
	}
}

// TestLocaleChain: a locale falls back to each shorter tag the site has,
// then to the default, none twice.
func TestLocaleChain(t *testing.T) {
	locales := []string{"en", "de", "de-AT", "zh-Hant-TW", "zh"}
	for tag, want := range map[string]string{
		"de-AT":      "de-AT,de,en",
		"de":         "de,en",
		"en":         "en",
		"zh-Hant-TW": "zh-Hant-TW,zh,en",
	} {
		if got := strings.Join(app.LocaleChain(tag, "en", locales), ","); got != want {
			t.Errorf("LocaleChain(%q) = %s, want %s", tag, got, want)
		}
	}
	site := app.Site{DefaultLocale: "en", Locales: locales}
	if got, err := app.ResolveLocale(site, "DE-at"); err != nil || got != "de-AT" {
		t.Fatalf("ResolveLocale(DE-at) = %q, %v", got, err)
	}
	if got, err := app.ResolveLocale(app.Site{}, ""); err != nil || got != "en" {
		t.Fatalf("a site that never set locales resolves no locale to %q, %v; want en", got, err)
	}
	_, err := app.ResolveLocale(site, "fr")
	wantKindSays(t, err, apperr.KindInvalid, `"fr"`, "en, de, de-AT, zh-Hant-TW, zh")
}

// TestSetLocales: a site starts in en alone; a change is validated whole
// (a bad tag names itself and the form, and changes nothing), stored in
// canonical case with the default first, and announced with its audit
// record naming what changed.
func TestSetLocales(t *testing.T) {
	db := memdb.New(nil)
	st := memory.New(db)
	sites := app.NewSites(app.SiteStoreOf(st), &agencies{}, app.Clock(time.Now))
	ctx := principal.NewContext(t.Context(), principal.Principal{Kind: principal.KindAdmin, Subject: "admin"})
	s, err := sites.Create(ctx, app.NewSite{Name: "Bakery"})
	if def, locales := s.Localization(); err != nil || def != "en" || !slices.Equal(locales, []string{"en"}) {
		t.Fatalf("a new site's locales: %q %v (%v), want en alone", def, locales, err)
	}
	drain(t, db)

	for _, tc := range []struct {
		def     string
		locales []string
		says    []string
	}{
		{"", []string{"en"}, []string{"default_locale is required", "BCP 47"}},
		{"english", nil, []string{`default_locale "english"`, "2 or 3 letters"}},
		{"en", []string{"de", "de_AT"}, []string{`locales[1] "de_AT"`, "de-AT"}},
		{"en", make([]string, app.MaxLocales+1), []string{"at most 30"}},
	} {
		_, err := sites.SetLocales(ctx, s.ID, tc.def, tc.locales)
		wantKindSays(t, err, apperr.KindInvalid, tc.says...)
	}
	many := make([]string, app.MaxLocales)
	for i := range many {
		many[i] = "d" + string(rune('a'+i%26)) + strings.Repeat("x", i/26)
	}
	_, err = sites.SetLocales(ctx, s.ID, "en", many)
	wantKindSays(t, err, apperr.KindInvalid, "at most 30 locales, default_locale included; got 31")
	_, err = sites.SetLocales(ctx, "0190b7a8-3c1e-7d2f-9a4b-0000000000ff", "en", nil)
	wantKindSays(t, err, apperr.KindNotFound, "0190b7a8-3c1e-7d2f-9a4b-0000000000ff")
	if got := drain(t, db); len(got) != 0 {
		t.Fatalf("refused changes announced %v", got)
	}

	got, err := sites.SetLocales(ctx, s.ID, "EN", []string{"de-at", "de", "en", "DE"})
	if err != nil || got.DefaultLocale != "en" || !slices.Equal(got.Locales, []string{"en", "de-AT", "de"}) {
		t.Fatalf("set locales: %+v %v; want en first, canonical, each once", got, err)
	}
	if read, _ := sites.Get(ctx, s.ID); !slices.Equal(read.Locales, got.Locales) {
		t.Fatalf("read back %v", read.Locales)
	}
	// A default missing from the list is added first.
	got, err = sites.SetLocales(ctx, s.ID, "de", []string{"en"})
	if err != nil || got.DefaultLocale != "de" || !slices.Equal(got.Locales, []string{"de", "en"}) {
		t.Fatalf("set default de: %+v %v", got, err)
	}
	events := drain(t, db)
	if len(events) != 4 || !strings.HasPrefix(events[0], "atrium.collections.site.updated ") ||
		!strings.Contains(events[1], `"fields":["locales"]`) || !strings.Contains(events[3], `"fields":["default_locale","locales"]`) {
		t.Fatalf("events: %v", events)
	}
}
