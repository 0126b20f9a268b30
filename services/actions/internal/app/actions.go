package app

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"go.opentelemetry.io/otel/metric"

	"github.com/atrium-hq/atrium/platform/apperr"
	"github.com/atrium-hq/atrium/platform/outbox"
	"github.com/atrium-hq/atrium/platform/store"
)

// Client is a client as the CRM describes it to actions.
type Client struct {
	ID, Name, Domain, Status string
	// AutoDeploy publishes generated content without review.
	AutoDeploy bool
}

// ClientDirectory answers, at the time of each request, which clients an
// agency may reach and which agencies exist. The CRM owns both; the
// actions service asks it.
type ClientDirectory interface {
	// LinkedClient returns the client if it is linked to the agency;
	// ok is false for unknown and unlinked clients alike.
	LinkedClient(ctx context.Context, agencyID, clientID string) (c Client, ok bool, err error)
	AgencyExists(ctx context.Context, agencyID string) (bool, error)
}

// WriteMode says how a record write treats existing rows.
type WriteMode int

const (
	// Upsert inserts rows, replacing any with the same id.
	Upsert WriteMode = iota + 1
	// Update replaces only rows that exist.
	Update
)

// RecordWrite is rows for one dataset of the run's client.
type RecordWrite struct {
	Resource string           `json:"resource"`
	Mode     WriteMode        `json:"mode"`
	Rows     []map[string]any `json:"rows"`
}

// RecordWriter writes the records actions create into the data service's
// datasets (over its gRPC API: never its tables).
type RecordWriter interface {
	// WriteRecords applies the writes to the client's datasets in one
	// transaction. Applying the same writes twice gives the same rows.
	WriteRecords(ctx context.Context, clientID string, writes []RecordWrite) error
	// GetRecord returns one row; ErrNotFound if the client's dataset has
	// no row with that id.
	GetRecord(ctx context.Context, clientID, resource, id string) (map[string]any, error)
}

// Providers are the ports actions do their work through.
type Providers struct {
	Text   TextGenerator
	Pages  PageFetcher
	Mail   Mailer
	Index  Indexer
	Images ImageRenderer
	Blobs  BlobStore
	Search SearchData
	// MediaURL is the public URL a stored blob is served at.
	MediaURL func(name string) string
}

// Exec is what a handler gets for one run.
type Exec struct {
	RunID  string
	Client Client
	Input  Input
	Now    time.Time
	P      *Providers
	// Records reads rows the action works on (deploy_blog's post).
	Records RecordWriter
}

// Result is a handler's successful outcome.
type Result struct {
	// Data is the record the action answers with.
	Data map[string]any
	// Writes are the rows to write, the record's included. Every row has
	// an id, so that writing them again after a crash changes nothing.
	Writes []RecordWrite
	// StatusCode is the provider's success status; 0 means 200.
	StatusCode int
}

// Config tunes the action runner.
type Config struct {
	// AllowPrivateFetch lets audits fetch private network addresses (local
	// testing only).
	AllowPrivateFetch bool
	// ActionTimeout bounds one run's work, every provider call included.
	ActionTimeout time.Duration
	// Lease is how long after its start a pending run counts as abandoned
	// by a process that died; it must exceed ActionTimeout.
	Lease time.Duration
	// IdempotencyTTL is how long an Idempotency-Key is remembered.
	IdempotencyTTL time.Duration
	// Metrics receives the runs and credits counters (see runMetrics); nil
	// counts nothing.
	Metrics metric.MeterProvider
}

// Defaults of Config.
const (
	DefaultActionTimeout  = 60 * time.Second
	DefaultIdempotencyTTL = 24 * time.Hour
)

// Actions runs actions and keeps their credits.
type Actions struct {
	// applied carries the ids of runs whose records were written, to be
	// marked in batches (one UPDATE for many runs, not one per run).
	applied chan string
	// batch queues records for the batch writers (apply.go).
	batch     batching
	store     Store
	clients   ClientDirectory
	records   RecordWriter
	providers *Providers
	clock     Clock
	cfg       Config
	logger    *slog.Logger
	metrics   *runMetrics
}

