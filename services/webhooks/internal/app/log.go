package app

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/atrium-hq/atrium/platform/apperr"
	"github.com/atrium-hq/atrium/platform/pagination"
	"github.com/atrium-hq/atrium/platform/store"
	"github.com/atrium-hq/atrium/platform/value"
)

// Paging of the delivery log.
const (
	DefaultDeliveryPage = 20
	MaxDeliveryPage     = 100
)

var deliveryPage = pagination.Policy{DefaultLimit: DefaultDeliveryPage, MaxLimit: MaxDeliveryPage}

// Log is the delivery log's use cases: an endpoint's deliveries with their
// attempts, and their replay. A replay sends the same event again (the
// same webhook-id and body); nothing the event announced is done again.
type Log struct {
	Store     Store
	Deliverer *Deliverer
	Now       func() time.Time
}

func (l *Log) now() time.Time {
	if l.Now != nil {
		return stamp(l.Now())
	}
	return stamp(time.Now())
}

// endpoint checks that t owns endpoint id, for a 404 that names the
// webhook rather than an empty log.
func (l *Log) endpoint(ctx context.Context, t Tenant, id string) (string, error) {
	id, err := value.PathID("webhook", id)
	if err != nil {
		return "", err
	}
	if _, err := l.Store.Endpoint(ctx, t, id); err != nil {
		return "", notFound(err, id)
	}
	return id, nil
}

var statuses = []DeliveryStatus{Pending, Succeeded, Failed}

// List returns a page of t's endpoint's deliveries, newest first:
// status ("" for all), limit (nil for the default) and the cursor of the
// page before ("" for the first).
func (l *Log) List(ctx context.Context, t Tenant, endpointID, status string, limit *int32, cursor string) (DeliveryPage, error) {
	id, err := l.endpoint(ctx, t, endpointID)
	if err != nil {
		return DeliveryPage{}, err
	}
	if status != "" && !slices.Contains(statuses, DeliveryStatus(status)) {
		return DeliveryPage{}, apperr.Invalid("status must be one of pending, succeeded, failed; got %s", value.Describe(status))
	}
	page, err := deliveryPage.Parse(limit, nil)
	if err != nil {
		return DeliveryPage{}, err
	}
	f := DeliveryFilter{Status: DeliveryStatus(status), Limit: int(page.Limit)}
	if cursor != "" {
		pos, err := pagination.ReadCursor(cursor, "the webhook and status", id, status)
		if err != nil {
			return DeliveryPage{}, err
		}
		if f.After, err = value.BodyID("cursor", pos); err != nil {
			return DeliveryPage{}, apperr.Invalid("cursor is malformed: send back next_cursor exactly as received")
		}
	}
	out, err := l.Store.Deliveries(ctx, t, id, f)
	if err != nil {
		return DeliveryPage{}, err
	}
	if out.Next != "" {
		out.Next = pagination.Cursor(out.Next, id, status)
	}
	return out, nil
}

// Retry sends t's endpoint's delivery again now, whatever its status, and
// returns it after that attempt (POST …/deliveries/{id}/retry): as with the
// test event, the caller sees at once whether it went through. If it
// fails, the schedule goes on from the delivery's attempts so far.
func (l *Log) Retry(ctx context.Context, t Tenant, endpointID, deliveryID string) (Delivery, error) {
	id, err := l.endpoint(ctx, t, endpointID)
	if err != nil {
		return Delivery{}, err
	}
	did, err := value.PathID("delivery", deliveryID)
	if err != nil {
		return Delivery{}, err
	}
	// Due only after a lease's time, so that no deliverer claims it while
	// this call makes its attempt.
	del, err := l.Store.Resend(ctx, t, id, did, l.now().Add(l.Deliverer.lease()))
	if errors.Is(err, store.ErrNotFound) {
		return Delivery{}, value.NotFound("delivery", did)
	}
	if err != nil {
		return Delivery{}, err
	}
	if err := recordAfter(ctx, l.Store, change(t, "delivery.retried", "delivery", did), l.now()); err != nil {
		return Delivery{}, err
	}
	if err := l.Deliverer.attemptNow(ctx, del); err != nil {
		return Delivery{}, err
	}
	return l.Store.Delivery(ctx, t, id, did)
}

// endOfTime is the end of a window without an until.
var endOfTime = time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC)

// Recover makes every failed delivery of t's endpoint created in [since,
// until) pending and due now (until "" has no end), wakes the deliverer,
// and returns how many.
func (l *Log) Recover(ctx context.Context, t Tenant, endpointID, since, until string) (int, error) {
	id, err := l.endpoint(ctx, t, endpointID)
	if err != nil {
		return 0, err
	}
	now := l.now()
	ts := value.Rule{Kind: value.Timestamp}
	if since == "" {
		return 0, ts.Required("since")
	}
	from, ok := ts.CheckString(since)
	if !ok {
		return 0, ts.Invalid("since", since)
	}
	to := endOfTime // no until: every failed delivery since
	if until != "" {
		v, ok := ts.CheckString(until)
		if !ok {
			return 0, ts.Invalid("until", until)
		}
		to = v.Time
	}
	if !from.Time.Before(to) {
		return 0, apperr.Invalid("since must be before until; got since %s and until %s", from.Time.Format(time.RFC3339Nano), to.Format(time.RFC3339Nano))
	}
	n, err := l.Store.Recover(ctx, t, id, from.Time, to, now)
	if err != nil {
		return 0, err
	}
	if err := recordAfter(ctx, l.Store, change(t, "deliveries.recovered", "webhook", id, "since", "until"), now); err != nil {
		return 0, err
	}
	if n > 0 {
		l.Deliverer.Wake()
	}
	return n, nil
}
