package app

import (
	"context"
	"errors"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/atrium-hq/atrium/platform/apperr"
	"github.com/atrium-hq/atrium/platform/events"
	"github.com/atrium-hq/atrium/platform/outbox"
	"github.com/atrium-hq/atrium/platform/pagination"
	"github.com/atrium-hq/atrium/platform/store"
	"github.com/atrium-hq/atrium/platform/value"
)

// Site is a website whose content the collections interface serves.
type Site struct {
	ID        string
	Name      string
	CreatedAt time.Time
	UpdatedAt time.Time
	// AllowedOrigins are the origins (https://example.com, or * for
	// keys that cannot write) whose pages may call the public API with
	// the site's keys: CORS, enforced by the gateway. Never nil.
	AllowedOrigins []string
}

// Store errors, shared with every service (platform/store).
var (
	ErrNotFound  = store.ErrNotFound
	ErrDuplicate = store.ErrDuplicate
)

// Clock returns the current time; store.Clock fixes its precision.
type Clock = store.Clock

// Sites provisions sites.
type Sites struct {
	store SiteStore
	clock Clock
}

// NewSites returns the site use cases.
func NewSites(store SiteStore, clock Clock) *Sites { return &Sites{store: store, clock: clock} }

// Create creates a site.
func (u *Sites) Create(ctx context.Context, name string) (Site, error) {
	name, err := checkName("name", name)
	if err != nil {
		return Site{}, err
	}
	now := u.clock.Now()
	s := Site{ID: store.NewID(), Name: name, CreatedAt: now, UpdatedAt: now, AllowedOrigins: []string{}}
	err = u.store.InTx(ctx, func(tx SiteTx) error {
		if err := tx.InsertSite(ctx, s); err != nil {
			return err
		}
		return outbox.Add(ctx, tx, events.SiteCreated, events.SiteEvent{ID: s.ID, At: now}, now)
	})
	return s, err
}

// List lists sites, newest first: the operator's way back to a site's id.
func (u *Sites) List(ctx context.Context, limit, offset *int32) ([]Site, error) {
	page, err := pagination.Admin.Parse(limit, offset)
	if err != nil {
		return nil, err
	}
	return u.store.Sites(ctx, page)
}

// Get returns a site. An id that is not a UUID names no site.
func (u *Sites) Get(ctx context.Context, id string) (Site, error) {
	return getSite(ctx, u.store.Site, id)
}

// getSite reads a site by an id from a request, with the errors a caller
// reads (the site and content use cases both look sites up).
func getSite(ctx context.Context, read func(context.Context, string) (Site, error), id string) (Site, error) {
	canonical, err := value.PathID("site", id)
	if err != nil {
		return Site{}, err
	}
	s, err := read(ctx, canonical)
	if errors.Is(err, ErrNotFound) {
		return Site{}, value.NotFound("site", id)
	}
	return s, err
}

// MaxOrigins bounds a site's allowed origins: the proto declares the same
// maximum on SetSiteOrigins' list (a test holds the two to one number),
// which the server chain enforces before the service sees the request.
const MaxOrigins = 50

// checkOrigin validates an allowed origin: "*", or a web origin as
// browsers send it in the Origin header (scheme, host and a port unless
// it is the scheme's default; no path, lower case).
func checkOrigin(i int, o string) error {
	if o == "*" {
		return nil
	}
	u, err := url.Parse(o)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil ||
		u.Path != "" || u.RawQuery != "" || u.Fragment != "" || strings.HasSuffix(o, "/") || o != strings.ToLower(o) ||
		(u.Port() == "443" && u.Scheme == "https") || (u.Port() == "80" && u.Scheme == "http") {
		return apperr.Invalid("allowed_origins[%d] must be * or an origin as browsers send it: http or https, a lower-case host and a port only if not the default, no path (https://www.example.com); got %q", i, o)
	}
	return nil
}

// SetOrigins replaces a site's allowed origins (CORS). An id that is not
// a UUID names no site.
func (u *Sites) SetOrigins(ctx context.Context, id string, origins []string) (Site, error) {
	canonical, err := value.PathID("site", id)
	if err != nil {
		return Site{}, err
	}
	if len(origins) > MaxOrigins {
		return Site{}, apperr.Invalid("allowed_origins lists at most %d origins; got %d", MaxOrigins, len(origins))
	}
	clean := []string{}
	for i, o := range origins {
		if err := checkOrigin(i, o); err != nil {
			return Site{}, err
		}
		if !slices.Contains(clean, o) {
			clean = append(clean, o)
		}
	}
	var s Site
	err = u.store.InTx(ctx, func(tx SiteTx) error {
		s, err = tx.Site(ctx, canonical)
		if errors.Is(err, ErrNotFound) {
			return value.NotFound("site", id)
		} else if err != nil {
			return err
		}
		s.AllowedOrigins, s.UpdatedAt = clean, u.clock.Now()
		if err := tx.UpdateSite(ctx, s); err != nil {
			return err
		}
		return outbox.Add(ctx, tx, events.SiteUpdated, events.SiteEvent{ID: s.ID, At: s.UpdatedAt}, s.UpdatedAt)
	})
	return s, err
}
