// Package memory is the actions store kept in process memory, the embedded
// default, held to the same contract suite as PostgreSQL; it also keeps
// the SEO cache's answers (seocache.Store) for as long as the process runs. The lock, undo
// log and outbox are platform/memdb's: a reservation and a run insert in
// one transaction are one critical section, which is what keeps a balance
// from going below zero under concurrent actions.
package memory

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/atrium-hq/atrium/platform/apperr"
	"github.com/atrium-hq/atrium/platform/memdb"
	"github.com/atrium-hq/atrium/platform/outbox"
	"github.com/atrium-hq/atrium/services/actions/internal/app"
	"github.com/atrium-hq/atrium/services/actions/internal/app/action"
	"github.com/atrium-hq/atrium/services/actions/internal/app/seocache"
)

type runKey struct{ agency, key string }

// Store is the in-memory actions store.
type Store struct {
	db       *memdb.DB
	balances map[string]app.Balance
	runs     map[string]app.Run
	keys     map[runKey]string // idempotency key -> run id
	// The queue's indexes: the queued runs' ids, and each agency's count
	// of queued and of pending (running) runs.
	queued            map[string]struct{}
	queuedBy, running map[string]int
	// served is when a worker last claimed each agency's run.
	served map[string]time.Time
	// schedules by id.
	schedules map[string]app.Schedule

	// The SEO cache is no part of any transaction: its own lock.
	seoMu sync.Mutex
	seo   map[string]seocache.Answer
	// The agencies' report branding, likewise.
	brandMu  sync.Mutex
	branding map[string]action.Branding
	// The report share links, by id, likewise.
	shareMu sync.Mutex
	shares  map[string]action.Share
}

// New returns an empty store on db.
func New(db *memdb.DB) *Store {
	return &Store{db: db, balances: map[string]app.Balance{}, runs: map[string]app.Run{}, keys: map[runKey]string{},
		queued: map[string]struct{}{}, queuedBy: map[string]int{}, running: map[string]int{}, served: map[string]time.Time{},
		schedules: map[string]app.Schedule{}, seo: map[string]seocache.Answer{}, branding: map[string]action.Branding{}, shares: map[string]action.Share{}}
}

// Branding implements app.BrandingStore.
func (s *Store) Branding(_ context.Context, agencyID string) (action.Branding, bool, error) {
	s.brandMu.Lock()
	defer s.brandMu.Unlock()
	b, ok := s.branding[agencyID]
	return b, ok, nil
}

// CreateShare implements app.ShareStore.
func (s *Store) CreateShare(ctx context.Context, sh action.Share, events ...outbox.Event) error {
	return s.withEvents(ctx, events, func() {
		s.shareMu.Lock()
		defer s.shareMu.Unlock()
		sh.TokenHash = slices.Clone(sh.TokenHash)
		s.shares[sh.ID] = sh
	})
}

// withEvents enqueues events in a transaction whose last step is write:
// the shares and the branding live beside the transactional maps, and a
// write that cannot fail, made once the events are in, commits with them.
func (s *Store) withEvents(ctx context.Context, events []outbox.Event, write func()) error {
	if len(events) == 0 {
		write()
		return nil
	}
	return s.InTx(ctx, func(tx app.Tx) error {
		for _, e := range events {
			if err := tx.Enqueue(ctx, e); err != nil {
				return err
			}
		}
		write()
		return nil
	})
}

// ListShares implements app.ShareStore.
func (s *Store) ListShares(_ context.Context, agencyID string, f app.ShareFilter) ([]action.Share, error) {
	s.shareMu.Lock()
	defer s.shareMu.Unlock()
	var out []action.Share
	for _, sh := range s.shares {
		if sh.AgencyID != agencyID || (f.ClientID != "" && sh.ClientID != f.ClientID) || (f.RunID != "" && sh.RunID != f.RunID) ||
			(f.Before != "" && sh.ID >= f.Before) {
			continue
		}
		out = append(out, sh)
	}
	slices.SortFunc(out, func(a, b action.Share) int { return strings.Compare(b.ID, a.ID) })
	if len(out) > f.Limit {
		out = out[:f.Limit]
	}
	return out, nil
}

