package atrium

import (
	"context"
	"iter"
	"net/url"
	"time"
)

// Admin calls Atrium's admin API (its own listener, the admin token) to
// provision tenants: agencies and their members, clients and their links,
// sites and their collections, API keys, credits. Its retries are the
// client's.
type Admin struct{ t *transport }

// NewAdmin returns a client of the admin API at baseURL
// (http://127.0.0.1:8081) with the admin token.
func NewAdmin(baseURL, token string, opts ...Option) *Admin {
	return &Admin{t: newTransport(baseURL, token, opts)}
}

// Agency is an agency.
type Agency struct {
	ID        string    `json:"id"`
	Name      string    `json:"name"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// Member is a member of an agency.
type Member struct {
	ID        string    `json:"id"`
	AgencyID  string    `json:"agency_id"`
	Name      string    `json:"name"`
	Email     string    `json:"email"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
	// Role is owner, manager, editor, viewer or client; nil for a member
	// who does not sign in (a deals' owner).
	Role *string `json:"role"`
	// SiteIDs are the sites an editor may edit (none: all the agency's).
	SiteIDs []string `json:"site_ids"`
	// ClientID is a client member's client.
	ClientID *string `json:"client_id"`
	// Status is none (no role), invited or active.
	Status string `json:"status"`
}

// Invitation lets an invited member create their sign-in, once, before
// it expires. Its Token and URL are in the answer that created it only.
type Invitation struct {
	ID        string    `json:"id"`
	MemberID  string    `json:"member_id"`
	Email     string    `json:"email"`
	ExpiresAt time.Time `json:"expires_at"`
	CreatedAt time.Time `json:"created_at"`
	Token     string    `json:"token"`
	URL       string    `json:"url"`
}

// NewMember is a member to add to an agency; a Role makes them someone who
// signs in, and the answer carries their invitation.
type NewMember struct {
	Name  string `json:"name"`
	Email string `json:"email"`
	// Role is owner, manager, editor, viewer or client; empty for a
	// member who does not sign in.
	Role string `json:"role,omitempty"`
	// SiteIDs limits an editor to these sites of the agency.
	SiteIDs []string `json:"site_ids,omitempty"`
	// ClientID is required for the client role.
	ClientID string `json:"client_id,omitempty"`
}

// ClientAccount is an agency's client (a business).
type ClientAccount struct {
	ID         string    `json:"id"`
	Name       string    `json:"name"`
	Domain     string    `json:"domain"`
	Status     string    `json:"status"`
	AutoDeploy bool      `json:"auto_deploy"`
	CreatedAt  time.Time `json:"created_at"`
	UpdatedAt  time.Time `json:"updated_at"`
}

