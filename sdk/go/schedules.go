package atrium

import (
	"context"
	"iter"
	"net/url"
	"strconv"
	"time"
)

// Schedule runs one action for one client at the slots of a timing; each
// slot starts an ordinary asynchronous run (docs/schedules.md).
type Schedule struct {
	// ID is "" in the answer of a dry run: nothing was stored.
	ID       string         `json:"id"`
	Action   string         `json:"action"`
	ClientID string         `json:"client_id"`
	Params   map[string]any `json:"params"`
	// Cron, or Every with At (and Weekday or Monthday): one timing.
	Cron     *string    `json:"cron"`
	Every    *string    `json:"every"`
	At       *string    `json:"at"`
	Weekday  *string    `json:"weekday"`
	Monthday *int       `json:"monthday"`
	Timezone string     `json:"timezone"`
	StartsAt *time.Time `json:"starts_at"`
	EndsAt   *time.Time `json:"ends_at"`
	// MaxCreditsPerMonth is nil when the schedule has no cap.
	MaxCreditsPerMonth *Credits `json:"max_credits_per_month"`
	PauseAfterFailures int      `json:"pause_after_failures"`
	Description        string   `json:"description"`
	// State is active, paused or ended.
	State string `json:"state"`
	// NextRunAt is nil while paused or ended; NextRuns the next five
	// slots.
	NextRunAt        *time.Time  `json:"next_run_at"`
	NextRuns         []time.Time `json:"next_runs"`
	EstimatedCredits struct {
		PerRun   Credits `json:"per_run"`
		PerMonth Credits `json:"per_month"`
	} `json:"estimated_credits"`
	// Failures counts the failed runs and skipped slots in a row.
	Failures  int            `json:"failures"`
	LastRunID *string        `json:"last_run_id"`
	Slots     []ScheduleSlot `json:"slots"`
	CreatedAt time.Time      `json:"created_at"`
	UpdatedAt time.Time      `json:"updated_at"`
}

// ScheduleSlot is what became of one slot: started, triggered, skipped,
// failed or missed, with the run or the reason.
type ScheduleSlot struct {
	Slot    time.Time `json:"slot"`
	Outcome string    `json:"outcome"`
	RunID   *string   `json:"run_id"`
	Reason  *string   `json:"reason"`
	At      time.Time `json:"at"`
}

// ScheduleInput is what Create sends (Action, ClientID, Timezone and a
// timing required) and what Update sends (only the fields to change; nil
// and empty fields are left out).
type ScheduleInput struct {
	Action   string         `json:"action,omitempty"`
	ClientID string         `json:"client_id,omitempty"`
	Params   map[string]any `json:"params,omitempty"`
	// Cron is a five-field expression in Timezone; or Every (day, week,
	// month) with At (HH:MM) and Weekday (monday...) or Monthday (1-28).
	Cron     *string    `json:"cron,omitempty"`
	Every    *string    `json:"every,omitempty"`
	At       *string    `json:"at,omitempty"`
	Weekday  *string    `json:"weekday,omitempty"`
	Monthday *int       `json:"monthday,omitempty"`
	Timezone string     `json:"timezone,omitempty"`
	StartsAt *time.Time `json:"starts_at,omitempty"`
	EndsAt   *time.Time `json:"ends_at,omitempty"`
	// MaxCreditsPerMonth caps the credits its runs take in a calendar
	// month of its time zone.
	MaxCreditsPerMonth *Credits `json:"max_credits_per_month,omitempty"`
	// PauseAfterFailures is 1 to 100; the server's default is 3.
	PauseAfterFailures *int    `json:"pause_after_failures,omitempty"`
	Description        *string `json:"description,omitempty"`
}

// ScheduleOption changes how Create sends a schedule.
type ScheduleOption func(*scheduleSettings)

type scheduleSettings struct{ dryRun bool }

// DryRun makes Create answer the schedule as it would be (its next runs
// and estimated credits) without creating anything: the answer has no
// ID.
func DryRun() ScheduleOption { return func(s *scheduleSettings) { s.dryRun = true } }