// RevokeShare implements app.ShareStore.
func (s *Store) RevokeShare(ctx context.Context, agencyID, id string, at time.Time, events ...outbox.Event) (action.Share, error) {
	s.shareMu.Lock()
	sh, ok := s.shares[id]
	s.shareMu.Unlock()
	if !ok || sh.AgencyID != agencyID {
		return action.Share{}, apperr.NotFound("no report share %s", id)
	}
	// A link is never deleted, so the one read above is still there.
	err := s.withEvents(ctx, events, func() {
		s.shareMu.Lock()
		defer s.shareMu.Unlock()
		sh = s.shares[id]
		if sh.RevokedAt.IsZero() {
			sh.RevokedAt = at
			s.shares[id] = sh
		}
	})
	return sh, err
}

// ShareByToken implements app.ShareStore.
func (s *Store) ShareByToken(_ context.Context, hash []byte) (action.Share, bool, error) {
	s.shareMu.Lock()
	defer s.shareMu.Unlock()
	for _, sh := range s.shares {
		if bytes.Equal(sh.TokenHash, hash) {
			return sh, true, nil
		}
	}
	return action.Share{}, false, nil
}

// PutBranding implements app.BrandingStore.
func (s *Store) PutBranding(ctx context.Context, agencyID string, b action.Branding, events ...outbox.Event) error {
	return s.withEvents(ctx, events, func() {
		s.brandMu.Lock()
		defer s.brandMu.Unlock()
		s.branding[agencyID] = b
	})
}

var (
	_ app.Store         = (*Store)(nil)
	_ seocache.Store    = (*Store)(nil)
	_ app.BrandingStore = (*Store)(nil)
	_ app.ShareStore    = (*Store)(nil)
)

// purgeAtOnce is how many expired SEO answers a write removes.
const purgeAtOnce = 16

// CachedAnswer implements seocache.Store.
func (s *Store) CachedAnswer(_ context.Context, key string, now time.Time) (seocache.Answer, bool, error) {
	s.seoMu.Lock()
	defer s.seoMu.Unlock()
	a, ok := s.seo[key]
	if !ok || !a.ExpiresAt.After(now) {
		return seocache.Answer{}, false, nil
	}
	a.Value = slices.Clone(a.Value)
	return a, true, nil
}

// CacheAnswer implements seocache.Store.
func (s *Store) CacheAnswer(_ context.Context, key string, a seocache.Answer) error {
	s.seoMu.Lock()
	defer s.seoMu.Unlock()
	a.Value = slices.Clone(a.Value)
	s.seo[key] = a
	n := 0
	for k, old := range s.seo {
		if n == purgeAtOnce {
			break
		}
		if !old.ExpiresAt.After(a.StoredAt) {
			delete(s.seo, k)
			n++
		}
	}
	return nil
}

// InTx implements app.Store.
func (s *Store) InTx(ctx context.Context, fn func(app.Tx) error) error {
	return s.db.InTx(ctx, func(t *memdb.Tx) error { return fn(&tx{Tx: t, s: s}) })
}

// Balance implements app.Store.
func (s *Store) Balance(_ context.Context, agencyID string) (app.Balance, error) {
	s.db.RLock()
	defer s.db.RUnlock()
	return s.balances[agencyID], nil
}

// SubmitRun implements app.Store.
func (s *Store) SubmitRun(ctx context.Context, r app.Run, maxQueued int, events ...outbox.Event) (app.Balance, bool, error) {
	var (
		b  app.Balance
		ok bool
	)
	err := s.InTx(ctx, func(tx app.Tx) error {
		var err error
		if b, _, ok, err = tx.QueueRun(ctx, r, maxQueued, events...); err == nil && !ok {
			return errRefused
		}
		return err
	})
	if errors.Is(err, errRefused) {
		return app.Balance{}, false, nil
	}
	return b, err == nil, err
}

