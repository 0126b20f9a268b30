package app

import (
	"context"
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

// DeliveryStore keeps the deliveries. Like the endpoints, every read and
// write a tenant asks for is scoped by its tenant; claims are the
// deliverer's, across tenants.
type DeliveryStore interface {
	// AddDeliveries stores new pending deliveries; one whose endpoint
	// already has a delivery of the same event is skipped, so that an
	// event consumed twice is delivered once.
	AddDeliveries(ctx context.Context, ds []Delivery) error
	// Claim leases up to limit pending deliveries due at now (their next
	// attempt time passed and no lease held), oldest due first, until
	// now+lease: another deliverer skips them meanwhile, and gets them back
	// if the lease ends with no attempt recorded (a crash). No endpoint
	// gets more than perEndpoint leased at once, counting those already
	// leased (0: no bound), so that a slow endpoint's backlog cannot take
	// every worker.
	Claim(ctx context.Context, now time.Time, limit, perEndpoint int, lease time.Duration) ([]Delivery, error)
	// RecordAttempt appends a to delivery id, sets its status (and its next
	// attempt time when pending) and ends its lease.
	RecordAttempt(ctx context.Context, id string, a Attempt, status DeliveryStatus, next time.Time) error
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
}
