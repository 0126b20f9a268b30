package memory

import (
	"context"
	"fmt"

	"github.com/atrium-hq/atrium/platform/memdb"
	"github.com/atrium-hq/atrium/services/crm/internal/app"
)

// tx is a transaction over Store. The store's write lock is held for its
// whole life, so its reads see its own writes and nobody else's. Its
// Enqueue is memdb's.
type tx struct {
	*memdb.Tx
	s *Store
}

func (t *tx) Agency(_ context.Context, id string) (app.Agency, error) { return t.s.agency(id) }

func (t *tx) Member(_ context.Context, agencyID, id string) (app.Member, error) {
	return t.s.member(agencyID, id)
}

func (t *tx) Client(_ context.Context, id string) (app.Client, error) { return t.s.client(id) }

func (t *tx) Link(_ context.Context, agencyID, clientID string) (app.ClientLink, error) {
	l, ok := t.s.links[pair{agencyID, clientID}]
	if !ok {
		return app.ClientLink{}, fmt.Errorf("link %s/%s: %w", agencyID, clientID, app.ErrNotFound)
	}
	return l, nil
}

func (t *tx) Key(_ context.Context, id string) (app.APIKey, error) {
	k, ok := t.s.keys[id]
	if !ok {
		return app.APIKey{}, fmt.Errorf("key %s: %w", id, app.ErrNotFound)
	}
	return cloneKey(k), nil
}

func (t *tx) Prospect(_ context.Context, agencyID, id string) (app.Prospect, error) {
	p, ok := t.s.prospects[id]
	if !ok || p.AgencyID != agencyID {
		return app.Prospect{}, fmt.Errorf("prospect %s: %w", id, app.ErrNotFound)
	}
	return p, nil
}

func (t *tx) Deal(_ context.Context, agencyID, id string) (app.Deal, error) {
	d, ok := t.s.deals[id]
	if !ok || d.AgencyID != agencyID {
		return app.Deal{}, fmt.Errorf("deal %s: %w", id, app.ErrNotFound)
	}
	return cloneDeal(d), nil
}

func (t *tx) duplicateID(exists bool, what, id string) error {
	if exists {
		return fmt.Errorf("%s %s: %w", what, id, app.ErrDuplicate)
	}
	return nil
}

func (t *tx) InsertAgency(_ context.Context, a app.Agency) error {
	_, exists := t.s.agencies[a.ID]
	if err := t.duplicateID(exists, "agency", a.ID); err != nil {
		return err
	}
	memdb.Put(t.Tx, t.s.agencies, a.ID, a)
	return nil
}

func (t *tx) InsertMember(_ context.Context, m app.Member) error {
	if _, err := t.s.agency(m.AgencyID); err != nil {
		return err
	}
	_, exists := t.s.members[m.ID]
	if err := t.duplicateID(exists, "member", m.ID); err != nil {
		return err
	}
	email := pair{m.AgencyID, m.Email}
	if _, taken := t.s.memberEmails[email]; taken {
		return fmt.Errorf("member email %s in agency %s: %w", m.Email, m.AgencyID, app.ErrDuplicate)
	}
	memdb.Put(t.Tx, t.s.members, m.ID, cloneMember(m))
	memdb.Put(t.Tx, t.s.memberEmails, email, m.ID)
	return nil
}

func (t *tx) UpdateClient(_ context.Context, c app.Client) error {
	if _, ok := t.s.clients[c.ID]; !ok {
		return fmt.Errorf("client %s: %w", c.ID, app.ErrNotFound)
	}
	memdb.Put(t.Tx, t.s.clients, c.ID, c)
	return nil
}

func (t *tx) InsertClient(_ context.Context, c app.Client) error {
	_, exists := t.s.clients[c.ID]
	if err := t.duplicateID(exists, "client", c.ID); err != nil {
		return err
	}
	memdb.Put(t.Tx, t.s.clients, c.ID, c)
	return nil
}

func (t *tx) InsertLink(_ context.Context, l app.ClientLink) error {
	if _, err := t.s.agency(l.AgencyID); err != nil {
		return err
	}
	if _, err := t.s.client(l.ClientID); err != nil {
		return err
	}
	k := pair{l.AgencyID, l.ClientID}
	_, exists := t.s.links[k]
	if err := t.duplicateID(exists, "link", l.AgencyID+"/"+l.ClientID); err != nil {
		return err
	}
	memdb.Put(t.Tx, t.s.links, k, l)
	return nil
}

