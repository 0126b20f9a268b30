package app

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"time"

	"github.com/atrium-hq/atrium/platform/apperr"
	"github.com/atrium-hq/atrium/platform/principal"
	"github.com/atrium-hq/atrium/platform/value"
)

// Scheduled publishing: an item may carry a pending publish_at and
// unpublish_at. The scheduler (Scheduler.Run, a loop beside serving)
// applies each once it is due, in a transaction that claims the item
// (FOR UPDATE SKIP LOCKED on PostgreSQL, so that several replicas apply
// each change once), exactly as a PATCH of is_published would: the same
// write, the same item.updated and item.published or item.unpublished
// events through the outbox.

// OptionalTime is a schedule field as the caller sent it: absent, null
// (cancel), or an RFC 3339 date-time.
type OptionalTime struct {
	Given bool
	// Value is the date-time; nil with Given is null.
	Value *string
}

// GivenTime is an OptionalTime the caller sent, v being nil for null.
func GivenTime(v *string) OptionalTime { return OptionalTime{Given: true, Value: v} }

// optionalTime is a field that is either a date-time or absent (a create,
// where null and absent are the same).
func optionalTime(v *string) OptionalTime {
	if v == nil {
		return OptionalTime{}
	}
	return GivenTime(v)
}

// ScheduleInput is publish_at and unpublish_at as the caller sent them.
type ScheduleInput struct {
	PublishAt, UnpublishAt OptionalTime
}

// schedule is a checked ScheduleInput.
type schedule struct {
	setPublish, setUnpublish bool
	publishAt, unpublishAt   *time.Time
}

func readTime(field string, in OptionalTime, now time.Time) (*time.Time, error) {
	if in.Value == nil {
		return nil, nil
	}
	t, err := time.Parse(time.RFC3339Nano, *in.Value)
	if err != nil {
		return nil, apperr.Invalid("%s must be an RFC 3339 date-time with a zone, such as 2026-12-01T09:00:00Z, or null; got %s", field, value.Describe(*in.Value))
	}
	t = t.UTC().Truncate(time.Microsecond)
	if !t.After(now) {
		return nil, apperr.Invalid("%s must be in the future (it is now %s); got %s", field, now.Format(time.RFC3339), *in.Value)
	}
	return &t, nil
}

func readSchedule(in ScheduleInput, now time.Time) (schedule, error) {
	var s schedule
	var err error
	if s.publishAt, err = readTime("publish_at", in.PublishAt, now); err != nil {
		return s, err
	}
	if s.unpublishAt, err = readTime("unpublish_at", in.UnpublishAt, now); err != nil {
		return s, err
	}
	s.setPublish, s.setUnpublish = in.PublishAt.Given, in.UnpublishAt.Given
	return s, nil
}

// apply puts the schedule into a patch. A PATCH of is_published replaces
// the pending changes: those it does not give are cancelled.
func (s schedule) apply(p *ItemPatch) {
	if p.IsPublished != nil {
		s.setPublish, s.setUnpublish = true, true
	}
	p.SetPublishAt, p.PublishAt = s.setPublish, s.publishAt
	p.SetUnpublishAt, p.UnpublishAt = s.setUnpublish, s.unpublishAt
}

// checkOrder refuses a schedule that would unpublish before it publishes.
func checkOrder(it Item) error {
	if it.PublishAt != nil && it.UnpublishAt != nil && !it.UnpublishAt.After(*it.PublishAt) {
		return apperr.Invalid("unpublish_at (%s) must be after publish_at (%s)", it.UnpublishAt.Format(time.RFC3339Nano), it.PublishAt.Format(time.RFC3339Nano))
	}
	return nil
}

// DueItem is an item with a scheduled change due, claimed by the
// transaction that read it.
type DueItem struct {
	ID, CollectionID, SiteID, Slug string
	PublishAt, UnpublishAt         *time.Time
}

// Scheduler defaults.
const (
	// DefaultScheduleInterval is how often the scheduler looks for due
	// changes: a change is applied within this of its time (the issue
	// asks for 5 seconds), plus the time to apply those before it.
	DefaultScheduleInterval = time.Second
	// scheduleBatch is how many items one transaction claims.
	scheduleBatch = 100
)

// Scheduler applies due scheduled changes, and deletes the expired
// preview links and the revisions of items deleted longer ago than the
// retention now and then.
type Scheduler struct {
	store    ScheduleStore
	clock    Clock
	interval time.Duration
	logger   *slog.Logger
	// retention is how long a deleted item's revisions are kept; 0
	// keeps them for ever.
	retention time.Duration
}

// NewScheduler returns a scheduler that looks every interval (0: the
// default).
func NewScheduler(store ScheduleStore, clock Clock, interval time.Duration, logger *slog.Logger) *Scheduler {
	if interval <= 0 {
		interval = DefaultScheduleInterval
	}
	return &Scheduler{store: store, clock: clock, interval: interval, logger: logger, retention: DefaultRevisionRetention}
}

// WithRevisionRetention sets how long a deleted item's revisions are kept
// (0: for ever) and returns u.
func (u *Scheduler) WithRevisionRetention(d time.Duration) *Scheduler {
	u.retention = d
	return u
}

// Interval is how often the scheduler looks.
func (u *Scheduler) Interval() time.Duration { return u.interval }

