package memory

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/atrium-hq/atrium/platform/memdb"
	"github.com/atrium-hq/atrium/platform/pagination"
	"github.com/atrium-hq/atrium/services/crm/internal/app"
)

type pair struct{ a, b string }

// Store is the in-memory CRM store.
type Store struct {
	db           *memdb.DB
	agencies     map[string]app.Agency
	members      map[string]app.Member
	memberEmails map[pair]string // (agency id, email) -> member id
	clients      map[string]app.Client
	links        map[pair]app.ClientLink // (agency id, client id)
	keys         map[string]app.APIKey
	keyDigests   map[string]string // string(digest) -> key id
	users        map[string]app.User
	userEmails   map[string]string // email -> user id
	invitations  map[string]app.Invitation
	invDigests   map[string]string // string(digest) -> invitation id
	sessions     map[string]app.Session
	sesDigests   map[string]string // string(digest) -> session id
	resets       map[string]app.PasswordReset
	resetDigests map[string]string // string(digest) -> reset id
	prospects    map[string]app.Prospect
	deals        map[string]app.Deal
	// Per-agency indexes in list order, so a list touches only one page of
	// one tenant's rows.
	prospectsByAgency map[string]*recentIndex
	dealsByAgency     map[string]*recentIndex
}

// New returns an empty store on db, which holds its lock and outbox.
func New(db *memdb.DB) *Store {
	return &Store{
		db:                db,
		agencies:          map[string]app.Agency{},
		members:           map[string]app.Member{},
		memberEmails:      map[pair]string{},
		clients:           map[string]app.Client{},
		links:             map[pair]app.ClientLink{},
		keys:              map[string]app.APIKey{},
		keyDigests:        map[string]string{},
		users:             map[string]app.User{},
		userEmails:        map[string]string{},
		invitations:       map[string]app.Invitation{},
		invDigests:        map[string]string{},
		sessions:          map[string]app.Session{},
		sesDigests:        map[string]string{},
		resets:            map[string]app.PasswordReset{},
		resetDigests:      map[string]string{},
		prospects:         map[string]app.Prospect{},
		deals:             map[string]app.Deal{},
		prospectsByAgency: map[string]*recentIndex{},
		dealsByAgency:     map[string]*recentIndex{},
	}
}

// InTx implements app.Store.
func (s *Store) InTx(ctx context.Context, fn func(app.Tx) error) error {
	return s.db.InTx(ctx, func(t *memdb.Tx) error { return fn(&tx{Tx: t, s: s}) })
}

// Agency implements app.DirectoryReader.
func (s *Store) Agency(_ context.Context, id string) (app.Agency, error) {
	s.db.RLock()
	defer s.db.RUnlock()
	return s.agency(id)
}

func (s *Store) agency(id string) (app.Agency, error) {
	a, ok := s.agencies[id]
	if !ok {
		return app.Agency{}, fmt.Errorf("agency %s: %w", id, app.ErrNotFound)
	}
	return a, nil
}

func (s *Store) member(agencyID, id string) (app.Member, error) {
	m, ok := s.members[id]
	if !ok || m.AgencyID != agencyID {
		return app.Member{}, fmt.Errorf("member %s: %w", id, app.ErrNotFound)
	}
	return cloneMember(m), nil
}

// Client implements app.DirectoryReader.
func (s *Store) Client(_ context.Context, id string) (app.Client, error) {
	s.db.RLock()
	defer s.db.RUnlock()
	return s.client(id)
}

// Agencies implements app.DirectoryReader.
func (s *Store) Agencies(_ context.Context, page pagination.Page) ([]app.Agency, error) {
	s.db.RLock()
	rows := slices.Collect(maps.Values(s.agencies))
	s.db.RUnlock()
	slices.SortFunc(rows, func(a, b app.Agency) int { return recentFirst(a.CreatedAt, b.CreatedAt, a.ID, b.ID) })
	return slices.Clone(window(rows, page)), nil
}

// Clients implements app.DirectoryReader.
func (s *Store) Clients(_ context.Context, f app.ClientFilter, page pagination.Page) ([]app.Client, error) {
	s.db.RLock()
	var rows []app.Client
	for _, c := range s.clients {
		if _, linked := s.links[pair{f.AgencyID, c.ID}]; f.AgencyID == "" || linked {
			rows = append(rows, c)
		}
	}
	s.db.RUnlock()
	slices.SortFunc(rows, func(a, b app.Client) int { return recentFirst(a.CreatedAt, b.CreatedAt, a.ID, b.ID) })
	return slices.Clone(window(rows, page)), nil
}

// Linked implements app.DirectoryReader.
func (s *Store) Linked(_ context.Context, agencyID, clientID string) (bool, error) {
	s.db.RLock()
	defer s.db.RUnlock()
	_, ok := s.links[pair{agencyID, clientID}]
	return ok, nil
}

