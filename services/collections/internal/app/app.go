package app

import (
	"context"
	"errors"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/atrium-hq/atrium/platform/apperr"
	"github.com/atrium-hq/atrium/platform/audit"
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
	// AgencyID is the agency that owns the site, "" for an unowned site
	// (every site made before sites had owners): agencies reach only the
	// sites they own, and an unowned site only the keys bound to it.
	AgencyID string
	// ClientID is the owning agency's client the site is for, "" for
	// none; never set without AgencyID.
	ClientID string
	// DefaultLocale is the locale of the items' data, and Locales every
	// locale the site's content may be written in, the default first
	// (locales.go). "" and nil for a site that never set them, which
	// Localization reads as DefaultLocale alone.
	DefaultLocale string
	Locales       []string
}

// SiteFilter narrows a list of sites; empty fields match every site.
type SiteFilter struct {
	AgencyID string
}

// Agencies answers what the site use cases ask about an owner. Agencies
// and their clients belong to the CRM; an error means the answer is
// unknown (the CRM is unreachable).
type Agencies interface {
	// AgencyExists reports whether the agency exists.
	AgencyExists(ctx context.Context, agencyID string) (bool, error)
	// ClientLinked reports whether the client is linked to the agency; an
	// unknown client is not.
	ClientLinked(ctx context.Context, agencyID, clientID string) (bool, error)
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
	store    SiteStore
	agencies Agencies
	clock    Clock
}

// NewSites returns the site use cases.
func NewSites(store SiteStore, agencies Agencies, clock Clock) *Sites {
	return &Sites{store: store, agencies: agencies, clock: clock}
}

// NewSite is the input of Create.
type NewSite struct {
	Name string
	// AgencyID and ClientID name the owner, both optional; a client
	// needs an agency it is linked to.
	AgencyID, ClientID string
}

// Create creates a site.
func (u *Sites) Create(ctx context.Context, in NewSite) (Site, error) {
	name, err := checkName("name", in.Name)
	if err != nil {
		return Site{}, err
	}
	agencyID, clientID, err := u.checkOwner(ctx, in.AgencyID, in.ClientID, false)
	if err != nil {
		return Site{}, err
	}
	now := u.clock.Now()
	s := Site{ID: store.NewID(), Name: name, CreatedAt: now, UpdatedAt: now, AllowedOrigins: []string{}, AgencyID: agencyID, ClientID: clientID,
		DefaultLocale: DefaultLocale, Locales: []string{DefaultLocale}}
	err = u.store.InTx(ctx, func(tx SiteTx) error {
		if err := tx.InsertSite(ctx, s); err != nil {
			return err
		}
		if err := outbox.Add(ctx, tx, events.SiteCreated, siteEvent(s), now); err != nil {
			return err
		}
		fields := []string{"name"}
		if agencyID != "" {
			fields = append(fields, "agency_id")
		}
		if clientID != "" {
			fields = append(fields, "client_id")
		}
		return recordSite(ctx, tx, s, "site.created", fields)
	})
	return s, err
}

func siteEvent(s Site) events.SiteEvent {
	return events.SiteEvent{ID: s.ID, AgencyID: s.AgencyID, ClientID: s.ClientID, At: s.UpdatedAt}
}

// checkOwner validates an owner from a request and returns its canonical
// ids: the agency must exist and the client be linked to it. The CRM is
// asked outside any transaction (a call over the network must not hold
// one open); an agency deleted or a client unlinked meanwhile leaves the
// site with an owner the CRM no longer knows, which reaches nothing.
// keptClient says the client is the site's current one, which the request
// did not name, so that the message says how to remove it.
func (u *Sites) checkOwner(ctx context.Context, agencyID, clientID string, keptClient bool) (string, string, error) {
	if agencyID == "" {
		if clientID != "" {
			return "", "", apperr.Invalid("client_id needs agency_id: a site is for a client of the agency that owns it; give agency_id too")
		}
		return "", "", nil
	}
	agencyID, err := value.BodyID("agency_id", agencyID)
	if err != nil {
		return "", "", err
	}
	if clientID != "" {
		if clientID, err = value.BodyID("client_id", clientID); err != nil {
			return "", "", err
		}
	}
	ok, err := u.agencies.AgencyExists(ctx, agencyID)
	if err != nil {
		return "", "", apperr.Unavailable(err, "cannot check agency_id now: the CRM service is unavailable; retry later")
	}
	if !ok {
		return "", "", apperr.Invalid("agency_id %q does not name an existing agency", agencyID)
	}
	if clientID == "" {
		return agencyID, "", nil
	}
	ok, err = u.agencies.ClientLinked(ctx, agencyID, clientID)
	if err != nil {
		return "", "", apperr.Unavailable(err, "cannot check client_id now: the CRM service is unavailable; retry later")
	}
	if !ok && keptClient {
		return "", "", apperr.Invalid("the site's client_id %q is not linked to agency %q; give client_id with agency_id (\"\" to remove the client)", clientID, agencyID)
	}
	if !ok {
		return "", "", apperr.Invalid("client_id %q is not a client linked to agency %q; link it to the agency first, or give another client_id", clientID, agencyID)
	}
	return agencyID, clientID, nil
}

