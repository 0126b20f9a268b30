package app

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/atrium-hq/atrium/platform/apperr"
	"github.com/atrium-hq/atrium/platform/audit"
	"github.com/atrium-hq/atrium/platform/store"
	"github.com/atrium-hq/atrium/platform/value"
	"github.com/atrium-hq/atrium/services/actions/internal/app/action"
	"github.com/atrium-hq/atrium/services/actions/internal/app/catalog"
	"github.com/atrium-hq/atrium/services/actions/internal/app/timing"
)

// Schedules: an action run for a client at the slots of a timing. The
// use cases are here; the loop that starts the slots' runs is
// scheduler.go. A schedule is the actions service's because its slots
// start its runs and are judged against its credits, in its store.

// Schedule states.
const (
	ScheduleActive = "active"
	SchedulePaused = "paused"
	// ScheduleEnded: no slot remains before its ends_at.
	ScheduleEnded = "ended"
)

// Slot outcomes, as GET shows them.
const (
	SlotStarted   = "started"
	SlotSkipped   = "skipped"
	SlotMissed    = "missed"
	SlotFailed    = "failed"
	SlotTriggered = "triggered"
)

// Schedule is a stored schedule.
type Schedule struct {
	ID, AgencyID, ClientID, Action string
	// Params are the action's fields, as POST /api/v1/data takes them.
	Params map[string]any
	Timing timing.Spec
	// MaxPerMonth caps the credits its runs take in a calendar month of
	// its time zone; nil for no cap.
	MaxPerMonth *Balance
	PauseAfter  int
	Description string
	State       string
	// NextRunAt is the next slot not yet handled; zero unless active.
	NextRunAt time.Time
	// Failures counts consecutive failed runs and skipped slots.
	Failures  int
	LastRunID string
	// Slots are the latest slots' outcomes, newest first, at most
	// SlotHistory.
	Slots []Slot
	// ClaimedUntil is when a loop's claim on the schedule lapses: another
	// replica's loop leaves it alone until then.
	ClaimedUntil         time.Time
	CreatedAt, UpdatedAt time.Time
}

// Slot is what became of one slot.
type Slot struct {
	Slot    time.Time `json:"slot"`
	Outcome string    `json:"outcome"`
	RunID   string    `json:"run_id,omitempty"`
	Reason  string    `json:"reason,omitempty"`
	At      time.Time `json:"at"`
}

// SlotHistory is how many slots a schedule keeps.
const SlotHistory = 20

// addSlot records sl as the newest of s's slots.
func (s *Schedule) addSlot(sl Slot) {
	s.Slots = append([]Slot{sl}, s.Slots...)
	if len(s.Slots) > SlotHistory {
		s.Slots = s.Slots[:SlotHistory]
	}
}

// ScheduleFilter selects schedules for ListSchedules; empty fields select
// all.
type ScheduleFilter struct {
	ClientID, Action, State string
	// After is a schedule id: only schedules created after it.
	After string
	Limit int
}

// ScheduleInput is what a caller writes; nil fields are absent (on
// update: unchanged).
type ScheduleInput struct {
	Action, ClientID         *string
	Params                   map[string]any
	Cron, Every, At, Weekday *string
	Monthday                 *int
	Timezone                 *string
	StartsAt, EndsAt         *time.Time
	MaxPerMonth              *Balance
	PauseAfter               *int
	Description              *string
}

// Schedule limits and defaults.
const (
	DefaultPauseAfter   = 3
	MaxPauseAfter       = 100
	MaxScheduleDesc     = 500
	SchedulePageDefault = 20
	SchedulePageMax     = 100
	DefaultMaxSchedules = 1000
	DefaultMinInterval  = time.Hour
	DefaultCatchup      = time.Hour
	DefaultScheduleTick = 5 * time.Second
	nextRunsShown       = 5
)

// ScheduleView is a schedule as the API shows it: with its next slots
// and what it is expected to spend.
type ScheduleView struct {
	Schedule
	NextRuns         []time.Time
	PerRun, PerMonth Balance
}

