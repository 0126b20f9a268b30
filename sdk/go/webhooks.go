package atrium

import (
	"context"
	"iter"
	"net/url"
	"strconv"
	"time"
)

// Webhook is an endpoint registered to receive the tenant's events.
type Webhook struct {
	ID          string   `json:"id"`
	URL         string   `json:"url"`
	Events      []string `json:"events"`
	Description string   `json:"description"`
	Enabled     bool     `json:"enabled"`
	// Owner is site or agency: whose events it receives.
	Owner     string    `json:"owner"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
	// Secret (whsec_...) is set only in the answers of Create and
	// RotateSecret.
	Secret                  string     `json:"secret,omitempty"`
	DisabledReason          *string    `json:"disabled_reason"`
	FailingSince            *time.Time `json:"failing_since"`
	PreviousSecretExpiresAt *time.Time `json:"previous_secret_expires_at"`
}

// NewWebhook registers an endpoint.
type NewWebhook struct {
	URL         string   `json:"url"`
	Events      []string `json:"events"`
	Description string   `json:"description,omitempty"`
	// Enabled defaults to true.
	Enabled *bool `json:"enabled,omitempty"`
}

// WebhookPatch changes an endpoint's fields (nil: unchanged).
type WebhookPatch struct {
	URL         *string  `json:"url,omitempty"`
	Events      []string `json:"events,omitempty"`
	Description *string  `json:"description,omitempty"`
	Enabled     *bool    `json:"enabled,omitempty"`
}

// Attempt is one try of a delivery.
type Attempt struct {
	At           time.Time `json:"at"`
	StatusCode   *int      `json:"status_code"`
	DurationMS   int       `json:"duration_ms"`
	ResponseBody string    `json:"response_body"`
	Error        *string   `json:"error"`
}

// Delivery is one event on its way to one endpoint.
type Delivery struct {
	ID            string         `json:"id"`
	EventID       string         `json:"event_id"`
	EventType     string         `json:"event_type"`
	Status        string         `json:"status"`
	Attempts      []Attempt      `json:"attempts"`
	NextAttemptAt *time.Time     `json:"next_attempt_at"`
	CreatedAt     time.Time      `json:"created_at"`
	Payload       map[string]any `json:"payload"`
}

// EventType is a type of event an endpoint can subscribe to.
type EventType struct {
	Type        string         `json:"type"`
	Description string         `json:"description"`
	Owner       string         `json:"owner"`
	Schema      map[string]any `json:"schema"`
}

// WebhooksService manages the tenant's webhook endpoints and their
// delivery logs.
type WebhooksService struct{ t *transport }

const webhooksPath = "/api/v1/webhooks"

func (s *WebhooksService) one(ctx context.Context, r request) (*Webhook, error) {
	var out struct {
		Webhook Webhook `json:"webhook"`
	}
	if _, err := s.t.do(ctx, r, &out); err != nil {
		return nil, err
	}
	return &out.Webhook, nil
}

// Create registers an endpoint; the answer holds its secret, shown only
// now.
func (s *WebhooksService) Create(ctx context.Context, w NewWebhook) (*Webhook, error) {
	return s.one(ctx, request{method: "POST", path: webhooksPath, body: w})
}

// List returns the tenant's endpoints, newest first.
func (s *WebhooksService) List(ctx context.Context) ([]Webhook, error) {
	var out struct {
		Webhooks []Webhook `json:"webhooks"`
	}
	_, err := s.t.do(ctx, request{method: "GET", path: webhooksPath, idempotent: true}, &out)
	return out.Webhooks, err
}

// Get returns one endpoint.
func (s *WebhooksService) Get(ctx context.Context, id string) (*Webhook, error) {
	return s.one(ctx, request{method: "GET", path: webhooksPath + path(id), idempotent: true})
}

// Update changes an endpoint; setting the same values twice is harmless,
// so it is retried like a read.
func (s *WebhooksService) Update(ctx context.Context, id string, p WebhookPatch) (*Webhook, error) {
	return s.one(ctx, request{method: "PATCH", path: webhooksPath + path(id), body: p, idempotent: true})
}

// Delete deletes an endpoint and its delivery log.
func (s *WebhooksService) Delete(ctx context.Context, id string) error {
	_, err := s.t.do(ctx, request{method: "DELETE", path: webhooksPath + path(id), idempotent: true}, nil)
	return goneOnRetry(err)
}

// RotateSecret gives the endpoint a new secret; the previous one keeps
// signing beside it for previousValidity (at most a day).
func (s *WebhooksService) RotateSecret(ctx context.Context, id string, previousValidity time.Duration) (*Webhook, error) {
	secs := int(previousValidity / time.Second)
	return s.one(ctx, request{method: "POST", path: webhooksPath + path(id, "rotate-secret"), body: map[string]int{"previous_expires_in_seconds": secs}})
}

func (s *WebhooksService) delivery(ctx context.Context, r request) (*Delivery, error) {
	var out struct {
		Delivery Delivery `json:"delivery"`
	}
	if _, err := s.t.do(ctx, r, &out); err != nil {
		return nil, err
	}
	return &out.Delivery, nil
}

// Test sends a webhook.test event to the endpoint at once and returns its
// delivery after that first attempt.
func (s *WebhooksService) Test(ctx context.Context, id string) (*Delivery, error) {
	return s.delivery(ctx, request{method: "POST", path: webhooksPath + path(id, "test")})
}

// DeliveryQuery selects deliveries of an endpoint; zero values are the
// API's defaults.
type DeliveryQuery struct {
	// Status is pending, succeeded or failed ("": all).
	Status string
	Limit  int
	Cursor string
}

// Deliveries returns a page of the endpoint's delivery log, newest first,
// and the next page's cursor ("" on the last).
func (s *WebhooksService) Deliveries(ctx context.Context, id string, q DeliveryQuery) ([]Delivery, string, error) {
	v := url.Values{}
	if q.Status != "" {
		v.Set("status", q.Status)
	}
	if q.Limit > 0 {
		v.Set("limit", strconv.Itoa(q.Limit))
	}
	if q.Cursor != "" {
		v.Set("cursor", q.Cursor)
	}
	var out struct {
		Deliveries []Delivery `json:"deliveries"`
		NextCursor string     `json:"next_cursor"`
	}
	_, err := s.t.do(ctx, request{method: "GET", path: webhooksPath + path(id, "deliveries"), query: v, idempotent: true}, &out)
	return out.Deliveries, out.NextCursor, err
}

// AllDeliveries walks the endpoint's delivery log, newest first.
func (s *WebhooksService) AllDeliveries(ctx context.Context, id, status string) iter.Seq2[Delivery, error] {
	return cursorPages(ctx, func(ctx context.Context, cursor string) ([]Delivery, string, error) {
		return s.Deliveries(ctx, id, DeliveryQuery{Status: status, Limit: 100, Cursor: cursor})
	})
}

// Retry sends a delivery again now (the same webhook-id and body) and
// returns it after the attempt.
func (s *WebhooksService) Retry(ctx context.Context, id, deliveryID string) (*Delivery, error) {
	return s.delivery(ctx, request{method: "POST", path: webhooksPath + path(id, "deliveries", deliveryID, "retry")})
}

// Recover sends again every failed delivery of the endpoint created since
// (and before until, when not zero), and returns how many.
func (s *WebhooksService) Recover(ctx context.Context, id string, since, until time.Time) (int, error) {
	body := map[string]string{"since": since.UTC().Format(time.RFC3339Nano)}
	if !until.IsZero() {
		body["until"] = until.UTC().Format(time.RFC3339Nano)
	}
	var out struct {
		Recovered int `json:"recovered"`
	}
	_, err := s.t.do(ctx, request{method: "POST", path: webhooksPath + path(id, "recover"), body: body, idempotent: true}, &out)
	return out.Recovered, err
}

// EventTypes lists every event type, with the JSON Schema of its data.
func (s *WebhooksService) EventTypes(ctx context.Context) ([]EventType, error) {
	var out struct {
		EventTypes []EventType `json:"event_types"`
	}
	_, err := s.t.do(ctx, request{method: "GET", path: "/api/v1/event-types", idempotent: true}, &out)
	return out.EventTypes, err
}
