package app

import (
	"context"
	"time"

	"github.com/atrium-hq/atrium/platform/events"
	"github.com/atrium-hq/atrium/platform/outbox"
)

// The events the actions service publishes, through the outbox in the
// transaction that makes them true. Their subjects and payloads are
// defined in platform/events (RunQueued, RunStarted, RunCompleted,
// CreditsChanged).

// completed is the run's completion event, with the run id as its
// message id: JetStream drops a second publication.
func completed(ctx context.Context, run Run) (outbox.Event, error) {
	ev := events.RunCompletedEvent{RunID: run.ID, Action: run.Action, ClientID: run.ClientID, AgencyID: run.AgencyID,
		State: State(run), Status: run.Status, StatusCode: run.StatusCode, Data: run.Data, ProviderCost: run.ProviderCost.Float(), Cached: run.Cached,
		StartedAt: run.StartedAt, FinishedAt: run.FinishedAt}
	if run.Status == StatusSuccess {
		ev.CreditsSpent = events.Credits{AI: run.Cost.AI, Data: run.Cost.Data}
	}
	e, err := outbox.OfID(run.ID, events.RunCompleted, ev, run.FinishedAt)
	if err != nil {
		return outbox.Event{}, err
	}
	return outbox.WithTrace(ctx, e), nil
}

// enqueueStage adds a run's queued or started event to tx.
func enqueueStage(ctx context.Context, tx Tx, stage *events.Def[events.RunStageEvent], run Run, at time.Time) error {
	e, err := stageEvent(stage, run, at)
	if err != nil {
		return err
	}
	return tx.Enqueue(ctx, e)
}

// stageEvent is the event of run reaching a stage (events.RunQueued or
// events.RunStarted) at at.
func stageEvent(stage *events.Def[events.RunStageEvent], run Run, at time.Time) (outbox.Event, error) {
	return outbox.Of(stage, events.RunStageEvent{RunID: run.ID, Action: run.Action, ClientID: run.ClientID,
		AgencyID: run.AgencyID, State: State(run), CreditsReserved: events.Credits{AI: run.Cost.AI, Data: run.Cost.Data}, At: at}, at)
}
