package app

import (
	"context"
	"time"

	"github.com/google/uuid"

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

// reportReady is the report.ready event of a generate_report run that
// succeeded (ok false for any other run), with an id of its own derived
// from the run's, so that JetStream drops a second publication.
func reportReady(run Run) (e outbox.Event, ok bool, err error) {
	if run.Action != "generate_report" || run.Status != StatusSuccess {
		return outbox.Event{}, false, nil
	}
	str := func(k string) string { s, _ := run.Data[k].(string); return s }
	period, _ := run.Data["period"].(map[string]any)
	from, _ := period["from"].(string)
	to, _ := period["to"].(string)
	id := uuid.NewSHA1(reportSpace, []byte(run.ID)).String()
	e, err = outbox.OfID(id, events.ReportReady, events.ReportReadyEvent{RunID: run.ID, ClientID: run.ClientID, AgencyID: run.AgencyID,
		Title: str("title"), PeriodFrom: from, PeriodTo: to, HTMLURL: str("html_url"), PDFURL: str("pdf_url")}, run.FinishedAt)
	return e, err == nil, err
}

// reportSpace is the namespace of report.ready event ids.
var reportSpace = uuid.MustParse("2b0e6c4e-7d8a-5c51-9f3e-4a1b6c7d8e9f")