var errRefused = errors.New("refused")

// QueuedTotal implements app.Store.
func (s *Store) QueuedTotal(context.Context) (int64, error) {
	s.db.RLock()
	defer s.db.RUnlock()
	return int64(len(s.queued)), nil
}

// Run implements app.Store.
func (s *Store) Run(_ context.Context, id string) (app.Run, error) {
	s.db.RLock()
	defer s.db.RUnlock()
	r, ok := s.runs[id]
	if !ok {
		return app.Run{}, app.ErrNotFound
	}
	return r, nil
}

// ListRuns implements app.Store: a scan of the runs, enough for the
// embedded store.
func (s *Store) ListRuns(_ context.Context, agencyID string, f app.RunFilter) ([]app.Run, error) {
	s.db.RLock()
	defer s.db.RUnlock()
	var out []app.Run
	for _, r := range s.runs {
		if r.AgencyID == agencyID && (f.ClientID == "" || r.ClientID == f.ClientID) && (f.Action == "" || r.Action == f.Action) &&
			(f.Status == "" || r.Status == f.Status) && (f.Before == "" || r.ID < f.Before) && (f.ScheduleID == "" || r.ScheduleID == f.ScheduleID) {
			out = append(out, r)
		}
	}
	slices.SortFunc(out, func(a, b app.Run) int { return cmp.Compare(b.ID, a.ID) })
	return out[:min(f.Limit, len(out))], nil
}

// UnappliedRuns implements app.Store.
func (s *Store) UnappliedRuns(_ context.Context, before time.Time, limit int) ([]app.Run, error) {
	s.db.RLock()
	defer s.db.RUnlock()
	var out []app.Run
	for _, r := range s.runs {
		if r.Finished() && !r.Applied && r.FinishedAt.Before(before) {
			out = append(out, r)
		}
	}
	slices.SortFunc(out, func(a, b app.Run) int { return cmp.Or(a.FinishedAt.Compare(b.FinishedAt), cmp.Compare(a.ID, b.ID)) })
	return out[:min(limit, len(out))], nil
}

// MarkApplied implements app.Store.
func (s *Store) MarkApplied(ctx context.Context, ids []string) error {
	return s.db.InTx(ctx, func(t *memdb.Tx) error {
		for _, id := range ids {
			if r, ok := s.runs[id]; ok {
				r.Applied = true
				memdb.Put(t, s.runs, id, r)
			}
		}
		return nil
	})
}

// RenewLeases implements app.Store: under the store's lock, so that a
// recovery's transaction that took a run back ends before, or begins
// after, the renewal.
func (s *Store) RenewLeases(ctx context.Context, leases []app.Lease, until time.Time) ([]string, error) {
	var renewed []string
	err := s.db.InTx(ctx, func(t *memdb.Tx) error {
		renewed = renewed[:0]
		for _, l := range leases {
			r, ok := s.runs[l.RunID]
			if !ok || r.Status != app.StatusPending || r.Attempts != l.Attempt {
				continue
			}
			r.LeaseUntil = until
			memdb.Put(t, s.runs, r.ID, r)
			renewed = append(renewed, r.ID)
		}
		return nil
	})
	return renewed, err
}

type tx struct {
	*memdb.Tx
	s *Store
}

func (t *tx) Balance(_ context.Context, agencyID string) (app.Balance, error) {
	return t.s.balances[agencyID], nil
}

func (t *tx) AddCredits(_ context.Context, agencyID string, d app.Balance) (app.Balance, bool, error) {
	b := t.s.balances[agencyID]
	if b.AI+d.AI < 0 || b.Data+d.Data < 0 {
		return b, false, nil
	}
	b.AI += d.AI
	b.Data += d.Data
	memdb.Put(t.Tx, t.s.balances, agencyID, b)
	return b, true, nil
}