// Site is a site of the collections interface.
type Site struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	// AgencyID is the agency that owns the site, nil for an unowned site;
	// ClientID the agency's client it is for, if any.
	AgencyID  *string   `json:"agency_id"`
	ClientID  *string   `json:"client_id"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// APIKey is an API key (its secret only in CreateKey's answer).
type APIKey struct {
	ID        string     `json:"id"`
	Name      string     `json:"name"`
	Prefix    string     `json:"prefix"`
	Scopes    []string   `json:"scopes"`
	SiteID    *string    `json:"site_id"`
	AgencyID  *string    `json:"agency_id"`
	ExpiresAt *time.Time `json:"expires_at"`
	RevokedAt *time.Time `json:"revoked_at"`
	CreatedAt time.Time  `json:"created_at"`
	Secret    string     `json:"secret,omitempty"`
}

// NewKey issues a key.
type NewKey struct {
	Name     string     `json:"name"`
	Scopes   []string   `json:"scopes"`
	SiteID   string     `json:"site_id,omitempty"`
	AgencyID string     `json:"agency_id,omitempty"`
	Expires  *time.Time `json:"expires_at,omitempty"`
}

// adminPage is the largest page of the admin lists.
const adminPage = 200

func adminList[T any](ctx context.Context, t *transport, p, key string, q url.Values, page *Page) ([]T, error) {
	v := page.query()
	for k, vs := range q {
		v[k] = vs
	}
	var out map[string][]T
	_, err := t.do(ctx, request{method: "GET", path: p, query: v, idempotent: true}, &out)
	return out[key], err
}

func adminAll[T any](ctx context.Context, t *transport, p, key string, q url.Values) iter.Seq2[T, error] {
	return offsetPages(ctx, adminPage, func(ctx context.Context, limit, offset int) ([]T, error) {
		return adminList[T](ctx, t, p, key, q, &Page{Limit: limit, Offset: offset})
	})
}

func adminCreate[T any](ctx context.Context, t *transport, p, key string, body any) (*T, error) {
	var out map[string]*T
	if _, err := t.do(ctx, request{method: "POST", path: p, body: body}, &out); err != nil {
		return nil, err
	}
	return out[key], nil
}

// Agencies walks every agency, newest first.
func (a *Admin) Agencies(ctx context.Context) iter.Seq2[Agency, error] {
	return adminAll[Agency](ctx, a.t, "/admin/v1/agencies", "agencies", nil)
}

// CreateAgency creates an agency.
func (a *Admin) CreateAgency(ctx context.Context, name string) (*Agency, error) {
	return adminCreate[Agency](ctx, a.t, "/admin/v1/agencies", "agency", map[string]string{"name": name})
}

// CreateMember adds a member to an agency.
func (a *Admin) CreateMember(ctx context.Context, agencyID, name, email string) (*Member, error) {
	return adminCreate[Member](ctx, a.t, "/admin/v1/agencies"+path(agencyID, "members"), "member", map[string]string{"name": name, "email": email})
}

// InviteMember adds a member with a role to an agency (an agency's first
// owner is invited this way) and answers the invitation to pass on: its
// token is shown only now.
func (a *Admin) InviteMember(ctx context.Context, agencyID string, m NewMember) (*Member, *Invitation, error) {
	var out struct {
		Member     *Member     `json:"member"`
		Invitation *Invitation `json:"invitation"`
	}
	if _, err := a.t.do(ctx, request{method: "POST", path: "/admin/v1/agencies" + path(agencyID, "members"), body: m}, &out); err != nil {
		return nil, nil, err
	}
	return out.Member, out.Invitation, nil
}

// Clients walks the clients, newest first: every client, or those linked
// to agencyID when it is set.
func (a *Admin) Clients(ctx context.Context, agencyID string) iter.Seq2[ClientAccount, error] {
	q := url.Values{}
	if agencyID != "" {
		q.Set("agency_id", agencyID)
	}
	return adminAll[ClientAccount](ctx, a.t, "/admin/v1/clients", "clients", q)
}

// CreateClient creates a client.
func (a *Admin) CreateClient(ctx context.Context, name, domain string) (*ClientAccount, error) {
	return adminCreate[ClientAccount](ctx, a.t, "/admin/v1/clients", "client", map[string]string{"name": name, "domain": domain})
}

// LinkClient gives an agency access to a client (linking twice is
// harmless).
func (a *Admin) LinkClient(ctx context.Context, agencyID, clientID string) error {
	_, err := a.t.do(ctx, request{method: "PUT", path: "/admin/v1/agencies" + path(agencyID, "clients", clientID), idempotent: true}, nil)
	return err
}

// UnlinkClient removes an agency's access to a client.
func (a *Admin) UnlinkClient(ctx context.Context, agencyID, clientID string) error {
	_, err := a.t.do(ctx, request{method: "DELETE", path: "/admin/v1/agencies" + path(agencyID, "clients", clientID), idempotent: true}, nil)
	return goneOnRetry(err)
}

// Sites walks every site, newest first.
func (a *Admin) Sites(ctx context.Context) iter.Seq2[Site, error] {
	return adminAll[Site](ctx, a.t, "/admin/v1/sites", "sites", nil)
}

// NewSite is a site to create: its name and, optionally, the agency that
// owns it and that agency's client it is for.
type NewSite struct {
	Name     string `json:"name"`
	AgencyID string `json:"agency_id,omitempty"`
	ClientID string `json:"client_id,omitempty"`
}

// CreateSite creates a site.
func (a *Admin) CreateSite(ctx context.Context, s NewSite) (*Site, error) {
	return adminCreate[Site](ctx, a.t, "/admin/v1/sites", "site", s)
}

// SiteChange changes a site: a nil field is kept. An empty AgencyID
// leaves the site unowned (and removes its client); an empty ClientID
// removes the client.
type SiteChange struct {
	Name     *string `json:"name,omitempty"`
	AgencyID *string `json:"agency_id,omitempty"`
	ClientID *string `json:"client_id,omitempty"`
}

// UpdateSite changes a site's name, owning agency or client. Sending it
// twice changes nothing more, so it is retried like a read.
func (a *Admin) UpdateSite(ctx context.Context, siteID string, c SiteChange) (*Site, error) {
	var out struct {
		Site Site `json:"site"`
	}
	if _, err := a.t.do(ctx, request{method: "PATCH", path: "/admin/v1/sites" + path(siteID), body: c, idempotent: true}, &out); err != nil {
		return nil, err
	}
	return &out.Site, nil
}

// NewCollection defines a collection of a site.
type NewCollection struct {
	Name     string  `json:"name"`
	Slug     string  `json:"slug"`
	Fields   []Field `json:"fields"`
	IsSystem bool    `json:"is_system,omitempty"`
	// SearchLanguage is the text search configuration q searches the
	// items with (docs/collections.md); empty is simple.
	SearchLanguage string `json:"search_language,omitempty"`
}

// CreateCollection defines a collection of a site.
func (a *Admin) CreateCollection(ctx context.Context, siteID string, c NewCollection) (*Collection, error) {
	return adminCreate[Collection](ctx, a.t, "/admin/v1/sites"+path(siteID, "collections"), "collection", c)
}

// SiteCollections returns every collection of a site, system ones
// included.
func (a *Admin) SiteCollections(ctx context.Context, siteID string) ([]Collection, error) {
	var out struct {
		Collections []Collection `json:"collections"`
	}
	_, err := a.t.do(ctx, request{method: "GET", path: "/admin/v1/sites" + path(siteID, "collections"), idempotent: true}, &out)
	return out.Collections, err
}

// CollectionChange changes a collection: what is left empty is kept.
// Added fields must be optional; a removed field's values are removed
// from every item; an updated field (matched by key) keeps its type.
type CollectionChange struct {
	Name           *string  `json:"name,omitempty"`
	SearchLanguage *string  `json:"search_language,omitempty"`
	AddFields      []Field  `json:"add_fields,omitempty"`
	RemoveFields   []string `json:"remove_fields,omitempty"`
	UpdateFields   []Field  `json:"update_fields,omitempty"`
}

// UpdateCollection changes a collection of a site. It is not sent again
// once it may have reached the service (adding a field twice fails).
func (a *Admin) UpdateCollection(ctx context.Context, siteID, slug string, c CollectionChange) (*Collection, error) {
	var out struct {
		Collection Collection `json:"collection"`
	}
	if _, err := a.t.do(ctx, request{method: "PATCH", path: "/admin/v1/sites" + path(siteID, "collections", slug), body: c}, &out); err != nil {
		return nil, err
	}
	return &out.Collection, nil
}

// Keys walks the API keys, newest first (never their secrets).
func (a *Admin) Keys(ctx context.Context) iter.Seq2[APIKey, error] {
	return adminAll[APIKey](ctx, a.t, "/admin/v1/keys", "keys", nil)
}

// CreateKey issues an API key; the answer holds its secret, shown only now.
func (a *Admin) CreateKey(ctx context.Context, k NewKey) (*APIKey, error) {
	return adminCreate[APIKey](ctx, a.t, "/admin/v1/keys", "key", k)
}

// RevokeKey revokes a key (revoking twice is harmless).
func (a *Admin) RevokeKey(ctx context.Context, id string) (*APIKey, error) {
	var out struct {
		Key APIKey `json:"key"`
	}
	if _, err := a.t.do(ctx, request{method: "DELETE", path: "/admin/v1/keys" + path(id), idempotent: true}, &out); err != nil {
		return nil, err
	}
	return &out.Key, nil
}

// Credits returns an agency's balance.
func (a *Admin) Credits(ctx context.Context, agencyID string) (Credits, error) {
	var out struct {
		Balance Credits `json:"balance"`
	}
	_, err := a.t.do(ctx, request{method: "GET", path: "/admin/v1/agencies" + path(agencyID, "credits"), idempotent: true}, &out)
	return out.Balance, err
}

// AddCredits adds (or, negative, removes) credits and returns the balance.
// Adding is not idempotent: it is sent again only when it cannot have
// reached the data.
func (a *Admin) AddCredits(ctx context.Context, agencyID string, add Credits) (Credits, error) {
	var out struct {
		Balance Credits `json:"balance"`
	}
	_, err := a.t.do(ctx, request{method: "POST", path: "/admin/v1/agencies" + path(agencyID, "credits"), body: add}, &out)
	return out.Balance, err
}
