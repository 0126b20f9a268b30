package memory

import (
	"cmp"
	"context"
	"maps"
	"slices"
	"time"

	"github.com/atrium-hq/atrium/platform/memdb"
	"github.com/atrium-hq/atrium/services/actions/internal/app"
)

// cloneSchedule copies what a caller could change in place.
func cloneSchedule(s app.Schedule) app.Schedule {
	s.Params = maps.Clone(s.Params)
	s.Slots = slices.Clone(s.Slots)
	if s.MaxPerMonth != nil {
		m := *s.MaxPerMonth
		s.MaxPerMonth = &m
	}
	return s
}

// Schedule implements app.Store.
func (s *Store) Schedule(_ context.Context, id string) (app.Schedule, error) {
	s.db.RLock()
	defer s.db.RUnlock()
	sc, ok := s.schedules[id]
	if !ok {
		return app.Schedule{}, app.ErrNotFound
	}
	return cloneSchedule(sc), nil
}

// ListSchedules implements app.Store: a scan, which the cap on schedules
// per agency bounds.
func (s *Store) ListSchedules(_ context.Context, agencyID string, f app.ScheduleFilter) ([]app.Schedule, error) {
	s.db.RLock()
	defer s.db.RUnlock()
	var out []app.Schedule
	for _, sc := range s.schedules {
		if sc.AgencyID == agencyID && (f.ClientID == "" || sc.ClientID == f.ClientID) && (f.Action == "" || sc.Action == f.Action) &&
			(f.State == "" || sc.State == f.State) && (f.After == "" || sc.ID > f.After) {
			out = append(out, cloneSchedule(sc))
		}
	}
	slices.SortFunc(out, func(a, b app.Schedule) int { return cmp.Compare(a.ID, b.ID) })
	return out[:min(f.Limit, len(out))], nil
}

// ScheduleSpent implements app.Store.
func (s *Store) ScheduleSpent(_ context.Context, scheduleID string, since time.Time) (app.Balance, error) {
	s.db.RLock()
	defer s.db.RUnlock()
	var b app.Balance
	for _, r := range s.runs {
		if r.ScheduleID == scheduleID && !r.CreatedAt.Before(since) &&
			(r.Status == app.StatusQueued || r.Status == app.StatusPending || r.Status == app.StatusSuccess) {
			b.AI += r.Cost.AI
			b.Data += r.Cost.Data
		}
	}
	return b, nil
}

func (t *tx) CountSchedules(_ context.Context, agencyID string) (int, error) {
	n := 0
	for _, sc := range t.s.schedules {
		if sc.AgencyID == agencyID {
			n++
		}
	}
	return n, nil
}

func (t *tx) InsertSchedule(_ context.Context, sc app.Schedule) error {
	if _, ok := t.s.schedules[sc.ID]; ok {
		return app.ErrDuplicate
	}
	memdb.Put(t.Tx, t.s.schedules, sc.ID, cloneSchedule(sc))
	return nil
}

// ScheduleForUpdate needs no lock of its own: a memory transaction holds
// the store's.
func (t *tx) ScheduleForUpdate(_ context.Context, id string) (app.Schedule, error) {
	sc, ok := t.s.schedules[id]
	if !ok {
		return app.Schedule{}, app.ErrNotFound
	}
	return cloneSchedule(sc), nil
}

func (t *tx) PutSchedule(_ context.Context, sc app.Schedule) error {
	if _, ok := t.s.schedules[sc.ID]; !ok {
		return app.ErrNotFound
	}
	memdb.Put(t.Tx, t.s.schedules, sc.ID, cloneSchedule(sc))
	return nil
}

func (t *tx) DeleteSchedule(_ context.Context, id string) error {
	if _, ok := t.s.schedules[id]; !ok {
		return app.ErrNotFound
	}
	memdb.Delete(t.Tx, t.s.schedules, id)
	return nil
}

func (t *tx) ClaimDueSchedules(_ context.Context, now, until time.Time, limit int) ([]app.Schedule, error) {
	var due []app.Schedule
	for _, sc := range t.s.schedules {
		if sc.State == app.ScheduleActive && !sc.NextRunAt.After(now) && sc.ClaimedUntil.Before(now) {
			due = append(due, sc)
		}
	}
	slices.SortFunc(due, func(a, b app.Schedule) int { return cmp.Or(a.NextRunAt.Compare(b.NextRunAt), cmp.Compare(a.ID, b.ID)) })
	due = due[:min(limit, len(due))]
	for i := range due {
		due[i].ClaimedUntil = until
		memdb.Put(t.Tx, t.s.schedules, due[i].ID, due[i])
		due[i] = cloneSchedule(due[i])
	}
	return due, nil
}