// NewActions returns the action use cases.
func NewActions(st Store, clients ClientDirectory, records RecordWriter, p *Providers, clock Clock, cfg Config, logger *slog.Logger) *Actions {
	if cfg.ActionTimeout <= 0 {
		cfg.ActionTimeout = DefaultActionTimeout
	}
	if cfg.Lease <= cfg.ActionTimeout {
		cfg.Lease = cfg.ActionTimeout + 30*time.Second
	}
	if cfg.IdempotencyTTL <= 0 {
		cfg.IdempotencyTTL = DefaultIdempotencyTTL
	}
	return &Actions{store: st, clients: clients, records: records, providers: p, clock: clock, cfg: cfg, logger: logger,
		applied: make(chan string, 4096), batch: batching{jobs: make(chan *applyJob, 1024)}, metrics: newRunMetrics(cfg.Metrics)}
}

// Outcome is what a run answers.
type Outcome struct {
	Run Run
	// Balance is the agency's balance after the run.
	Balance Balance
	// Replayed is true when the answer is an earlier run's, replayed for a
	// repeated Idempotency-Key.
	Replayed bool
}

func denied(clientID string) error {
	return apperr.PermissionDenied("client %q is not linked to this key's agency, or does not exist; an administrator links clients to agencies", clientID)
}

// checkIdempotencyKey validates an Idempotency-Key header.
func checkIdempotencyKey(key string) error {
	if len(key) > 255 {
		return apperr.Invalid("the Idempotency-Key header must be at most 255 characters; got %d", len(key))
	}
	for _, r := range key {
		if r < 0x21 || r > 0x7e {
			return apperr.Invalid("the Idempotency-Key header must be printable ASCII without spaces, such as a UUID")
		}
	}
	return nil
}

// requestHash identifies a request body for idempotency: the same JSON
// object, whatever its key order and spacing, hashes the same.
func requestHash(body map[string]any) string {
	b, _ := json.Marshal(body) // maps marshal with sorted keys
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// Run runs the action body asks for, for a client of the agency. The run
// is recorded and its cost reserved before any provider is called; it is
// spent if the run succeeds and released if it fails, in the transaction
// that records the outcome and enqueues the completion event. The records
// are written to the data service after that commit (and again by
// recovery, should this process stop first).
func (a *Actions) Run(ctx context.Context, agencyID string, body map[string]any, idempotencyKey string) (Outcome, error) {
	req, err := ParseRequest(body, a.cfg.AllowPrivateFetch)
	if err != nil {
		return Outcome{}, err
	}
	if idempotencyKey != "" {
		if err := checkIdempotencyKey(idempotencyKey); err != nil {
			return Outcome{}, err
		}
	}
	client, err := a.linkedClient(ctx, agencyID, req.ClientID)
	if err != nil {
		return Outcome{}, err
	}
	now := a.clock.Now()
	run := Run{
		ID: store.NewID(), AgencyID: agencyID, ClientID: client.ID, Action: req.Action.Name,
		Status: StatusPending, Cost: req.Action.Cost, StartedAt: now, LeaseUntil: now.Add(a.cfg.Lease),
	}
	if idempotencyKey != "" {
		run.IdempotencyKey, run.RequestHash = idempotencyKey, requestHash(body)
	}
	var (
		replay *Run
		bal    Balance
	)
	err = a.store.InTx(ctx, func(tx Tx) error {
		replay = nil
		if run.IdempotencyKey != "" {
			prev, err := tx.RunByKey(ctx, agencyID, run.IdempotencyKey)
			switch {
			case err == nil && now.Sub(prev.StartedAt) < a.cfg.IdempotencyTTL:
				if prev.RequestHash != run.RequestHash {
					return apperr.Unprocessable("the Idempotency-Key %q was used with a different request body within the last %s; use a new key for a new request", run.IdempotencyKey, a.cfg.IdempotencyTTL)
				}
				if prev.Status == StatusPending {
					return inFlight(run.IdempotencyKey)
				}
				replay = &prev
				bal, err = tx.Balance(ctx, agencyID)
				return err
			case err == nil:
				if err := tx.ForgetKey(ctx, prev.ID); err != nil {
					return err
				}
			case !errors.Is(err, ErrNotFound):
				return err
			}
		}
		b, ok, err := tx.StartRun(ctx, run)
		if errors.Is(err, ErrDuplicate) {
			return inFlight(run.IdempotencyKey) // a concurrent twin got there first
		}
		if err != nil {
			return err
		}
		bal = b
		if !ok {
			return insufficient(req.Action, b)
		}
		return nil
	})
	if err != nil {
		return Outcome{Balance: bal}, err
	}
	if replay != nil {
		return Outcome{Run: *replay, Balance: bal, Replayed: true}, nil
	}
	// The work goes on if the caller goes away: its cost is reserved and
	// its outcome will be recorded either way.
	work := context.WithoutCancel(ctx)
	res, runErr := a.execute(work, req, client, run)
	return a.finish(work, run, req.Action, res, runErr)
}

func inFlight(key string) error {
	return apperr.Conflict("a request with the Idempotency-Key %q is still running; retry once it has finished to get its answer", key)
}

// insufficient names the kind of credit that is short, what the action
// needs and what the agency has.
func insufficient(act *Action, b Balance) error {
	kind, need, have := "AI", act.Cost.AI, b.AI
	if b.AI >= act.Cost.AI {
		kind, need, have = "data", act.Cost.Data, b.Data
	}
	return apperr.InsufficientCredits("insufficient %s credits: %s needs %d %s credits (and %d %s), the agency has %d available; an administrator adds credits with POST /admin/v1/agencies/{agency_id}/credits",
		kind, act.Name, need, kind, otherCost(act, kind), other(kind), have)
}

func other(kind string) string {
	if kind == "AI" {
		return "data"
	}
	return "AI"
}

func otherCost(act *Action, kind string) int64 {
	if kind == "AI" {
		return act.Cost.Data
	}
	return act.Cost.AI
}

// linkedClient asks the CRM, now, whether the client is linked to the
// agency; unknown and unlinked clients get the same answer.
func (a *Actions) linkedClient(ctx context.Context, agencyID, clientID string) (Client, error) {
	id, err := uuid.Parse(clientID)
	if err != nil || len(clientID) != 36 {
		return Client{}, denied(clientID)
	}
	c, ok, err := a.clients.LinkedClient(ctx, agencyID, id.String())
	if err != nil {
		return Client{}, apperr.Unavailable(err, "cannot check the client's link to the agency now: the CRM service is unavailable; retry later")
	}
	if !ok {
		return Client{}, denied(clientID)
	}
	return c, nil
}

// execute runs the handler under the action timeout; a panic is a failed
// run, not a crashed process.
func (a *Actions) execute(ctx context.Context, req Request, client Client, run Run) (res Result, err error) {
	ctx, cancel := context.WithTimeout(ctx, a.cfg.ActionTimeout)
	defer cancel()
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("action %s panicked: %v\n%s", req.Action.Name, r, debug.Stack())
		}
	}()
	return req.Action.Run(ctx, &Exec{RunID: run.ID, Client: client, Input: req.Input, Now: run.StartedAt, P: a.providers, Records: a.records})
}