// List lists sites, newest first: the operator's way back to a site's id.
// An agency_id filter that is not a UUID is a bad request.
func (u *Sites) List(ctx context.Context, filter SiteFilter, limit, offset *int32) ([]Site, error) {
	page, err := pagination.Admin.Parse(limit, offset)
	if err != nil {
		return nil, err
	}
	if filter.AgencyID != "" {
		if filter.AgencyID, err = value.BodyID("agency_id", filter.AgencyID); err != nil {
			return nil, err
		}
	}
	return u.store.Sites(ctx, filter, page)
}

// OfAgency lists the sites agencyID owns, by name: an agency's own view
// of its sites (the caller's agency, never a request's). An id that is not
// a UUID names no agency, so no site.
func (u *Sites) OfAgency(ctx context.Context, agencyID string) ([]Site, error) {
	id, ok := value.ParseID(agencyID)
	if !ok {
		return []Site{}, nil
	}
	return u.store.AgencySites(ctx, id)
}

// SiteChange is the input of Update: nil fields are kept.
type SiteChange struct {
	Name *string
	// AgencyID "" leaves the site unowned, and removes its client.
	AgencyID *string
	// ClientID "" removes the client.
	ClientID *string
}

// Update renames a site or changes its owner. The owner it ends with is
// checked whole: a kept client must be linked to a new agency.
func (u *Sites) Update(ctx context.Context, id string, ch SiteChange) (Site, error) {
	canonical, err := value.PathID("site", id)
	if err != nil {
		return Site{}, err
	}
	var name string
	if ch.Name != nil {
		if name, err = checkName("name", *ch.Name); err != nil {
			return Site{}, err
		}
	}
	// The current owner is read first, for the fields the change keeps;
	// the transaction below writes only if it is still the one checked.
	cur, err := getSite(ctx, u.store.Site, id)
	if err != nil {
		return Site{}, err
	}
	agencyID, clientID := cur.AgencyID, cur.ClientID
	if ch.AgencyID != nil {
		if agencyID = *ch.AgencyID; agencyID == "" {
			clientID = ""
		}
	}
	if ch.ClientID != nil {
		clientID = *ch.ClientID
	}
	ownerChanged := agencyID != cur.AgencyID || clientID != cur.ClientID
	if ownerChanged {
		// A client the change keeps must be linked to a new agency too.
		kept := ch.ClientID == nil && clientID != ""
		if agencyID, clientID, err = u.checkOwner(ctx, agencyID, clientID, kept); err != nil {
			return Site{}, err
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
		if ownerChanged && (s.AgencyID != cur.AgencyID || s.ClientID != cur.ClientID) {
			return apperr.Conflict("site %q changed owner during this request; retry", id)
		}
		if ch.Name != nil {
			s.Name = name
		}
		s.AgencyID, s.ClientID, s.UpdatedAt = agencyID, clientID, u.clock.Now()
		if err := tx.UpdateSite(ctx, s); err != nil {
			return err
		}
		if err := outbox.Add(ctx, tx, events.SiteUpdated, siteEvent(s), s.UpdatedAt); err != nil {
			return err
		}
		var fields []string
		if ch.Name != nil {
			fields = append(fields, "name")
		}
		if ch.AgencyID != nil {
			fields = append(fields, "agency_id")
		}
		if ch.ClientID != nil || (ch.AgencyID != nil && *ch.AgencyID == "") {
			fields = append(fields, "client_id")
		}
		return recordSite(ctx, tx, s, "site.updated", fields)
	})
	return s, err
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
		if err := outbox.Add(ctx, tx, events.SiteUpdated, siteEvent(s), s.UpdatedAt); err != nil {
			return err
		}
		return recordSite(ctx, tx, s, "site.updated", []string{"allowed_origins"})
	})
	return s, err
}

// recordSite adds the audit record of a site write to tx, naming the
// site and its owner (operators are bound to neither).
func recordSite(ctx context.Context, tx outbox.Enqueuer, s Site, action string, fields []string) error {
	return record(ctx, tx, audit.Change{Action: action, ResourceType: "site", ResourceID: s.ID, Fields: fields, SiteID: s.ID, AgencyID: s.AgencyID}, s.ID, s.AgencyID, s.UpdatedAt)
}