func (t *tx) InsertRun(_ context.Context, r app.Run) error {
	if _, ok := t.s.runs[r.ID]; ok {
		return app.ErrDuplicate
	}
	if r.IdempotencyKey != "" {
		k := runKey{r.AgencyID, r.IdempotencyKey}
		if _, ok := t.s.keys[k]; ok {
			return app.ErrDuplicate
		}
		memdb.Put(t.Tx, t.s.keys, k, r.ID)
	}
	t.put(app.Run{}, r)
	return nil
}

// put stores r in place of old (the zero Run for a new run), keeping the
// queue's indexes.
func (t *tx) put(old, r app.Run) {
	if old.Status != r.Status {
		t.count(old, -1)
		t.count(r, 1)
	}
	memdb.Put(t.Tx, t.s.runs, r.ID, r)
}

func (t *tx) count(r app.Run, delta int) {
	switch r.Status {
	case app.StatusQueued:
		if delta > 0 {
			memdb.Put(t.Tx, t.s.queued, r.ID, struct{}{})
		} else {
			memdb.Delete(t.Tx, t.s.queued, r.ID)
		}
		memdb.Put(t.Tx, t.s.queuedBy, r.AgencyID, t.s.queuedBy[r.AgencyID]+delta)
	case app.StatusPending:
		memdb.Put(t.Tx, t.s.running, r.AgencyID, t.s.running[r.AgencyID]+delta)
	}
}

func (t *tx) StartRun(ctx context.Context, r app.Run) (app.Balance, bool, error) {
	b := t.s.balances[r.AgencyID]
	if b.AI < r.Cost.AI || b.Data < r.Cost.Data {
		return b, false, nil
	}
	if err := t.InsertRun(ctx, r); err != nil {
		return app.Balance{}, false, err
	}
	b, _, err := t.AddCredits(ctx, r.AgencyID, app.Balance{AI: -r.Cost.AI, Data: -r.Cost.Data})
	return b, true, err
}

func (t *tx) QueueRun(ctx context.Context, r app.Run, maxQueued int, events ...outbox.Event) (app.Balance, int, bool, error) {
	n := t.s.queuedBy[r.AgencyID]
	if n >= maxQueued {
		return app.Balance{}, n, false, nil
	}
	b, ok, err := t.StartRun(ctx, r)
	if err != nil || !ok {
		return b, n, ok, err
	}
	for _, e := range events {
		if err := t.Enqueue(ctx, e); err != nil {
			return app.Balance{}, n, false, err
		}
	}
	return b, n, true, nil
}

func (t *tx) FinishRun(ctx context.Context, r app.Run, refund action.Cost, event outbox.Event) (bool, app.Balance, error) {
	cur, ok := t.s.runs[r.ID]
	if !ok || cur.Finished() || cur.Attempts != r.Attempts {
		return false, app.Balance{}, nil
	}
	old := cur
	if !jsonbHolds(r.Data) || !jsonbHolds(r.Writes) {
		return false, app.Balance{}, fmt.Errorf("run %s: %w", r.ID, app.ErrUnstorable)
	}
	cur.Status, cur.StatusCode, cur.Data, cur.Writes, cur.FinishedAt = r.Status, r.StatusCode, r.Data, r.Writes, r.FinishedAt
	cur.ProviderCost, cur.Cached = r.ProviderCost, r.Cached
	cur.Applied = false
	t.put(old, cur)
	b, _, err := t.AddCredits(ctx, cur.AgencyID, app.Balance{AI: refund.AI, Data: refund.Data})
	if err != nil {
		return false, app.Balance{}, err
	}
	return true, b, t.Enqueue(ctx, event)
}

func (t *tx) QueuedRuns(_ context.Context, agencyID string, upTo int) (int, error) {
	return min(t.s.queuedBy[agencyID], upTo), nil
}

