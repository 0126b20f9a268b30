package atrium

import (
	"context"
	"net/http"
	"strconv"
	"time"
)

// ActionField is a field an action takes.
type ActionField struct {
	Name          string   `json:"name"`
	Type          string   `json:"type"`
	Format        string   `json:"format,omitempty"`
	Description   string   `json:"description"`
	Required      bool     `json:"required"`
	AllowedValues []string `json:"allowed_values"`
	Minimum       *float64 `json:"minimum,omitempty"`
	Maximum       *float64 `json:"maximum,omitempty"`
	MaxLength     *int     `json:"max_length,omitempty"`
	Default       any      `json:"default"`
}

// Credits are an amount of AI and data credits.
type Credits struct {
	AI   int `json:"ai"`
	Data int `json:"data"`
}

// Action is an action the API offers, as discovery describes it.
type Action struct {
	Name        string        `json:"name"`
	Description string        `json:"description"`
	Fields      []ActionField `json:"fields"`
	Cost        Credits       `json:"cost"`
	// Writes is the dataset its record goes to ("" for none).
	Writes    string `json:"writes"`
	Refreshes bool   `json:"refreshes"`
	// Execution says how it can be called: sync, async or both;
	// TypicalSeconds how long a run usually takes, to pick a time-out or a
	// progress indicator.
	Execution      string  `json:"execution,omitempty"`
	TypicalSeconds float64 `json:"typical_seconds,omitempty"`
	// InputSchema is the JSON Schema (2020-12) of a request body for the
	// action: action, client_id and its own fields, with their types,
	// bounds, allowed values and defaults; clients build and check
	// requests from it.
	InputSchema map[string]any `json:"input_schema,omitempty"`
}

// ActionResult is the outcome of an action.
type ActionResult struct {
	Action   string `json:"action"`
	ClientID string `json:"client_id"`
	// Status is success or error; StatusCode the provider's or
	// generator's status (a failed run is still answered, and is not
	// charged).
	Status     string         `json:"status"`
	StatusCode int            `json:"status_code"`
	Data       map[string]any `json:"data"`
	// Remaining is the agency's balance after the run.
	Remaining Credits `json:"-"`
	// Replayed: the answer of an earlier request with the same
	// idempotency key, not a new run.
	Replayed bool `json:"-"`
	// IdempotencyKey is the key the request carried.
	IdempotencyKey string `json:"-"`
}

// Succeeded reports whether the run succeeded.
func (r *ActionResult) Succeeded() bool { return r.Status == "success" }

// ActionsService runs actions and reads the agency's credits.
type ActionsService struct{ t *transport }

// List describes every action: its fields, cost and record.
func (s *ActionsService) List(ctx context.Context) ([]Action, error) {
	var out struct {
		Actions []Action `json:"actions"`
	}
	_, err := s.t.do(ctx, request{method: "GET", path: "/api/v1/actions", idempotent: true}, &out)
	return out.Actions, err
}

// Credits returns the agency's balance.
func (s *ActionsService) Credits(ctx context.Context) (Credits, error) {
	var out struct {
		Balance Credits `json:"balance"`
	}
	_, err := s.t.do(ctx, request{method: "GET", path: "/api/v1/credits", idempotent: true}, &out)
	return out.Balance, err
}

// RunOption sets how an action is sent.
type RunOption func(*runSettings)

type runSettings struct {
	key  string
	wait time.Duration
}

func settings(opts []RunOption) runSettings {
	var rs runSettings
	for _, o := range opts {
		o(&rs)
	}
	if rs.key == "" {
		rs.key = newIdempotencyKey()
	}
	return rs
}

// WithIdempotencyKey sends the action with key instead of a fresh one: to
// send the same action again later (after a restart, say) and get the
// first run's answer rather than a second run.
func WithIdempotencyKey(key string) RunOption { return func(s *runSettings) { s.key = key } }

func actionBody(action, clientID string, fields map[string]any) map[string]any {
	body := make(map[string]any, len(fields)+2)
	for k, v := range fields {
		body[k] = v
	}
	body["action"], body["client_id"] = action, clientID
	return body
}

func fill(out *ActionResult, resp *response, key string) {
	out.IdempotencyKey = key
	out.Replayed = resp.header.Get("Idempotent-Replayed") == "true"
	out.Remaining.AI, _ = strconv.Atoi(resp.header.Get("Atrium-AI-Credits-Remaining"))
	out.Remaining.Data, _ = strconv.Atoi(resp.header.Get("Atrium-Data-Credits-Remaining"))
}

// Run runs action for client with its fields and returns its outcome. The
// request carries an Idempotency-Key, the same on every retry, so that
// however often it is sent the action runs (and is charged) once. For an
// action that may take longer than the caller waits, see Submit.
func (s *ActionsService) Run(ctx context.Context, action, clientID string, fields map[string]any, opts ...RunOption) (*ActionResult, error) {
	rs := settings(opts)
	var out ActionResult
	resp, err := s.t.do(ctx, request{method: "POST", path: "/api/v1/data", body: actionBody(action, clientID, fields),
		header: http.Header{"Idempotency-Key": {rs.key}}, idempotent: true}, &out)
	if err != nil {
		return nil, err
	}
	fill(&out, resp, rs.key)
	return &out, nil
}