// ScheduleQuery filters List; empty fields select all.
type ScheduleQuery struct {
	ClientID, Action string
	// State is active, paused or ended.
	State string
}

// SchedulesService manages the agency's schedules.
type SchedulesService struct{ t *transport }

const schedulesPath = "/api/v1/schedules"

func (s *SchedulesService) one(ctx context.Context, r request) (*Schedule, error) {
	var out struct {
		Schedule Schedule `json:"schedule"`
	}
	if _, err := s.t.do(ctx, r, &out); err != nil {
		return nil, err
	}
	return &out.Schedule, nil
}

// Create creates a schedule, its parameters checked as POST /api/v1/data
// checks them; with DryRun it only previews it. A create is not sent again
// unless it cannot have reached the server: a retry could make two.
func (s *SchedulesService) Create(ctx context.Context, in ScheduleInput, opts ...ScheduleOption) (*Schedule, error) {
	var st scheduleSettings
	for _, o := range opts {
		o(&st)
	}
	r := request{method: "POST", path: schedulesPath, body: in}
	if st.dryRun {
		// A preview changes nothing: retried like a read.
		r.query, r.idempotent = url.Values{"dry_run": {"true"}}, true
	}
	return s.one(ctx, r)
}

// Get returns a schedule with its latest slots.
func (s *SchedulesService) Get(ctx context.Context, id string) (*Schedule, error) {
	return s.one(ctx, request{method: "GET", path: schedulesPath + path(id), idempotent: true})
}

// Update changes the fields given and validates the whole schedule again;
// the same patch twice is harmless, so it is retried like a read.
func (s *SchedulesService) Update(ctx context.Context, id string, in ScheduleInput) (*Schedule, error) {
	return s.one(ctx, request{method: "PATCH", path: schedulesPath + path(id), body: in, idempotent: true})
}

// Delete deletes a schedule; the runs it started stay.
func (s *SchedulesService) Delete(ctx context.Context, id string) error {
	_, err := s.t.do(ctx, request{method: "DELETE", path: schedulesPath + path(id), idempotent: true}, nil)
	return goneOnRetry(err)
}

// Pause stops the schedule's slots until Resume.
func (s *SchedulesService) Pause(ctx context.Context, id string) (*Schedule, error) {
	return s.one(ctx, request{method: "POST", path: schedulesPath + path(id, "pause"), body: map[string]any{}, idempotent: true})
}

// Resume makes a paused schedule active from its next slot after now and
// clears its failures.
func (s *SchedulesService) Resume(ctx context.Context, id string) (*Schedule, error) {
	return s.one(ctx, request{method: "POST", path: schedulesPath + path(id, "resume"), body: map[string]any{}, idempotent: true})
}

// Trigger queues one run of the schedule now, whatever its state, and
// returns it queued (Runs.Wait gives its outcome). Not sent again unless
// it cannot have reached the server: a retry could start a second run.
func (s *SchedulesService) Trigger(ctx context.Context, id string) (*Run, error) {
	var out struct {
		Run Run `json:"run"`
	}
	if _, err := s.t.do(ctx, request{method: "POST", path: schedulesPath + path(id, "trigger"), body: map[string]any{}}, &out); err != nil {
		return nil, err
	}
	return &out.Run, nil
}

// List walks the agency's schedules, oldest first.
func (s *SchedulesService) List(ctx context.Context, q ScheduleQuery) iter.Seq2[Schedule, error] {
	return cursorPages(ctx, func(ctx context.Context, cursor string) ([]Schedule, string, error) {
		v := url.Values{"limit": {strconv.Itoa(100)}}
		for k, val := range map[string]string{"client_id": q.ClientID, "action": q.Action, "state": q.State, "cursor": cursor} {
			if val != "" {
				v.Set(k, val)
			}
		}
		var out struct {
			Schedules  []Schedule `json:"schedules"`
			NextCursor string     `json:"next_cursor"`
		}
		_, err := s.t.do(ctx, request{method: "GET", path: schedulesPath, query: v, idempotent: true}, &out)
		return out.Schedules, out.NextCursor, err
	})
}
