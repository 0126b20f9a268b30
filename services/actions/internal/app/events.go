package app

import (
	"context"
	"encoding/json"
	"time"

	"github.com/atrium-hq/atrium/platform/outbox"
)

// The events the actions service publishes, through the outbox in the
// transaction that makes them true.

// SubjectCompleted is the subject prefix of completion events:
// atrium.actions.completed.<action>.
const SubjectCompleted = "atrium.actions.completed."

// Credits is the credits of a completion event.
type Credits struct {
	AI   int64 `json:"ai"`
	Data int64 `json:"data"`
}

// CompletedEvent is the payload of a completion event.
type CompletedEvent struct {
	RunID    string `json:"run_id"`
	Action   string `json:"action"`
	ClientID string `json:"client_id"`
	AgencyID string `json:"agency_id"`
	// State is the run's state as its resource shows it: success, error
	// or canceled (the same as Status, which came first).
	State        string         `json:"state"`
	Status       string         `json:"status"`
	StatusCode   int            `json:"status_code"`
	Data         map[string]any `json:"data"`
	CreditsSpent Credits        `json:"credits_spent"`
	// ProviderCost is what the providers charged for the run, in US
	// dollars (spent whether or not the run succeeded); Cached says its
	// data came from the SEO cache.
	ProviderCost float64   `json:"provider_cost"`
	Cached       bool      `json:"cached"`
	StartedAt    time.Time `json:"started_at"`
	FinishedAt   time.Time `json:"finished_at"`
}

// completed is the run's completion event, with the run id as its
// message id: JetStream drops a second publication.
func completed(ctx context.Context, run Run) (outbox.Event, error) {
	ev := CompletedEvent{RunID: run.ID, Action: run.Action, ClientID: run.ClientID, AgencyID: run.AgencyID,
		State: State(run), Status: run.Status, StatusCode: run.StatusCode, Data: run.Data, ProviderCost: run.ProviderCost.Float(), Cached: run.Cached,
		StartedAt: run.StartedAt, FinishedAt: run.FinishedAt}
	if run.Status == StatusSuccess {
		ev.CreditsSpent = Credits{AI: run.Cost.AI, Data: run.Cost.Data}
	}
	b, err := json.Marshal(ev)
	if err != nil {
		return outbox.Event{}, err
	}
	return outbox.WithTrace(ctx, outbox.Event{ID: run.ID, Subject: SubjectCompleted + run.Action, Payload: b, CreatedAt: run.FinishedAt}), nil
}

// Subjects of the stages of an asynchronous run before its completion:
// atrium.actions.queued.<action> when it is accepted, and
// atrium.actions.started.<action> when a worker begins it.
const (
	SubjectQueued  = "atrium.actions.queued."
	SubjectStarted = "atrium.actions.started."
)

// StageEvent is the payload of a queued or started event.
type StageEvent struct {
	RunID    string `json:"run_id"`
	Action   string `json:"action"`
	ClientID string `json:"client_id"`
	AgencyID string `json:"agency_id"`
	// State is queued or running.
	State string `json:"state"`
	// CreditsReserved is what the run holds until it ends.
	CreditsReserved Credits   `json:"credits_reserved"`
	At              time.Time `json:"at"`
}

// enqueueStage adds a run's queued or started event to tx.
func enqueueStage(ctx context.Context, tx Tx, subject string, run Run, at time.Time) error {
	e, err := stageEvent(subject, run, at)
	if err != nil {
		return err
	}
	return tx.Enqueue(ctx, e)
}

// stageEvent is the event of run reaching a stage (subject) at at.
func stageEvent(subject string, run Run, at time.Time) (outbox.Event, error) {
	return outbox.New(subject+run.Action, StageEvent{RunID: run.ID, Action: run.Action, ClientID: run.ClientID,
		AgencyID: run.AgencyID, State: State(run), CreditsReserved: Credits{AI: run.Cost.AI, Data: run.Cost.Data}, At: at}, at)
}

// SubjectCreditsChanged announces an administrator's change to a balance.
const SubjectCreditsChanged = "atrium.actions.credits.changed"

type creditsChanged struct {
	AgencyID string    `json:"agency_id"`
	Added    Credits   `json:"added"`
	Balance  Credits   `json:"balance"`
	At       time.Time `json:"at"`
}
