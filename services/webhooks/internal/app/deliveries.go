package app

import (
	"context"
	"math"
	"time"
)

// DeliveryStatus is where a delivery stands.
type DeliveryStatus string

const (
	// Pending: not yet succeeded, with an attempt to come at NextAttemptAt.
	Pending DeliveryStatus = "pending"
	// Succeeded: an attempt was answered with a 2xx.
	Succeeded DeliveryStatus = "succeeded"
	// Failed: the last attempt of the schedule failed, or the endpoint was
	// disabled; POST …/retry or …/recover sends it again.
	Failed DeliveryStatus = "failed"
)

// Delivery is one event on its way to one endpoint.
type Delivery struct {
	ID         string
	EndpointID string
	Tenant     Tenant
	// EventID is the webhook-id of every attempt: the same on each retry
	// and replay, so that receivers deduplicate.
	EventID   string
	EventType string
	// Body is the Standard Webhooks body, fixed when the event was fanned
	// out: a replay sends the same bytes.
	Body          []byte
	Status        DeliveryStatus
	Attempts      []Attempt
	NextAttemptAt time.Time // zero unless pending
	CreatedAt     time.Time
	// TraceParent and TraceState are the W3C trace context of the write
	// that caused the event (as the stream carried it): each attempt's
	// span links to it.
	TraceParent, TraceState string
}

// Attempt is one try of a delivery.
type Attempt struct {
	At         time.Time
	StatusCode int // 0 when no answer came
	Duration   time.Duration
	// ResponseBody is the first KiB of the answer's body.
	ResponseBody string
	// Error says why no usable answer came (a time-out, a refused
	// address, a redirect not followed).
	Error string
}

// AttemptRecord is an attempt to record: of delivery ID, leaving it in
// Status (due again at Next when pending).
type AttemptRecord struct {
	ID      string
	Attempt Attempt
	Status  DeliveryStatus
	Next    time.Time
}

// MaxResponseBody is how much of an answer's body an attempt keeps.
const MaxResponseBody = 1024

// DeliveryPage is a page of an endpoint's deliveries, newest first.
type DeliveryPage struct {
	Deliveries []Delivery
	// Next is the cursor of the page after, "" on the last.
	Next string
}

// DeliveryFilter selects an endpoint's deliveries.
type DeliveryFilter struct {
	Status DeliveryStatus // "" for all
	Limit  int
	// After is a cursor from DeliveryPage.Next.
	After string
}

// Backlog is what the deliverer has still to send, for its metrics.
type Backlog struct {
	// Pending counts the pending deliveries; Due those whose next attempt
	// time has passed (and so wait for a worker).
	Pending, Due int
	// OldestPending is when the oldest pending delivery was created, and
	// OldestDue the next attempt time of the longest-waiting due one; zero
	// when there is none.
	OldestPending, OldestDue time.Time
}

// Bound limits how many deliveries of one endpoint a deliverer holds at
// once. It is the deliverer's own: replicas each hold up to PerEndpoint of
// an endpoint (so the deliverers need no shared count, which a queue table
// updated a thousand times a second would make slow to read).
type Bound struct {
	// PerEndpoint is the most one endpoint may have held (0: no bound).
	PerEndpoint int
	// Held is how many of each endpoint's deliveries the deliverer holds
	// now (claimed, not yet attempted or recorded).
	Held map[string]int
}

// Allows reports how many more of endpoint's deliveries the bound allows.
func (b Bound) Allows(endpoint string) int {
	if b.PerEndpoint <= 0 {
		return math.MaxInt32
	}
	return max(b.PerEndpoint-b.Held[endpoint], 0)
}

// Full lists the endpoints that may be given no more.
func (b Bound) Full() []string {
	var out []string
	for e := range b.Held {
		if b.Allows(e) == 0 {
			out = append(out, e)
		}
	}
	return out
}

// Due is a claimed delivery with its endpoint as the claim found it: an
// attempt needs both, and the claim reads them together.
type Due struct {
	Delivery
	Endpoint Endpoint
}

// DeliveryStore keeps the deliveries. Like the endpoints, every read and
// write a tenant asks for is scoped by its tenant; claims are the
// deliverer's, across tenants.
type DeliveryStore interface {
	// AddDeliveries stores new pending deliveries; one whose endpoint
	// already has a delivery of the same event is skipped, so that an
	// event consumed twice is delivered once. One whose endpoint is held
	// back (Hold) is due when the hold ends, not before.
	AddDeliveries(ctx context.Context, ds []Delivery) error
	// Claim leases up to limit pending deliveries due at now (their next
	// attempt time passed, no lease held, their endpoint not held back:
	// Hold), oldest due first whatever their endpoint and whether first
	// attempts or retries, until now+lease: another deliverer skips them
	// meanwhile, and gets them back if the lease ends with no attempt
	// recorded (a crash). Within bound (the deliverer's own count of what
	// it holds), so that a slow endpoint's backlog cannot take every
	// worker. Each comes with its endpoint.
	Claim(ctx context.Context, now time.Time, limit int, bound Bound, lease time.Duration) ([]Due, error)
	// RecordAttempts records attempts, in one write: each is appended to
	// its delivery, whose status (and next attempt time when pending) it
	// sets and whose lease it ends. A delivery that is gone (its endpoint
	// was deleted meanwhile) is skipped.
	RecordAttempts(ctx context.Context, rs []AttemptRecord) error
	// Delivery returns the tenant's endpoint's delivery id.
	Delivery(ctx context.Context, t Tenant, endpointID, id string) (Delivery, error)
	// Deliveries returns a page of the tenant's endpoint's deliveries.
	Deliveries(ctx context.Context, t Tenant, endpointID string, f DeliveryFilter) (DeliveryPage, error)
	// Resend makes delivery id pending and due at now (a manual retry),
	// whatever its status.
	Resend(ctx context.Context, t Tenant, endpointID, id string, now time.Time) (Delivery, error)
	// Recover makes every failed delivery of the endpoint created in
	// [since, until) pending and due at now, and returns how many.
	Recover(ctx context.Context, t Tenant, endpointID string, since, until, now time.Time) (int, error)
	// Hold holds the endpoint back until until: no delivery of it is
	// claimed before then, by any deliverer sharing the store, whether it
	// was due at now, comes due meanwhile (a retry) or is added meanwhile
	// (a new event: added due at until). A hold never shortens a longer
	// one already there. Its pending deliveries due before until and not
	// leased are made due at until (they leave the front of the queue the
	// claims read); it returns how many. While an endpoint does not answer
	// (or asked to be left alone), its deliveries wait rather than take
	// its workers again for another time-out.
	Hold(ctx context.Context, endpointID string, now, until time.Time) (int, error)
	// Release ends the endpoint's hold at now (it answered again: a
	// Retry-After of hours is not waited out once a retry its owner asked
	// for succeeds): its deliveries waiting for the hold's end are due at
	// now; it returns how many. An endpoint not held is left as it is.
	Release(ctx context.Context, endpointID string, now time.Time) (int, error)
	// Backlog measures the pending deliveries at now.
	Backlog(ctx context.Context, now time.Time) (Backlog, error)
	// Prune removes the succeeded and failed deliveries created before
	// before (the delivery log's retention) and returns how many.
	Prune(ctx context.Context, before time.Time) (int, error)
}