// ClientAgencies implements app.DirectoryReader.
func (s *Store) ClientAgencies(_ context.Context, clientID string) ([]string, error) {
	s.db.RLock()
	defer s.db.RUnlock()
	out := []string{}
	for k := range s.links {
		if k.b == clientID {
			out = append(out, k.a)
		}
	}
	slices.Sort(out)
	return out, nil
}

// LinkedClient implements app.DirectoryReader.
func (s *Store) LinkedClient(_ context.Context, agencyID, clientID string) (app.Client, error) {
	s.db.RLock()
	defer s.db.RUnlock()
	if _, ok := s.links[pair{agencyID, clientID}]; !ok {
		return app.Client{}, app.ErrNotFound
	}
	return s.client(clientID)
}

// LinkedClients implements app.DirectoryReader.
func (s *Store) LinkedClients(_ context.Context, agencyID string) ([]app.Client, error) {
	s.db.RLock()
	defer s.db.RUnlock()
	out := []app.Client{}
	for k := range s.links {
		if k.a == agencyID {
			out = append(out, s.clients[k.b])
		}
	}
	slices.SortFunc(out, func(x, y app.Client) int { return strings.Compare(x.ID, y.ID) })
	return out, nil
}

func (s *Store) client(id string) (app.Client, error) {
	c, ok := s.clients[id]
	if !ok {
		return app.Client{}, fmt.Errorf("client %s: %w", id, app.ErrNotFound)
	}
	return c, nil
}

// recentFirst orders by updated_at (or created_at) descending, then id
// descending, the order of the PostgreSQL adapter's indexes.
func recentFirst(at1, at2 time.Time, id1, id2 string) int {
	return compareRecent(indexEntry{at1, id1}, indexEntry{at2, id2})
}

func window[T any](rows []T, page pagination.Page) []T {
	start := min(int(page.Offset), len(rows))
	end := min(start+int(page.Limit), len(rows))
	return rows[start:end]
}

// Prospects implements app.PipelineReader.
func (s *Store) Prospects(_ context.Context, agencyID string, page pagination.Page) ([]app.Prospect, error) {
	s.db.RLock()
	defer s.db.RUnlock()
	var rows []indexEntry
	if x := s.prospectsByAgency[agencyID]; x != nil {
		rows = window(x.rows, page)
	}
	out := make([]app.Prospect, 0, len(rows))
	for _, e := range rows {
		out = append(out, s.prospects[e.id])
	}
	return out, nil
}

// Deals implements app.PipelineReader.
func (s *Store) Deals(_ context.Context, agencyID string, page pagination.Page) ([]app.Deal, error) {
	s.db.RLock()
	defer s.db.RUnlock()
	var rows []indexEntry
	if x := s.dealsByAgency[agencyID]; x != nil {
		rows = window(x.rows, page)
	}
	out := make([]app.Deal, 0, len(rows))
	for _, e := range rows {
		out = append(out, cloneDeal(s.deals[e.id]))
	}
	return out, nil
}

// KeyBySecretSHA256 implements app.KeyReader.
func (s *Store) KeyBySecretSHA256(_ context.Context, digest []byte) (app.APIKey, error) {
	s.db.RLock()
	defer s.db.RUnlock()
	id, ok := s.keyDigests[string(digest)]
	if !ok {
		return app.APIKey{}, fmt.Errorf("key: %w", app.ErrNotFound)
	}
	return cloneKey(s.keys[id]), nil
}

// Keys implements app.KeyReader.
func (s *Store) Keys(_ context.Context, f app.KeyFilter, page pagination.Page) ([]app.APIKey, error) {
	s.db.RLock()
	var rows []app.APIKey
	for _, k := range s.keys {
		if (f.AgencyID == "" || k.AgencyID == f.AgencyID) && (f.SiteID == "" || k.SiteID == f.SiteID) {
			rows = append(rows, cloneKey(k))
		}
	}
	s.db.RUnlock()
	slices.SortFunc(rows, func(a, b app.APIKey) int { return recentFirst(a.CreatedAt, b.CreatedAt, a.ID, b.ID) })
	return slices.Clone(window(rows, page)), nil
}

func cloneTime(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	v := *t
	return &v
}

func cloneKey(k app.APIKey) app.APIKey {
	k.SecretSHA256 = bytes.Clone(k.SecretSHA256)
	k.Scopes = slices.Clone(k.Scopes)
	k.ExpiresAt = cloneTime(k.ExpiresAt)
	k.RevokedAt = cloneTime(k.RevokedAt)
	return k
}

func cloneDeal(d app.Deal) app.Deal {
	d.ClosedAt = cloneTime(d.ClosedAt)
	return d
}
