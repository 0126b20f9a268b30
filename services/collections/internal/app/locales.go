package app

// A site's locales (docs/collections.md#locales): the language tags its
// content is written in, one of them the default. An item's data holds
// the default locale's values, so a site with one locale, and every site
// made before locales, reads and writes exactly as before.

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/atrium-hq/atrium/platform/apperr"
	"github.com/atrium-hq/atrium/platform/events"
	"github.com/atrium-hq/atrium/platform/outbox"
	"github.com/atrium-hq/atrium/platform/value"
)

// DefaultLocale is the default locale of a site that never set one: every
// site made before locales.
const DefaultLocale = "en"

// MaxLocales bounds a site's locales: the proto declares the same maximum
// on SetSiteLocales' list (a test holds the two to one number).
const MaxLocales = 30

// LocalizableTypes are the field types that may be localized: the ones
// whose values are prose a translator rewrites. A select's options are
// the values themselves (what filters match), shared by every locale, so
// a select is not localized; its labels belong to the site's front end.
var LocalizableTypes = []string{TypeText, TypeRichText}

// Localization returns the site's default locale and its locales (the
// default first), with a site that never set them in DefaultLocale alone.
func (s Site) Localization() (string, []string) {
	if s.DefaultLocale == "" {
		return DefaultLocale, []string{DefaultLocale}
	}
	if len(s.Locales) == 0 {
		return s.DefaultLocale, []string{s.DefaultLocale}
	}
	return s.DefaultLocale, s.Locales
}

// localeForm is the rule CanonicalLocale applies, as the 400s state it.
const localeForm = "a BCP 47 language tag: a language of 2 or 3 letters, then optionally a script of 4 letters, then optionally a region of 2 letters or 3 digits, separated by - (en, de-AT, zh-Hant-TW, es-419)"

// CanonicalLocale checks a BCP 47 tag of the subset Atrium accepts
// (language[-Script][-REGION]) and returns it in its canonical case
// (de-AT, zh-Hant): tags compare case-insensitively, so a site stores
// one spelling and every lookup compares with it.
func CanonicalLocale(tag string) (string, bool) {
	parts := strings.Split(tag, "-")
	if len(parts) > 3 || !letters(parts[0], 2, 3) {
		return "", false
	}
	out := []string{strings.ToLower(parts[0])}
	rest := parts[1:]
	if len(rest) > 0 && letters(rest[0], 4, 4) {
		out = append(out, strings.ToUpper(rest[0][:1])+strings.ToLower(rest[0][1:]))
		rest = rest[1:]
	}
	if len(rest) > 0 {
		switch r := rest[0]; {
		case letters(r, 2, 2):
			out = append(out, strings.ToUpper(r))
		case len(r) == 3 && digits(r):
			out = append(out, r)
		default:
			return "", false
		}
		rest = rest[1:]
	}
	if len(rest) > 0 {
		return "", false
	}
	return strings.Join(out, "-"), true
}

func letters(s string, lo, hi int) bool {
	if len(s) < lo || len(s) > hi {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i] | 0x20; c < 'a' || c > 'z' {
			return false
		}
	}
	return true
}

func digits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// LocaleChain is the fallback chain of a requested locale on a site whose
// locales are locales and default def: the tag, then each shorter tag
// made by dropping its last subtag (de-AT, de), then the default; each
// only if the site has it, none twice. The requested tag must be one of
// the site's locales (ResolveLocale checks that).
func LocaleChain(tag, def string, locales []string) []string {
	var chain []string
	for t := tag; t != ""; {
		if slices.Contains(locales, t) && !slices.Contains(chain, t) {
			chain = append(chain, t)
		}
		i := strings.LastIndexByte(t, '-')
		if i < 0 {
			break
		}
		t = t[:i]
	}
	if !slices.Contains(chain, def) {
		chain = append(chain, def)
	}
	return chain
}

// ResolveLocale reads a request's locale parameter against the site: ""
// is the default locale; otherwise a tag of the site's (any case). The
// 400 names the site's locales.
func ResolveLocale(s Site, param string) (string, error) {
	def, locales := s.Localization()
	if param == "" {
		return def, nil
	}
	tag, ok := CanonicalLocale(param)
	if !ok || !slices.Contains(locales, tag) {
		return "", apperr.Invalid("locale %q is not one of this site's locales: %s (default %s)", param, strings.Join(locales, ", "), def)
	}
	return tag, nil
}

// SetLocales replaces a site's locales and default locale. The default is
// always one of the locales (added first if the list lacks it); tags are
// stored in canonical case, each once. An id that is not a UUID names no
// site.
func (u *Sites) SetLocales(ctx context.Context, id, defaultLocale string, locales []string) (Site, error) {
	canonical, err := value.PathID("site", id)
	if err != nil {
		return Site{}, err
	}
	if len(locales) > MaxLocales {
		return Site{}, apperr.Invalid("locales lists at most %d locales; got %d", MaxLocales, len(locales))
	}
	if defaultLocale == "" {
		return Site{}, apperr.Invalid("default_locale is required: %s", localeForm)
	}
	def, ok := CanonicalLocale(defaultLocale)
	if !ok {
		return Site{}, apperr.Invalid("default_locale %q must be %s", defaultLocale, localeForm)
	}
	clean := []string{def}
	for i, l := range locales {
		tag, ok := CanonicalLocale(l)
		if !ok {
			return Site{}, apperr.Invalid("locales[%d] %q must be %s", i, l, localeForm)
		}
		if !slices.Contains(clean, tag) {
			clean = append(clean, tag)
		}
	}
	if len(clean) > MaxLocales {
		return Site{}, apperr.Invalid("a site has at most %d locales, default_locale included; got %d", MaxLocales, len(clean))
	}
	var s Site
	err = u.store.InTx(ctx, func(tx SiteTx) error {
		s, err = tx.Site(ctx, canonical)
		if errors.Is(err, ErrNotFound) {
			return value.NotFound("site", id)
		} else if err != nil {
			return err
		}
		oldDef, oldLocales := s.Localization()
		// Items hold values in the locales other than the default; one
		// that stops being such a locale (removed, or made the default,
		// whose values are the data) would leave them unreachable.
		var gone []string
		for _, l := range oldLocales {
			if l != oldDef && (l == def || !slices.Contains(clean, l)) {
				gone = append(gone, l)
			}
		}
		if len(gone) > 0 {
			held, err := tx.ItemsInLocales(ctx, s.ID, gone)
			if err != nil {
				return err
			}
			for _, l := range gone {
				if n := held[l]; n > 0 {
					return apperr.Conflict("%d items hold values in locale %s, which this change removes from the site's other locales (%s); remove those values first (PATCH each with locale %s and null), or keep %s",
						n, l, strings.Join(oldLocales, ", "), l, l)
				}
			}
		}
		fields := []string{"locales"}
		if oldDef != def {
			fields = append(fields, "default_locale")
		}
		s.DefaultLocale, s.Locales, s.UpdatedAt = def, clean, u.clock.Now()
		if err := tx.UpdateSite(ctx, s); err != nil {
			return err
		}
		if err := outbox.Add(ctx, tx, events.SiteUpdated, siteEvent(s), s.UpdatedAt); err != nil {
			return err
		}
		return recordSite(ctx, tx, s, "site.updated", fields)
	})
	return s, err
}
