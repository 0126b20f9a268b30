package app

import (
	"context"

	"github.com/atrium-hq/atrium/platform/apperr"
	"github.com/atrium-hq/atrium/platform/audit"
	"github.com/atrium-hq/atrium/platform/events"
	"github.com/atrium-hq/atrium/platform/outbox"
)

// MaxBalance bounds a balance of each kind (the API's int32 numbers).
const MaxBalance = 2_000_000_000

// AddCredits adds credits of each kind to an agency's balance; negative
// amounts remove credits, never below zero.
func (a *Actions) AddCredits(ctx context.Context, agencyID string, ai, data int64) (Balance, error) {
	if ai == 0 && data == 0 {
		return Balance{}, apperr.Invalid("ai and data are both 0: give an amount of AI or data credits to add (negative to remove)")
	}
	id, err := a.agency(ctx, agencyID)
	if err != nil {
		return Balance{}, err
	}
	var bal Balance
	err = a.store.InTx(ctx, func(tx Tx) error {
		cur, err := tx.Balance(ctx, id)
		if err != nil {
			return err
		}
		if cur.AI+ai > MaxBalance || cur.Data+data > MaxBalance {
			return apperr.Invalid("a balance holds at most %d credits of each kind; the agency has %d AI and %d data credits", int64(MaxBalance), cur.AI, cur.Data)
		}
		b, ok, err := tx.AddCredits(ctx, id, Balance{AI: ai, Data: data})
		if err != nil {
			return err
		}
		if !ok {
			return apperr.Conflict("cannot remove more credits than the agency has: it has %d AI and %d data credits", b.AI, b.Data)
		}
		bal = b
		now := a.clock.Now()
		if err := outbox.Add(ctx, tx, events.CreditsChanged, events.CreditsChangedEvent{AgencyID: id, Added: events.CreditsDelta{AI: ai, Data: data}, Balance: events.Credits(b), At: now}, now); err != nil {
			return err
		}
		var fields []string
		if ai != 0 {
			fields = append(fields, "ai")
		}
		if data != 0 {
			fields = append(fields, "data")
		}
		return audit.Record(ctx, tx, auditService, audit.Change{Action: "credits.changed", ResourceType: "credits", ResourceID: id, Fields: fields, AgencyID: id}, now)
	})
	return bal, err
}

// Credits returns an agency's balance, for an administrator.
func (a *Actions) Credits(ctx context.Context, agencyID string) (Balance, error) {
	id, err := a.agency(ctx, agencyID)
	if err != nil {
		return Balance{}, err
	}
	return a.store.Balance(ctx, id)
}

// OwnCredits returns the balance of the caller's own agency.
func (a *Actions) OwnCredits(ctx context.Context, agencyID string) (Balance, error) {
	return a.store.Balance(ctx, agencyID)
}