// ClaimRun takes the oldest queued run of the agency with the fewest
// running runs, of those the one served longest ago: a scan of the queued runs, which the queue bounds
// (--agency-max-queued per agency).
func (t *tx) ClaimRun(_ context.Context, now, lease time.Time) (app.Run, bool, error) {
	var (
		best  app.Run
		found bool
	)
	for id := range t.s.queued {
		r := t.s.runs[id]
		if !found || cmp.Or(cmp.Compare(t.s.running[r.AgencyID], t.s.running[best.AgencyID]),
			t.s.served[r.AgencyID].Compare(t.s.served[best.AgencyID]),
			r.CreatedAt.Compare(best.CreatedAt), cmp.Compare(r.ID, best.ID)) < 0 {
			best, found = r, true
		}
	}
	if !found {
		return app.Run{}, false, nil
	}
	old := best
	best.Status, best.StartedAt, best.LeaseUntil = app.StatusPending, now, lease
	best.Attempts++
	t.put(old, best)
	memdb.Put(t.Tx, t.s.served, best.AgencyID, now)
	return best, true, nil
}

func (t *tx) RequeueRun(_ context.Context, id string, attempt int) (bool, error) {
	r, ok := t.s.runs[id]
	if !ok || r.Status != app.StatusPending || r.Attempts != attempt {
		return false, nil
	}
	old := r
	r.Status = app.StatusQueued
	t.put(old, r)
	return true, nil
}

func (t *tx) RunByKey(_ context.Context, agencyID, key string) (app.Run, error) {
	id, ok := t.s.keys[runKey{agencyID, key}]
	if !ok {
		return app.Run{}, app.ErrNotFound
	}
	return t.s.runs[id], nil
}

func (t *tx) ForgetKey(_ context.Context, runID string) error {
	r, ok := t.s.runs[runID]
	if !ok || r.IdempotencyKey == "" {
		return nil
	}
	memdb.Delete(t.Tx, t.s.keys, runKey{r.AgencyID, r.IdempotencyKey})
	r.IdempotencyKey, r.RequestHash = "", ""
	memdb.Put(t.Tx, t.s.runs, runID, r)
	return nil
}

func (t *tx) ExpiredRuns(_ context.Context, now time.Time, limit int) ([]app.Run, error) {
	var out []app.Run
	for _, r := range t.s.runs {
		if r.Status == app.StatusPending && r.LeaseUntil.Before(now) {
			out = append(out, r)
		}
	}
	slices.SortFunc(out, func(a, b app.Run) int { return cmp.Or(a.StartedAt.Compare(b.StartedAt), cmp.Compare(a.ID, b.ID)) })
	return out[:min(limit, len(out))], nil
}

// jsonbHolds reports whether PostgreSQL's jsonb, where the PostgreSQL store
// keeps a run's data and writes, could hold v: JSON without a U+0000 in any
// string or key and without NaN or infinities. The memory store refuses
// what the PostgreSQL store refuses, so that a run ends the same way on
// either.
func jsonbHolds(v any) bool {
	all := func(n int, holds func(i int) bool) bool {
		for i := range n {
			if !holds(i) {
				return false
			}
		}
		return true
	}
	switch v := v.(type) {
	case nil, bool:
		return true
	case string:
		return !strings.ContainsRune(v, 0)
	case float64:
		return !math.IsNaN(v) && !math.IsInf(v, 0)
	case map[string]any:
		for k, x := range v {
			if !jsonbHolds(k) || !jsonbHolds(x) {
				return false
			}
		}
		return true
	case []any:
		return all(len(v), func(i int) bool { return jsonbHolds(v[i]) })
	case []string:
		return all(len(v), func(i int) bool { return jsonbHolds(v[i]) })
	case []map[string]any:
		return all(len(v), func(i int) bool { return jsonbHolds(v[i]) })
	case []action.RecordWrite:
		return all(len(v), func(i int) bool { return jsonbHolds(v[i].Rows) })
	}
	// Any other type as JSON reads it.
	b, err := json.Marshal(v)
	if err != nil {
		return false
	}
	var decoded any
	return json.Unmarshal(b, &decoded) == nil && jsonbHolds(decoded)
}