// view computes what a schedule shows.
func (a *Actions) view(s Schedule) ScheduleView {
	v := ScheduleView{Schedule: s}
	act, ok := catalog.Lookup(s.Action)
	if ok {
		v.PerRun = Balance{AI: act.Cost.AI, Data: act.Cost.Data}
	}
	p, err := timing.Parse(s.Timing, 0, a.clock.Now())
	if err != nil || s.State != ScheduleActive {
		return v
	}
	after := a.clock.Now()
	if !s.NextRunAt.IsZero() {
		after = s.NextRunAt.Add(-time.Nanosecond)
	}
	v.NextRuns = p.NextN(after, nextRunsShown)
	n := p.PerMonth(a.clock.Now())
	v.PerMonth = Balance{AI: v.PerRun.AI * n, Data: v.PerRun.Data * n}
	return v
}

// scheduleBody is the request body a schedule's run is: its params with
// its action and client.
func scheduleBody(s Schedule) map[string]any {
	body := maps.Clone(s.Params)
	if body == nil {
		body = map[string]any{}
	}
	body["action"], body["client_id"] = s.Action, s.ClientID
	return body
}

// apply merges in into s and validates the result as a whole: the
// timing, the limits and the action's parameters, with the same rules
// and messages as POST /api/v1/data.
func (a *Actions) applyInput(ctx context.Context, s *Schedule, in ScheduleInput, creating bool) (*timing.Plan, error) {
	set := func(dst *string, src *string) {
		if src != nil {
			*dst = *src
		}
	}
	if creating {
		if in.Action == nil || *in.Action == "" {
			return nil, apperr.Invalid("action is required: an action GET /api/v1/actions lists")
		}
		if in.ClientID == nil || *in.ClientID == "" {
			return nil, apperr.Invalid("client_id is required: the id of a client linked to the agency")
		}
	} else if in.Action != nil || in.ClientID != nil {
		return nil, apperr.Invalid("action and client_id cannot change; create another schedule")
	}
	set(&s.Action, in.Action)
	set(&s.ClientID, in.ClientID)
	if in.Params != nil {
		for _, k := range []string{"action", "client_id"} {
			if _, ok := in.Params[k]; ok {
				return nil, apperr.Invalid("params holds %s: give it at the top level of the schedule; params are the action's own fields", k)
			}
		}
		s.Params = in.Params
	}
	// Giving one of cron or every replaces the other.
	if in.Cron != nil {
		s.Timing.Every, s.Timing.At, s.Timing.Weekday, s.Timing.Monthday = "", "", "", 0
	}
	if in.Every != nil {
		s.Timing.Cron = ""
	}
	set(&s.Timing.Cron, in.Cron)
	set(&s.Timing.Every, in.Every)
	set(&s.Timing.At, in.At)
	set(&s.Timing.Weekday, in.Weekday)
	if in.Monthday != nil {
		s.Timing.Monthday = *in.Monthday
	}
	set(&s.Timing.Timezone, in.Timezone)
	if in.StartsAt != nil {
		s.Timing.StartsAt = in.StartsAt.UTC()
	}
	if in.EndsAt != nil {
		s.Timing.EndsAt = in.EndsAt.UTC()
	}
	if in.MaxPerMonth != nil {
		if in.MaxPerMonth.AI < 0 || in.MaxPerMonth.Data < 0 {
			return nil, apperr.Invalid("max_credits_per_month.ai and .data must be 0 or more; got %d and %d", in.MaxPerMonth.AI, in.MaxPerMonth.Data)
		}
		m := *in.MaxPerMonth
		s.MaxPerMonth = &m
	}
	if in.PauseAfter != nil {
		if *in.PauseAfter < 1 || *in.PauseAfter > MaxPauseAfter {
			return nil, apperr.Invalid("pause_after_failures must be from 1 to %d (default %d); got %d", MaxPauseAfter, DefaultPauseAfter, *in.PauseAfter)
		}
		s.PauseAfter = *in.PauseAfter
	}
	if in.Description != nil {
		if n := len([]rune(*in.Description)); n > MaxScheduleDesc {
			return nil, apperr.Invalid("description must be at most %d characters; got %d", MaxScheduleDesc, n)
		}
		s.Description = *in.Description
	}
	if _, ok := catalog.Lookup(s.Action); !ok {
		return nil, apperr.Invalid("action %q is not an action; GET /api/v1/actions lists them", s.Action)
	}
	// The action's parameters and the client's link, exactly as a run
	// checks them now: a bad schedule is a 400 today, not a failure at
	// every slot.
	if _, _, err := a.admit(ctx, s.AgencyID, scheduleBody(*s), ""); err != nil {
		return nil, err
	}
	plan, err := timing.Parse(s.Timing, a.cfg.ScheduleMinInterval, a.clock.Now())
	if err != nil {
		return nil, err
	}
	return plan, nil
}

