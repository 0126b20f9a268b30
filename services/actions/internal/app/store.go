package app

import (
	"context"
	"errors"
	"time"

	"github.com/atrium-hq/atrium/platform/outbox"
	"github.com/atrium-hq/atrium/platform/store"
	"github.com/atrium-hq/atrium/services/actions/internal/app/action"
	"github.com/atrium-hq/atrium/services/actions/internal/app/provider"
)

// Run statuses. A synchronous run is pending from the start; an
// asynchronous one is queued, with its cost reserved, until a worker
// claims it and makes it pending (the API calls that state running).
const (
	StatusQueued   = "queued"
	StatusPending  = "pending"
	StatusSuccess  = "success"
	StatusError    = "error"
	StatusCanceled = "canceled"
)

// Finished reports whether a run has ended (success, error or canceled).
func (r Run) Finished() bool { return r.Status != StatusQueued && r.Status != StatusPending }

// Run is one execution of an action: what it reserved, how it ended, what
// it answered and which records it writes.
type Run struct {
	ID, AgencyID, ClientID, Action string
	// Status is queued (asynchronous runs only) or pending until the run
	// finishes with success, error or canceled.
	Status     string
	StatusCode int
	// Cost is reserved when the run starts; it stays spent on success and
	// is released on error.
	Cost action.Cost
	// ProviderCost is what the outside providers charged for the run's
	// calls (DataForSEO reports a cost on every task), failed runs and
	// calls included; Cached says the run's data came from the SEO cache,
	// which charges nothing. Recorded when the run finishes; a run ended
	// by recovery knows neither.
	ProviderCost provider.USD
	Cached       bool
	// Data is the response's data: the record, or {"error": message}.
	Data map[string]any
	// Writes are the rows the run writes to the data service, applied after
	// the run commits; Applied says they are.
	Writes  []action.RecordWrite
	Applied bool
	// IdempotencyKey and RequestHash are set when the caller sent an
	// Idempotency-Key: the key and the SHA-256 of its request body.
	IdempotencyKey, RequestHash string
	// Async says the run was submitted with Prefer: respond-async and
	// waits in the queue; Input is then its request body, which the worker
	// that claims it parses again. Attempts counts the claims: a run whose
	// worker died is queued again once (recovery.go).
	Async    bool
	Input    map[string]any
	Attempts int
	// CreatedAt is when the run was submitted; StartedAt when its work
	// began (the same for a synchronous run; for a queued one, its
	// submission until a worker claims it).
	CreatedAt, StartedAt, FinishedAt time.Time
	// ScheduleID is the schedule that started the run; empty for a
	// caller's.
	ScheduleID string
	// LeaseUntil is when a pending run counts as abandoned (its process
	// died): recovery then ends it with an error and releases its cost.
	LeaseUntil time.Time
}

// Balance is an agency's credits.
type Balance struct{ AI, Data int64 }

// Store errors, shared with every service.
var (
	ErrNotFound  = store.ErrNotFound
	ErrDuplicate = store.ErrDuplicate
)

// ErrUnstorable is a run's outcome holding a value the store cannot keep:
// text with a U+0000 character, which PostgreSQL's jsonb refuses, or a
// number JSON cannot write (NaN, an infinity). Writing it again fails the
// same way, unlike an outage.
var ErrUnstorable = errors.New("the outcome holds a value the store cannot keep")

// Store is the actions service's persistence port, met by the memory and
// postgres adapters under the contract suite in storetest.
type Store interface {
	// InTx runs fn in a transaction: all of its writes and events, or none.
	InTx(ctx context.Context, fn func(Tx) error) error
	// Balance returns an agency's balance; zero if it never had credits.
	Balance(ctx context.Context, agencyID string) (Balance, error)
	// Run returns a run by id.
	Run(ctx context.Context, id string) (Run, error)
	// SubmitRun stores a queued run with its cost reserved and its queued
	// event (and its audit event: events, in order), as a transaction of
	// its own, when the agency has fewer than
	// maxQueued runs queued and the credits; otherwise ok is false and
	// nothing is stored (a Tx then finds out why, as reserve does).
	// ErrDuplicate if the agency has a run with its idempotency key. It
	// is the common submission in one step: an adapter may send it in one
	// round trip, and commit concurrent ones together.
	SubmitRun(ctx context.Context, r Run, maxQueued int, events ...outbox.Event) (b Balance, ok bool, err error)
	// QueuedTotal counts the queued runs of every agency: the depth of the
	// deployment's queue, for its metric.
	QueuedTotal(ctx context.Context) (int64, error)
	// UnappliedRuns returns up to limit finished runs whose writes are not
	// applied, finished before before, oldest first.
	UnappliedRuns(ctx context.Context, before time.Time, limit int) ([]Run, error)
	// MarkApplied records that the runs' writes are applied.
	MarkApplied(ctx context.Context, ids []string) error
	// RenewLeases moves the lease of each named run that is still pending
	// in the attempt named to until, as a transaction of its own, and
	// returns the ids it renewed. A run that has finished (recovery ended
	// it, or a cancel), gone back to the queue or been claimed again
	// since is not renewed: its caller has lost it, and its outcome will
	// be refused (FinishRun matches the attempt too). A renewal and a
	// recovery that takes the run back are serialised on the run: exactly
	// one of them wins.
	RenewLeases(ctx context.Context, leases []Lease, until time.Time) ([]string, error)
	// ListRuns returns the agency's runs that match f, newest first.
	ListRuns(ctx context.Context, agencyID string, f RunFilter) ([]Run, error)
	// Schedule returns a schedule by id.
	Schedule(ctx context.Context, id string) (Schedule, error)
	// ListSchedules returns the agency's schedules that match f, oldest
	// first.
	ListSchedules(ctx context.Context, agencyID string, f ScheduleFilter) ([]Schedule, error)
	// ScheduleSpent sums the cost of the schedule's runs created since
	// since that hold or spent their credits (queued, running or
	// succeeded; a failed or canceled run gave them back).
	ScheduleSpent(ctx context.Context, scheduleID string, since time.Time) (Balance, error)
}