func (t *tx) DeleteLink(_ context.Context, agencyID, clientID string) error {
	k := pair{agencyID, clientID}
	if _, ok := t.s.links[k]; !ok {
		return fmt.Errorf("link %s/%s: %w", agencyID, clientID, app.ErrNotFound)
	}
	memdb.Delete(t.Tx, t.s.links, k)
	return nil
}

func (t *tx) InsertKey(_ context.Context, k app.APIKey) error {
	if k.AgencyID != "" {
		if _, err := t.s.agency(k.AgencyID); err != nil {
			return err
		}
	}
	_, exists := t.s.keys[k.ID]
	if err := t.duplicateID(exists, "key", k.ID); err != nil {
		return err
	}
	if _, taken := t.s.keyDigests[string(k.SecretSHA256)]; taken {
		return fmt.Errorf("key digest: %w", app.ErrDuplicate)
	}
	memdb.Put(t.Tx, t.s.keys, k.ID, cloneKey(k))
	memdb.Put(t.Tx, t.s.keyDigests, string(k.SecretSHA256), k.ID)
	return nil
}

func (t *tx) UpdateKey(_ context.Context, k app.APIKey) error {
	old, ok := t.s.keys[k.ID]
	if !ok {
		return fmt.Errorf("key %s: %w", k.ID, app.ErrNotFound)
	}
	// Only the mutable fields change; the digest and bindings are fixed at
	// issue, as in the PostgreSQL adapter.
	old.Name = k.Name
	old.RevokedAt = cloneTime(k.RevokedAt)
	memdb.Put(t.Tx, t.s.keys, k.ID, old)
	return nil
}

func (t *tx) InsertProspect(_ context.Context, p app.Prospect) error {
	if _, err := t.s.agency(p.AgencyID); err != nil {
		return err
	}
	_, exists := t.s.prospects[p.ID]
	if err := t.duplicateID(exists, "prospect", p.ID); err != nil {
		return err
	}
	memdb.Put(t.Tx, t.s.prospects, p.ID, p)
	t.indexInsert(t.s.prospectsByAgency, p.AgencyID, indexEntry{p.UpdatedAt, p.ID})
	return nil
}

func (t *tx) UpdateProspect(_ context.Context, p app.Prospect) error {
	old, ok := t.s.prospects[p.ID]
	if !ok || old.AgencyID != p.AgencyID {
		return fmt.Errorf("prospect %s: %w", p.ID, app.ErrNotFound)
	}
	p.CreatedAt = old.CreatedAt
	memdb.Put(t.Tx, t.s.prospects, p.ID, p)
	t.indexMove(t.s.prospectsByAgency, p.AgencyID, indexEntry{old.UpdatedAt, p.ID}, indexEntry{p.UpdatedAt, p.ID})
	return nil
}

func (t *tx) InsertDeal(_ context.Context, d app.Deal) error {
	if _, err := t.s.member(d.AgencyID, d.OwnerMemberID); err != nil {
		return err
	}
	_, exists := t.s.deals[d.ID]
	if err := t.duplicateID(exists, "deal", d.ID); err != nil {
		return err
	}
	memdb.Put(t.Tx, t.s.deals, d.ID, cloneDeal(d))
	t.indexInsert(t.s.dealsByAgency, d.AgencyID, indexEntry{d.UpdatedAt, d.ID})
	return nil
}

func (t *tx) UpdateDeal(_ context.Context, d app.Deal) error {
	old, ok := t.s.deals[d.ID]
	if !ok || old.AgencyID != d.AgencyID {
		return fmt.Errorf("deal %s: %w", d.ID, app.ErrNotFound)
	}
	if _, err := t.s.member(d.AgencyID, d.OwnerMemberID); err != nil {
		return err
	}
	d.CreatedAt = old.CreatedAt
	memdb.Put(t.Tx, t.s.deals, d.ID, cloneDeal(d))
	t.indexMove(t.s.dealsByAgency, d.AgencyID, indexEntry{old.UpdatedAt, d.ID}, indexEntry{d.UpdatedAt, d.ID})
	return nil
}
