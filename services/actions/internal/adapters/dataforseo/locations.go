package dataforseo

import (
	"cmp"
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/atrium-hq/atrium/services/actions/internal/app/provider"
)

// pathLocations lists DataForSEO Labs' locations: countries only, which is
// what its keyword data is counted by. The list costs nothing.
const pathLocations = "/v3/dataforseo_labs/locations_and_languages"

// location is one of DataForSEO Labs' locations.
type location struct {
	Code int    `json:"location_code"`
	Name string `json:"location_name"`
	ISO  string `json:"country_iso_code"`
	Type string `json:"location_type"`
}

// aliases are what people write for a country that is neither its name
// nor its ISO code at DataForSEO.
var aliases = map[string]string{"uk": "gb", "great britain": "gb", "usa": "us", "america": "us", "united states of america": "us"}

// locations is DataForSEO Labs' list of locations, fetched when first
// needed and again once it is older than ttl; concurrent callers share one
// fetch, and a failed refresh keeps the list it had.
type locations struct {
	p   *Provider
	ttl time.Duration
	now func() time.Time

	mu      sync.Mutex
	byKey   map[string]location // lower-case name and ISO code
	names   []string            // "United Kingdom (GB)", sorted
	fetched time.Time
	loading chan struct{} // closed when the fetch under way ends
	loadErr error
}

// list returns the locations, fetching them if they are missing or stale.
func (l *locations) list(ctx context.Context) (map[string]location, []string, error) {
	for {
		l.mu.Lock()
		fresh := l.byKey != nil && l.now().Sub(l.fetched) < l.ttl
		if fresh || (l.byKey != nil && l.loading != nil) {
			// Fresh, or stale with a refresh under way: the list at hand.
			byKey, names := l.byKey, l.names
			l.mu.Unlock()
			return byKey, names, nil
		}
		if wait := l.loading; wait != nil {
			l.mu.Unlock()
			select {
			case <-wait:
			case <-ctx.Done():
				return nil, nil, ctx.Err()
			}
			l.mu.Lock()
			err, byKey, names := l.loadErr, l.byKey, l.names
			l.mu.Unlock()
			switch {
			case byKey != nil:
				return byKey, names, nil
			case errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
				// The fetch ended with its caller; this caller tries.
				continue
			case err != nil:
				return nil, nil, err
			}
		}
		done := make(chan struct{})
		l.loading = done
		l.mu.Unlock()
		byKey, names, err := l.fetch(ctx)
		l.mu.Lock()
		l.loading, l.loadErr = nil, err
		if err == nil {
			l.byKey, l.names, l.fetched = byKey, names, l.now()
		} else if l.byKey != nil {
			l.p.logger.WarnContext(ctx, "could not refresh DataForSEO Labs' locations; keeping the list fetched before", "error", err)
		}
		byKey, names = l.byKey, l.names
		l.mu.Unlock()
		close(done)
		if byKey == nil {
			return nil, nil, err
		}
		return byKey, names, nil
	}
}

func (l *locations) fetch(ctx context.Context) (map[string]location, []string, error) {
	var all []location
	if err := l.p.call(ctx, pathLocations, nil, &all); err != nil {
		return nil, nil, err
	}
	byKey := map[string]location{}
	var names []string
	for _, loc := range all {
		if loc.Code == 0 || strings.TrimSpace(loc.Name) == "" {
			continue
		}
		byKey[key(loc.Name)] = loc
		label := loc.Name
		if loc.ISO != "" {
			byKey[key(loc.ISO)] = loc
			label += " (" + loc.ISO + ")"
		}
		names = append(names, label)
	}
	if len(byKey) == 0 {
		return nil, nil, provider.Failure(providerName, http.StatusBadGateway, nil, "DataForSEO's list of DataForSEO Labs locations is empty")
	}
	slices.SortFunc(names, func(a, b string) int { return cmp.Compare(a, b) })
	return byKey, names, nil
}

func key(s string) string { return strings.ToLower(strings.Join(strings.Fields(s), " ")) }

// resolve finds where keyword data is counted for what a question named:
// a country by its name or ISO code, whatever its case and spacing; an
// empty name is the default location. An unknown one is a 400 saying what
// is accepted.
func (p *Provider) resolve(ctx context.Context, name string) (location, error) {
	asked := strings.TrimSpace(name)
	if asked == "" {
		asked = p.defaultLocation
	}
	byKey, names, err := p.locations.list(ctx)
	if err != nil {
		return location{}, err
	}
	k := key(asked)
	if a, ok := aliases[k]; ok {
		k = a
	}
	if loc, ok := byKey[k]; ok {
		return loc, nil
	}
	if strings.TrimSpace(name) == "" {
		// The deployment's own setting is wrong: not the caller's fault.
		return location{}, provider.Failure(providerName, http.StatusServiceUnavailable, nil,
			"the deployment's default location %q (--dataforseo-location) is not a country DataForSEO Labs has keyword data for; an operator sets one of: %s",
			p.defaultLocation, strings.Join(names, ", "))
	}
	return location{}, provider.Failure(providerName, http.StatusBadRequest, nil, "%s", accepted(names))
}

// accepted says what a location may be, listing the countries: DataForSEO
// Labs has about a hundred, short enough to name them all.
func accepted(names []string) string {
	return "a country DataForSEO Labs has keyword data for, by name or ISO code, one of: " + strings.Join(names, ", ")
}

// CheckLocation says whether DataForSEO Labs has keyword data for
// location, from its list of locations (free, fetched once a day): nil, a
// 400 listing the countries, or the failure to fetch the list (the engine
// then lets the question go ahead; its answer decides).
func (p *Provider) CheckLocation(ctx context.Context, location string) error {
	if strings.TrimSpace(location) == "" {
		return nil
	}
	_, err := p.resolve(ctx, location)
	return err
}