// outcome turns a handler's result into the run's status, code and data.
func (a *Actions) outcome(run *Run, act *Action, res Result, runErr error) {
	run.FinishedAt = a.clock.Now()
	var pe *ProviderError
	switch {
	case runErr == nil:
		run.Status, run.StatusCode, run.Data, run.Writes = StatusSuccess, res.StatusCode, res.Data, res.Writes
		if run.StatusCode == 0 {
			run.StatusCode = 200
		}
		return
	case errors.As(runErr, &pe):
		run.StatusCode = pe.StatusCode
		run.Data = map[string]any{"error": pe.Error()}
	case errors.Is(runErr, context.DeadlineExceeded):
		run.StatusCode = 504
		run.Data = map[string]any{"error": fmt.Sprintf("%s did not finish within %s; nothing was charged", act.Name, a.cfg.ActionTimeout)}
	default:
		run.StatusCode = 500
		run.Data = map[string]any{"error": fmt.Sprintf("%s failed inside Atrium; nothing was charged. Quote run %s if it persists", act.Name, run.ID)}
	}
	if run.StatusCode < 400 {
		run.StatusCode = 502
	}
	run.Status, run.Writes = StatusError, nil
	a.logger.WarnContext(context.Background(), "action failed", "run", run.ID, "action", act.Name, "status_code", run.StatusCode, "error", apperr.Cause(runErr))
}