// CreateSchedule creates one of the agency's schedules, or with dryRun
// answers what it would be, storing nothing.
func (a *Actions) CreateSchedule(ctx context.Context, agencyID string, in ScheduleInput, dryRun bool) (ScheduleView, error) {
	now := a.clock.Now()
	s := Schedule{AgencyID: agencyID, PauseAfter: DefaultPauseAfter, State: ScheduleActive, CreatedAt: now, UpdatedAt: now}
	plan, err := a.applyInput(ctx, &s, in, true)
	if err != nil {
		return ScheduleView{}, err
	}
	next, ok := plan.Next(now)
	if !ok {
		return ScheduleView{}, apperr.Invalid("the schedule has no slot left: its ends_at (%s) is before its next time", s.Timing.EndsAt.Format(time.RFC3339))
	}
	s.NextRunAt = next
	if dryRun {
		// No id: one that was never stored would read as a schedule a
		// caller could get, change or delete.
		return a.view(s), nil
	}
	s.ID = store.NewID()
	err = a.store.InTx(ctx, func(tx Tx) error {
		n, err := tx.CountSchedules(ctx, agencyID)
		if err != nil {
			return err
		}
		if n >= a.cfg.MaxSchedules {
			return apperr.Invalid("the agency has %d schedules, the most it may have (--max-schedules); delete one first", n)
		}
		if err := tx.InsertSchedule(ctx, s); err != nil {
			return err
		}
		return audit.Record(ctx, tx, auditService, scheduleChange(s, "schedule.created", in.fields()), now)
	})
	if err != nil {
		return ScheduleView{}, err
	}
	return a.view(s), nil
}

// GetSchedule returns one of the agency's schedules; another agency's is
// not found.
func (a *Actions) GetSchedule(ctx context.Context, agencyID, id string) (ScheduleView, error) {
	s, err := a.schedule(ctx, agencyID, id)
	if err != nil {
		return ScheduleView{}, err
	}
	return a.view(s), nil
}

func (a *Actions) schedule(ctx context.Context, agencyID, id string) (Schedule, error) {
	id, err := value.PathID("schedule", id)
	if err != nil {
		return Schedule{}, err
	}
	s, err := a.store.Schedule(ctx, id)
	if errors.Is(err, ErrNotFound) || (err == nil && s.AgencyID != agencyID) {
		return Schedule{}, value.NotFound("schedule", id)
	}
	return s, err
}

// SchedulePage is a page of schedules, oldest first.
type SchedulePage struct {
	Schedules []ScheduleView
	Next      string
}

var scheduleStates = map[string]bool{ScheduleActive: true, SchedulePaused: true, ScheduleEnded: true}

// ListSchedules returns the agency's schedules that match, limit at a
// time after the cursor's.
func (a *Actions) ListSchedules(ctx context.Context, agencyID, clientID, actionName, state string, limit *int32, after string) (SchedulePage, error) {
	f := ScheduleFilter{Action: actionName, State: state, After: after, Limit: SchedulePageDefault}
	if state != "" && !scheduleStates[state] {
		return SchedulePage{}, apperr.Invalid("state must be one of active, paused, ended; got %q", state)
	}
	if clientID != "" {
		id, err := value.BodyID("client_id", clientID)
		if err != nil {
			return SchedulePage{}, err
		}
		f.ClientID = id
	}
	if actionName != "" {
		if _, ok := catalog.Lookup(actionName); !ok {
			return SchedulePage{}, apperr.Invalid("action %q is not an action; GET /api/v1/actions lists them", actionName)
		}
	}
	if after != "" {
		id, err := value.BodyID("cursor", after)
		if err != nil {
			return SchedulePage{}, apperr.Invalid("cursor must be the next_cursor of an earlier page; got %q", after)
		}
		f.After = id
	}
	if limit != nil {
		if *limit < 1 || *limit > SchedulePageMax {
			return SchedulePage{}, apperr.Invalid("limit must be an integer from 1 to %d (default %d); got %d", SchedulePageMax, SchedulePageDefault, *limit)
		}
		f.Limit = int(*limit)
	}
	f.Limit++
	list, err := a.store.ListSchedules(ctx, agencyID, f)
	if err != nil {
		return SchedulePage{}, err
	}
	var page SchedulePage
	if len(list) == f.Limit {
		list = list[:f.Limit-1]
		page.Next = list[len(list)-1].ID
	}
	for _, s := range list {
		page.Schedules = append(page.Schedules, a.view(s))
	}
	return page, nil
}

