package app

// Items in a site's locales (docs/collections.md#locales): which values a
// read in a locale shows, and what a write in a locale may change. The
// stores hold the default locale's values in Item.Values and the others'
// in Item.Locales; this file is the only place that chooses among them.

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"

	"github.com/atrium-hq/atrium/platform/apperr"
)

// LocaleAll is the locale parameter that asks for every locale's values.
const LocaleAll = "*"

// Fallback values: FallbackDefault (also "") follows the chain,
// FallbackNone shows only the requested locale's own values.
const (
	FallbackDefault = "default"
	FallbackNone    = "none"
)

// ReadLocale is how an item is read: in which locale, and whether a
// missing value falls back along the chain. The zero value reads the
// stored data as it is (the default locale), as before locales.
type ReadLocale struct {
	// Locale is the requested tag as resolved (canonical), or LocaleAll;
	// "" when the request named none.
	Locale string
	// Chain is the fallback chain (Locale first, the default last); only
	// Locale when fallback is none.
	Chain []string
	// Default is the site's default locale.
	Default string
}

// Requested reports whether the request named a locale: only then does
// an item say which locale it was read in.
func (r ReadLocale) Requested() bool { return r.Locale != "" }

// readLocale resolves a read's locale and fallback parameters against the
// site.
func (u *Content) readLocale(ctx context.Context, siteID, locale, fallback string) (ReadLocale, error) {
	switch fallback {
	case "", FallbackDefault, FallbackNone:
	default:
		return ReadLocale{}, apperr.Invalid("fallback must be default or none (default default); got %q", fallback)
	}
	if locale == "" {
		if fallback != "" {
			return ReadLocale{}, apperr.Invalid("fallback applies to a read with locale; give locale too")
		}
		return ReadLocale{}, nil
	}
	s, err := u.store.Site(ctx, siteID)
	if errors.Is(err, ErrNotFound) {
		return ReadLocale{}, apperr.NotFound("site %q not found", siteID)
	} else if err != nil {
		return ReadLocale{}, err
	}
	def, locales := s.Localization()
	if locale == LocaleAll {
		return ReadLocale{Locale: LocaleAll, Chain: locales, Default: def}, nil
	}
	tag, err := ResolveLocale(s, locale)
	if err != nil {
		return ReadLocale{}, err
	}
	r := ReadLocale{Locale: tag, Chain: LocaleChain(tag, def, locales), Default: def}
	if fallback == FallbackNone {
		r.Chain = []string{tag}
	}
	return r, nil
}

// localized returns the values of it in the locale r reads, for c's
// fields, and for each localized field whose value came from another
// locale of the chain, that locale (LocaleFallbacks). Non-localized
// fields are the data's. With LocaleAll a localized field is an object
// of every locale's value ({"en": ..., "de": ...}).
func (r ReadLocale) localized(fields []Field, it Item) (Values, map[string]string) {
	if !r.Requested() {
		return it.Values, nil
	}
	out := make(Values, len(it.Values))
	var fallbacks map[string]string
	in := func(locale string) Values {
		if locale == r.Default {
			return it.Values
		}
		return it.Locales[locale]
	}
	for k, v := range it.Values {
		out[k] = v
	}
	for _, f := range fields {
		if !f.Localized {
			continue
		}
		delete(out, f.Key)
		if r.Locale == LocaleAll {
			all := map[string]json.RawMessage{}
			for _, l := range r.Chain {
				if v, ok := in(l)[f.Key]; ok {
					all[l] = v
				}
			}
			if len(all) > 0 {
				b, _ := json.Marshal(all) // raw JSON values: cannot fail
				out[f.Key] = b
			}
			continue
		}
		for _, l := range r.Chain {
			if v, ok := in(l)[f.Key]; ok {
				out[f.Key] = v
				if l != r.Locale {
					if fallbacks == nil {
						fallbacks = map[string]string{}
					}
					fallbacks[f.Key] = l
				}
				break
			}
		}
	}
	return out, fallbacks
}

// Localize sets each item's values of fields (those the read shows) to
// those of the locale r reads (ReadIn and Fallbacks say which).
func (r ReadLocale) Localize(fields []Field, items []Item) {
	if !r.Requested() {
		return
	}
	for i := range items {
		items[i].Values, items[i].Fallbacks = r.localized(fields, items[i])
		items[i].ReadIn = r.Locale
	}
}

// writeLocale resolves a write's locale parameter: "" or the default
// writes the data; another locale of the site writes only localized
// fields, in that locale (the 400 names the others).
func (u *Content) writeLocale(ctx context.Context, c Collection, locale string, data map[string]any) (string, error) {
	if locale == "" {
		return "", nil
	}
	if locale == LocaleAll {
		return "", apperr.Invalid("locale=* reads every locale; a write names one locale of the site")
	}
	s, err := u.store.Site(ctx, c.SiteID)
	if err != nil {
		return "", err
	}
	tag, err := ResolveLocale(s, locale)
	if err != nil {
		return "", err
	}
	if def, _ := s.Localization(); tag == def {
		return "", nil
	}
	var fixed []string
	for k := range data {
		if f, ok := c.Field(k); ok && !f.Localized {
			fixed = append(fixed, k)
		}
	}
	if len(fixed) > 0 {
		slices.Sort(fixed)
		return "", apperr.Invalid("locale %s holds only the localized fields (%s); %s are the same in every locale: write them without locale (the default, %s)",
			tag, strings.Join(localizedKeys(c), ", "), strings.Join(fixed, ", "), s.DefaultLocaleOr())
	}
	return tag, nil
}

// DefaultLocaleOr is the site's default locale (DefaultLocale when never
// set).
func (s Site) DefaultLocaleOr() string {
	def, _ := s.Localization()
	return def
}

func localizedKeys(c Collection) []string {
	var keys []string
	for _, f := range c.Fields {
		if f.Localized {
			keys = append(keys, f.Key)
		}
	}
	if len(keys) == 0 {
		return []string{"none"}
	}
	return keys
}

// inLocale is c as a write in another locale checks its data: a required
// field is the default locale's to hold, so null there only removes the
// locale's own value (a read then falls back).
func inLocale(c Collection) Collection {
	c.Fields = slices.Clone(c.Fields)
	for i := range c.Fields {
		c.Fields[i].Required = false
	}
	return c
}