// Run applies due changes every interval until ctx ends. A failure (the
// database away) is logged and retried at the next tick: the changes wait
// in the store.
func (u *Scheduler) Run(ctx context.Context) error {
	ctx = principal.NewContext(ctx, SchedulerPrincipal)
	t := time.NewTicker(u.interval)
	defer t.Stop()
	for tick := 0; ; tick++ {
		if _, err := u.ApplyDue(ctx); err != nil && ctx.Err() == nil {
			u.logger.WarnContext(ctx, "scheduled changes could not be applied; retrying", "error", err)
		}
		if tick%pruneEvery == 0 {
			if _, err := u.PruneExpiredLinks(ctx); err != nil && ctx.Err() == nil {
				u.logger.WarnContext(ctx, "expired preview links could not be deleted; retrying later", "error", err)
			}
			if _, err := u.PurgeRevisions(ctx); err != nil && ctx.Err() == nil {
				u.logger.WarnContext(ctx, "the revisions of items deleted past the retention could not be purged; retrying later", "error", err)
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// pruneEvery is how many ticks pass between two prunings of the expired
// preview links: they answer 404 from their expiry whether or not they are
// deleted, so this only keeps the table from growing.
const pruneEvery = 60

// PruneExpiredLinks deletes the preview links that expired, a batch per
// transaction, and returns how many it deleted.
func (u *Scheduler) PruneExpiredLinks(ctx context.Context) (int, error) {
	total := 0
	for {
		var n int
		err := u.store.InTx(ctx, func(tx ScheduleTx) error {
			var err error
			n, err = tx.DeleteExpiredPreviewLinks(ctx, u.clock.Now(), scheduleBatch)
			return err
		})
		total += n
		if err != nil || n < scheduleBatch {
			return total, err
		}
	}
}

// PurgeRevisions deletes the revisions of the items deleted longer ago
// than the retention, a batch of items per transaction, and returns how
// many items' revisions it deleted. Replicas may purge at once: each
// skips the items another holds, and a delete of what is gone deletes
// nothing.
func (u *Scheduler) PurgeRevisions(ctx context.Context) (int, error) {
	if u.retention <= 0 {
		return 0, nil
	}
	total := 0
	for {
		var n int
		err := u.store.InTx(ctx, func(tx ScheduleTx) error {
			var err error
			n, err = tx.PurgeRevisions(ctx, u.clock.Now().Add(-u.retention), scheduleBatch)
			return err
		})
		total += n
		if err != nil || n < scheduleBatch {
			return total, err
		}
	}
}

// ApplyDue applies every change due now, a batch per transaction, and
// returns how many items it changed. The changes are the scheduler's
// (SchedulerPrincipal) in their revisions and audit records.
func (u *Scheduler) ApplyDue(ctx context.Context) (int, error) {
	if _, ok := principal.FromContext(ctx); !ok {
		ctx = principal.NewContext(ctx, SchedulerPrincipal)
	}
	total := 0
	for {
		n, err := u.applyBatch(ctx)
		total += n
		if err != nil || n < scheduleBatch {
			return total, err
		}
	}
}

func (u *Scheduler) applyBatch(ctx context.Context) (int, error) {
	now := u.clock.Now()
	n := 0
	err := u.store.InTx(ctx, func(tx ScheduleTx) error {
		due, err := tx.ClaimDue(ctx, now, scheduleBatch)
		if err != nil {
			return err
		}
		n = len(due)
		for _, d := range due {
			if err := applyDue(ctx, tx, d, now); err != nil {
				return err
			}
		}
		return nil
	})
	return n, err
}

// applyDue applies an item's due changes in the order of their times
// (both, when the service was down across them), each as a PATCH of
// is_published that also clears its schedule field.
func applyDue(ctx context.Context, tx ScheduleTx, d DueItem, now time.Time) error {
	type change struct {
		at      time.Time
		publish bool
	}
	var changes []change
	if d.PublishAt != nil && !d.PublishAt.After(now) {
		changes = append(changes, change{*d.PublishAt, true})
	}
	if d.UnpublishAt != nil && !d.UnpublishAt.After(now) {
		changes = append(changes, change{*d.UnpublishAt, false})
	}
	slices.SortFunc(changes, func(a, b change) int { return a.at.Compare(b.at) })
	c := Collection{ID: d.CollectionID, SiteID: d.SiteID, Slug: d.Slug}
	for _, ch := range changes {
		p := ItemPatch{IsPublished: &ch.publish, At: now, Edit: editOf(ctx, ChangeScheduled)}
		fields := []string{"is_published"}
		if ch.publish {
			p.SetPublishAt = true
			fields = append(fields, "publish_at")
		} else {
			p.SetUnpublishAt = true
			fields = append(fields, "unpublish_at")
		}
		before, after, err := tx.PatchItem(ctx, d.CollectionID, d.ID, p)
		if errors.Is(err, ErrNotFound) {
			return nil // deleted since it was claimed: nothing to do
		} else if err != nil {
			return err
		}
		if err := enqueuePatched(ctx, tx, c, before, after); err != nil {
			return err
		}
		if err := recordItem(ctx, tx, c, "item.updated", d.ID, fields, now); err != nil {
			return err
		}
	}
	return nil
}