// changeSchedule reads the agency's schedule in a transaction, lets fn
// change it, and stores it with the audit trail's record of act (fields
// the names the caller set), unless fn says it changed nothing.
func (a *Actions) changeSchedule(ctx context.Context, agencyID, id, act string, fields []string, fn func(tx Tx, s *Schedule) (bool, error)) (ScheduleView, error) {
	id, err := value.PathID("schedule", id)
	if err != nil {
		return ScheduleView{}, err
	}
	var out Schedule
	err = a.store.InTx(ctx, func(tx Tx) error {
		s, err := tx.ScheduleForUpdate(ctx, id)
		if errors.Is(err, ErrNotFound) || (err == nil && s.AgencyID != agencyID) {
			return value.NotFound("schedule", id)
		}
		if err != nil {
			return err
		}
		changed, err := fn(tx, &s)
		if err != nil || !changed {
			out = s
			return err
		}
		s.UpdatedAt = a.clock.Now()
		out = s
		if err := tx.PutSchedule(ctx, s); err != nil {
			return err
		}
		return audit.Record(ctx, tx, auditService, scheduleChange(s, act, fields), s.UpdatedAt)
	})
	if err != nil {
		return ScheduleView{}, err
	}
	return a.view(out), nil
}

// UpdateSchedule changes the fields in gives; the schedule is validated
// again as a whole. A new timing takes effect from its next slot after
// now.
func (a *Actions) UpdateSchedule(ctx context.Context, agencyID, id string, in ScheduleInput) (ScheduleView, error) {
	// The checks that ask the CRM run before the transaction.
	cur, err := a.schedule(ctx, agencyID, id)
	if err != nil {
		return ScheduleView{}, err
	}
	if _, err := a.applyInput(ctx, &cur, in, false); err != nil {
		return ScheduleView{}, err
	}
	return a.changeSchedule(ctx, agencyID, id, "schedule.updated", in.fields(), func(_ Tx, s *Schedule) (bool, error) {
		plan, err := a.applyInput(ctx, s, in, false)
		if err != nil {
			return false, err
		}
		if s.State != SchedulePaused {
			a.reschedule(s, plan)
		}
		return true, nil
	})
}

// reschedule makes s active from its next slot after now, or ended.
func (a *Actions) reschedule(s *Schedule, plan *timing.Plan) {
	if next, ok := plan.Next(a.clock.Now()); ok {
		s.State, s.NextRunAt = ScheduleActive, next
		return
	}
	s.State, s.NextRunAt = ScheduleEnded, time.Time{}
}

// DeleteSchedule deletes one of the agency's schedules; its runs stay.
func (a *Actions) DeleteSchedule(ctx context.Context, agencyID, id string) error {
	id, err := value.PathID("schedule", id)
	if err != nil {
		return err
	}
	return a.store.InTx(ctx, func(tx Tx) error {
		s, err := tx.ScheduleForUpdate(ctx, id)
		if errors.Is(err, ErrNotFound) || (err == nil && s.AgencyID != agencyID) {
			return value.NotFound("schedule", id)
		}
		if err != nil {
			return err
		}
		if err := tx.DeleteSchedule(ctx, id); err != nil {
			return err
		}
		return audit.Record(ctx, tx, auditService, scheduleChange(s, "schedule.deleted", nil), a.clock.Now())
	})
}

// PauseSchedule stops a schedule's slots; pausing a paused schedule
// changes nothing.
func (a *Actions) PauseSchedule(ctx context.Context, agencyID, id string) (ScheduleView, error) {
	return a.changeSchedule(ctx, agencyID, id, "schedule.paused", nil, func(_ Tx, s *Schedule) (bool, error) {
		if s.State == ScheduleEnded {
			return false, apperr.Conflict("schedule %s has ended (no slot remains before its ends_at); change ends_at to run it again", s.ID)
		}
		if s.State == SchedulePaused {
			return false, nil
		}
		s.State, s.NextRunAt = SchedulePaused, time.Time{}
		return true, nil
	})
}

