package app_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/atrium-hq/atrium/platform/apperr"
	"github.com/atrium-hq/atrium/services/webhooks/internal/app"
	"github.com/atrium-hq/atrium/services/webhooks/internal/eventtypes"
)

func (w *world) log() *app.Log {
	return &app.Log{Store: w.store, Deliverer: w.del, Now: func() time.Time { return w.now }}
}

// TestDeliveryLogPages: the log pages newest first with an opaque cursor
// bound to its webhook and status filter; a bad status, limit or cursor is
// a 400 saying what is allowed; another tenant's webhook is a 404.
func TestDeliveryLogPages(t *testing.T) {
	w := newWorld(t, nil)
	agency := app.Tenant{Kind: eventtypes.Agency, ID: uuid.NewString()}
	r := newReceiver(t, 200)
	e := w.register(agency, r, "*")
	for i := range 5 {
		w.event(fmt.Sprint("evt-", i), "atrium.crm.deal.created", dealCreated(agency.ID))
	}
	l := w.log()
	var seen []string
	cursor := ""
	for range 10 {
		page, err := l.List(t.Context(), agency, e.ID, "pending", ptr(int32(2)), cursor)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range page.Deliveries {
			seen = append(seen, d.EventID)
		}
		if page.Next == "" {
			break
		}
		cursor = page.Next
		if _, err := l.List(t.Context(), agency, e.ID, "failed", nil, cursor); apperr.KindOf(err) != apperr.KindInvalid || !strings.Contains(err.Error(), "another query") {
			t.Fatalf("the cursor with another status = %v, want a 400", err)
		}
	}
	if strings.Join(seen, ",") != "evt-4,evt-3,evt-2,evt-1,evt-0" {
		t.Fatalf("pages of 2 gave %v, want the five newest first", seen)
	}
	_, err := l.List(t.Context(), agency, e.ID, "done", nil, "")
	wantInvalid(t, "status=done", err, "status must be one of pending, succeeded, failed", `"done"`)
	_, err = l.List(t.Context(), agency, e.ID, "", ptr(int32(101)), "")
	wantInvalid(t, "limit=101", err, "limit must be an integer from 1 to 100")
	_, err = l.List(t.Context(), agency, e.ID, "", nil, "bm90IGEgY3Vyc29y")
	wantInvalid(t, "a made-up cursor", err, "cursor is malformed")
	other := app.Tenant{Kind: eventtypes.Agency, ID: uuid.NewString()}
	if _, err := l.List(t.Context(), other, e.ID, "", nil, ""); apperr.KindOf(err) != apperr.KindNotFound || !strings.Contains(err.Error(), e.ID) {
		t.Fatalf("another agency's log = %v, want 404 naming the webhook", err)
	}
}

// TestRetryAndRecover: a retry sends a delivery again at once with the
// same webhook-id and answers with that attempt; a recover of a window
// makes its failed deliveries due and wakes the deliverer; bad windows are
// 400s; another tenant's ids are 404s.
func TestRetryAndRecover(t *testing.T) {
	w := newWorld(t, nil)
	w.del.Schedule = nil // one attempt: a failure fails the delivery
	agency := app.Tenant{Kind: eventtypes.Agency, ID: uuid.NewString()}
	r := newReceiver(t, 500, 500, 200)
	e := w.register(agency, r, "*")
	w.event("evt-a", "atrium.crm.deal.created", dealCreated(agency.ID))
	w.now = w.now.Add(time.Hour)
	w.event("evt-b", "atrium.crm.deal.created", dealCreated(agency.ID))
	w.run()
	ds := w.deliveries(e)
	if len(ds) != 2 || ds[0].Status != app.Failed || ds[1].Status != app.Failed {
		t.Fatalf("after one failed attempt each: %+v", ds)
	}
	l := w.log()
	got, err := l.Retry(t.Context(), agency, e.ID, ds[1].ID) // evt-a, the older
	if err != nil || got.Status != app.Succeeded || len(got.Attempts) != 2 || got.Attempts[1].StatusCode != 200 {
		t.Fatalf("Retry = %+v, %v; want succeeded by a second attempt", got, err)
	}
	rs := r.receipts()
	if len(rs) != 3 || rs[2].id != "evt-a" || rs[2].verified != nil {
		t.Fatalf("receipts %+v; want the retry of evt-a, verified, with its webhook-id", rs)
	}
	other := app.Tenant{Kind: eventtypes.Agency, ID: uuid.NewString()}
	if _, err := l.Retry(t.Context(), other, e.ID, ds[0].ID); apperr.KindOf(err) != apperr.KindNotFound {
		t.Fatalf("another agency's retry = %v, want 404", err)
	}
	if _, err := l.Retry(t.Context(), agency, e.ID, uuid.NewString()); apperr.KindOf(err) != apperr.KindNotFound || !strings.Contains(err.Error(), "delivery") {
		t.Fatalf("retry of no delivery = %v, want 404 naming the delivery", err)
	}

	since := w.now.Add(-30 * time.Minute).Format(time.RFC3339)
	n, err := l.Recover(t.Context(), agency, e.ID, since, "")
	if err != nil || n != 1 {
		t.Fatalf("Recover since half an hour ago = %d, %v; want evt-b only", n, err)
	}
	w.run()
	if d := w.deliveries(e)[0]; d.EventID != "evt-b" || d.Status != app.Succeeded {
		t.Fatalf("after the recover: %+v; want evt-b delivered", d)
	}
	_, err = l.Recover(t.Context(), agency, e.ID, "", "")
	wantInvalid(t, "recover without since", err, "since is required")
	_, err = l.Recover(t.Context(), agency, e.ID, "yesterday", "")
	wantInvalid(t, "since=yesterday", err, "since must be", "yesterday")
	_, err = l.Recover(t.Context(), agency, e.ID, since, since)
	wantInvalid(t, "an empty window", err, "since must be before until")
	if _, err := l.Recover(t.Context(), other, e.ID, since, ""); apperr.KindOf(err) != apperr.KindNotFound {
		t.Fatalf("another agency's recover = %v, want 404", err)
	}
}