// Lease names a run a process executes: its id, and the attempt (the
// claim) it executes, 0 for a synchronous run.
type Lease struct {
	RunID   string
	Attempt int
}

// RunFilter selects runs for ListRuns; empty fields select all.
type RunFilter struct {
	ClientID, Action string
	// ScheduleID selects the runs a schedule started.
	ScheduleID string
	// Status is a run status (pending for running).
	Status string
	// Before is a run id: only runs older than it (the ids are UUIDv7,
	// which sort by creation).
	Before string
	Limit  int
}

// Tx is a transaction.
type Tx interface {
	outbox.Enqueuer
	// Balance returns an agency's balance.
	Balance(ctx context.Context, agencyID string) (Balance, error)
	// AddCredits adds delta (which may be negative) to the balance. If a
	// kind would go below zero it changes nothing and returns ok false
	// with the balance as it is.
	AddCredits(ctx context.Context, agencyID string, delta Balance) (b Balance, ok bool, err error)
	// InsertRun stores a new run; ErrDuplicate if its agency already has a
	// run with its idempotency key.
	InsertRun(ctx context.Context, r Run) error
	// StartRun stores a new pending or queued run and takes its cost from the
	// agency's balance, both or neither: if a kind of credit is short it
	// returns ok false with the balance as it is (and the caller rolls the
	// transaction back). ErrDuplicate as InsertRun.
	StartRun(ctx context.Context, r Run) (b Balance, ok bool, err error)
	// QueueRun is StartRun for a queued run, with its events (enqueued in
	// the same round trip where an adapter can), unless the agency has
	// maxQueued runs queued already: queued is then that count and ok
	// false (and the caller rolls the transaction back, as when credits
	// are short: an adapter may have stored the run before it knew).
	QueueRun(ctx context.Context, r Run, maxQueued int, events ...outbox.Event) (b Balance, queued int, ok bool, err error)
	// QueuedRuns counts the agency's queued runs, up to upTo: a count of
	// upTo means upTo or more.
	QueuedRuns(ctx context.Context, agencyID string, upTo int) (int, error)
	// ClaimRun takes the next queued run, fairly across agencies (the
	// agency with the fewest running runs first, then the oldest run),
	// and makes it pending: started at now, leased until lease, one more
	// attempt. Runs another transaction holds are skipped. ok is false
	// when no run is queued.
	ClaimRun(ctx context.Context, now, lease time.Time) (r Run, ok bool, err error)
	// RequeueRun puts a pending run back in the queue (its worker stopped
	// before it finished); false if it is not pending or another claim,
	// with a later attempt, has it: a worker cut late must not put back a
	// run another worker now runs.
	RequeueRun(ctx context.Context, id string, attempt int) (bool, error)
	// FinishRun records how a queued or pending run ended (status, code, data,
	// writes, provider cost and cache flag, finish time), gives refund back to the agency's balance and
	// enqueues event, all in one step; it returns the balance after. It
	// returns false, changing nothing, if the run has finished already or
	// a worker has claimed it since r was read (r.Attempts differs),
	// and an error wrapping ErrUnstorable if the data or the writes hold a
	// value it cannot keep (the transaction then fails as a whole).
	FinishRun(ctx context.Context, r Run, refund action.Cost, event outbox.Event) (ok bool, b Balance, err error)
	// RunByKey returns the agency's run with the idempotency key;
	// ErrNotFound if none.
	RunByKey(ctx context.Context, agencyID, key string) (Run, error)
	// ForgetKey removes a run's idempotency key (it expired), so the key
	// can be used again.
	ForgetKey(ctx context.Context, runID string) error
	// ExpiredRuns returns up to limit pending runs whose lease ended
	// before now, locked for this transaction; runs another transaction
	// holds are skipped.
	ExpiredRuns(ctx context.Context, now time.Time, limit int) ([]Run, error)
	// CountSchedules counts the agency's schedules.
	CountSchedules(ctx context.Context, agencyID string) (int, error)
	// InsertSchedule stores a new schedule.
	InsertSchedule(ctx context.Context, s Schedule) error
	// ScheduleForUpdate returns a schedule by id, locked for this
	// transaction; ErrNotFound if none.
	ScheduleForUpdate(ctx context.Context, id string) (Schedule, error)
	// PutSchedule stores s in place of the schedule with its id.
	PutSchedule(ctx context.Context, s Schedule) error
	// DeleteSchedule deletes a schedule.
	DeleteSchedule(ctx context.Context, id string) error
	// ClaimDueSchedules returns up to limit active schedules whose
	// next_run_at is at or before now and whose claim has lapsed, oldest
	// due first, claimed until until. Schedules another transaction
	// holds are skipped (FOR UPDATE SKIP LOCKED), so concurrent claims
	// take different schedules.
	ClaimDueSchedules(ctx context.Context, now, until time.Time, limit int) ([]Schedule, error)
}

// Clock returns the current time; store.Clock fixes its precision.
type Clock = store.Clock