// ResumeSchedule makes a paused schedule active from its next slot after
// now (the slots it missed while paused are not run) and clears its
// failures.
func (a *Actions) ResumeSchedule(ctx context.Context, agencyID, id string) (ScheduleView, error) {
	return a.changeSchedule(ctx, agencyID, id, "schedule.resumed", nil, func(_ Tx, s *Schedule) (bool, error) {
		plan, err := timing.Parse(s.Timing, 0, a.clock.Now())
		if err != nil {
			return false, err
		}
		if s.State == ScheduleActive {
			return false, nil
		}
		s.Failures = 0
		a.reschedule(s, plan)
		return true, nil
	})
}

// TriggerSchedule starts one run of the schedule now, queued, whatever
// its state; its slots are unchanged.
func (a *Actions) TriggerSchedule(ctx context.Context, agencyID, id string) (Outcome, error) {
	s, err := a.schedule(ctx, agencyID, id)
	if err != nil {
		return Outcome{}, err
	}
	now := a.clock.Now()
	out, err := a.submitScheduled(ctx, s, "schedule:"+s.ID+":trigger:"+store.NewID())
	if err != nil {
		return out, err
	}
	_, err = a.changeSchedule(ctx, agencyID, id, "schedule.triggered", nil, func(_ Tx, s *Schedule) (bool, error) {
		s.LastRunID = out.Run.ID
		s.addSlot(Slot{Slot: now, Outcome: SlotTriggered, RunID: out.Run.ID, At: now})
		return true, nil
	})
	return out, err
}

// submitScheduled queues a run of s, as Submit does a caller's, with the
// schedule's id and key.
func (a *Actions) submitScheduled(ctx context.Context, s Schedule, key string) (Outcome, error) {
	body := scheduleBody(s)
	req, client, err := a.admit(ctx, s.AgencyID, body, key)
	if err != nil {
		return Outcome{}, err
	}
	run := a.newRun(s.AgencyID, client, req.Action, body, key)
	run.Status, run.Async, run.Input, run.ScheduleID = StatusQueued, true, body, s.ID
	replay, bal, err := a.reserve(ctx, run, req.Action, requestFields(body))
	if err != nil {
		return Outcome{Balance: bal}, err
	}
	if replay != nil {
		return Outcome{Run: *replay, Balance: bal, Replayed: true}, nil
	}
	a.noteState(run, run.CreatedAt)
	select {
	case a.queue.wake <- struct{}{}:
	default:
	}
	return Outcome{Run: run, Balance: bal}, nil
}

// scheduleChange is the audit trail's record of a write to schedule s.
func scheduleChange(s Schedule, act string, fields []string) audit.Change {
	return audit.Change{Action: act, ResourceType: "schedule", ResourceID: s.ID, Fields: fields, AgencyID: s.AgencyID}
}

// fields are the names of the fields in sets, as the request spells them.
func (in ScheduleInput) fields() []string {
	var out []string
	for name, set := range map[string]bool{
		"action": in.Action != nil, "client_id": in.ClientID != nil, "params": in.Params != nil, "cron": in.Cron != nil,
		"every": in.Every != nil, "at": in.At != nil, "weekday": in.Weekday != nil, "monthday": in.Monthday != nil,
		"timezone": in.Timezone != nil, "starts_at": in.StartsAt != nil, "ends_at": in.EndsAt != nil,
		"max_credits_per_month": in.MaxPerMonth != nil, "pause_after_failures": in.PauseAfter != nil, "description": in.Description != nil,
	} {
		if set {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// monthStart is the start of t's calendar month in loc.
func monthStart(t time.Time, loc *time.Location) time.Time {
	l := t.In(loc)
	return time.Date(l.Year(), l.Month(), 1, 0, 0, 0, 0, loc)
}

// creditsText says an amount of credits for messages.
func creditsText(b Balance) string {
	return fmt.Sprintf("%d AI and %d data", b.AI, b.Data)
}

// costOf is an action's declared cost as a balance.
func costOf(c action.Cost) Balance { return Balance{AI: c.AI, Data: c.Data} }

// oneLine keeps the first line of a reason.
func oneLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}