// finish records how the run ended: in one transaction its status and
// data, its cost spent or released, and its completion event. Then it
// writes the run's records.
func (a *Actions) finish(ctx context.Context, run Run, act *Action, res Result, runErr error) (Outcome, error) {
	a.outcome(&run, act, res, runErr)
	run.Writes = append(run.Writes, runRow(run, act))
	var bal Balance
	event, err := completed(ctx, run)
	if err != nil {
		return Outcome{}, err
	}
	var refund Cost
	if run.Status != StatusSuccess {
		refund = run.Cost
	}
	err = a.store.InTx(ctx, func(tx Tx) error {
		ok, b, err := tx.FinishRun(ctx, run, refund, event)
		if err != nil {
			return err
		}
		if !ok {
			return errInterrupted
		}
		bal = b
		return nil
	})
	if errors.Is(err, errInterrupted) {
		// Recovery declared the run abandoned (it outlived its lease) and
		// released its cost; its answer is the recorded one.
		recorded, rerr := a.store.Run(ctx, run.ID)
		if rerr != nil {
			return Outcome{}, rerr
		}
		b, berr := a.store.Balance(ctx, run.AgencyID)
		return Outcome{Run: recorded, Balance: b}, berr
	}
	if err != nil {
		return Outcome{}, err
	}
	a.metrics.finished(ctx, run)
	a.apply(ctx, run)
	return Outcome{Run: run, Balance: bal}, nil
}

var errInterrupted = errors.New("the run is no longer pending")

// flushMarks marks the runs whose records were written since the last
// flush, in one write.
func (a *Actions) flushMarks(ctx context.Context) error {
	var ids []string
	for {
		select {
		case id := <-a.applied:
			ids = append(ids, id)
			continue
		default:
		}
		break
	}
	if len(ids) == 0 {
		return nil
	}
	return a.store.MarkApplied(ctx, ids)
}

// runRow is the run as a row of the action_runs dataset.
func runRow(run Run, act *Action) RecordWrite {
	row := map[string]any{
		"id": run.ID, "action": run.Action, "status": run.Status, "status_code": float64(run.StatusCode),
		"agency_id": run.AgencyID, "record_resource": act.Writes, "data": shortened(run.Data),
		"started_at": run.StartedAt.Format(time.RFC3339Nano), "finished_at": run.FinishedAt.Format(time.RFC3339Nano),
		"created_at": run.StartedAt.Format(time.RFC3339Nano), "updated_at": run.FinishedAt.Format(time.RFC3339Nano),
		"credits_ai": 0.0, "credits_data": 0.0,
	}
	if run.Status == StatusSuccess {
		row["credits_ai"], row["credits_data"] = float64(run.Cost.AI), float64(run.Cost.Data)
		if id, ok := run.Data["id"].(string); ok {
			row["record_id"] = id
		}
	} else if msg, ok := run.Data["error"].(string); ok {
		row["error"] = msg
	}
	return RecordWrite{Resource: "action_runs", Mode: Upsert, Rows: []map[string]any{row}}
}

// runDataMax is the longest string a run's row keeps of its data; longer
// ones (an article's body) are in the record itself.
const runDataMax = 500

// shortened is data with its long strings cut to runDataMax characters,
// marked with the length they had.
func shortened(data map[string]any) map[string]any {
	out := make(map[string]any, len(data))
	for k, v := range data {
		if s, ok := v.(string); ok && utf8.RuneCountInString(s) > runDataMax {
			v = string([]rune(s)[:runDataMax]) + fmt.Sprintf("… (%d characters; the record has them all)", utf8.RuneCountInString(s))
		}
		out[k] = v
	}
	return out
}

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
	RunID        string         `json:"run_id"`
	Action       string         `json:"action"`
	ClientID     string         `json:"client_id"`
	AgencyID     string         `json:"agency_id"`
	Status       string         `json:"status"`
	StatusCode   int            `json:"status_code"`
	Data         map[string]any `json:"data"`
	CreditsSpent Credits        `json:"credits_spent"`
	StartedAt    time.Time      `json:"started_at"`
	FinishedAt   time.Time      `json:"finished_at"`
}

// completed is the run's completion event, with the run id as its
// message id: JetStream drops a second publication.
func completed(ctx context.Context, run Run) (outbox.Event, error) {
	ev := CompletedEvent{RunID: run.ID, Action: run.Action, ClientID: run.ClientID, AgencyID: run.AgencyID,
		Status: run.Status, StatusCode: run.StatusCode, Data: run.Data, StartedAt: run.StartedAt, FinishedAt: run.FinishedAt}
	if run.Status == StatusSuccess {
		ev.CreditsSpent = Credits{AI: run.Cost.AI, Data: run.Cost.Data}
	}
	b, err := json.Marshal(ev)
	if err != nil {
		return outbox.Event{}, err
	}
	return outbox.WithTrace(ctx, outbox.Event{ID: run.ID, Subject: SubjectCompleted + run.Action, Payload: b, CreatedAt: run.FinishedAt}), nil
}
