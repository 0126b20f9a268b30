package app

import (
	"log/slog"
	"runtime"
	"time"

	"go.opentelemetry.io/otel/metric"

	"github.com/atrium-hq/atrium/platform/netguard"
	"github.com/atrium-hq/atrium/services/actions/internal/app/action"
)

// Config tunes the action runner.
type Config struct {
	// AllowPrivateFetch lets audits fetch private network addresses (local
	// testing only): the request-time check of a fetched URL then allows
	// them, as the page fetcher, configured from the same setting, does.
	AllowPrivateFetch bool
	// ActionTimeout bounds one run's work, every provider call included.
	ActionTimeout time.Duration
	// Lease is how long after its start a pending run counts as abandoned
	// by a process that died; it must exceed ActionTimeout.
	Lease time.Duration
	// IdempotencyTTL is how long an Idempotency-Key is remembered.
	IdempotencyTTL time.Duration
	// Workers is how many queued runs this process executes at once
	// (queue.go); AgencyMaxQueued how many queued runs an agency may have
	// before submissions answer 429.
	Workers         int
	AgencyMaxQueued int
	// QueuePoll is how often an idle worker looks for runs another
	// replica queued (its own submissions wake it at once), and how often
	// a waiting request or a running run reads its run again.
	QueuePoll time.Duration
	// Metrics receives the runs and credits counters (see runMetrics); nil
	// counts nothing.
	Metrics metric.MeterProvider
}

// Defaults of Config.
const (
	DefaultActionTimeout  = 60 * time.Second
	DefaultIdempotencyTTL = 24 * time.Hour
	// DefaultAgencyMaxQueued bounds an agency's queue.
	DefaultAgencyMaxQueued = 1000
	DefaultQueuePoll       = 250 * time.Millisecond
)

// DefaultWorkers is the default of Config.Workers: a run mostly waits on
// its providers, so many more than the processors.
func DefaultWorkers() int { return max(16, 8*runtime.GOMAXPROCS(0)) }

// Actions runs actions and keeps their credits.
type Actions struct {
	// applied carries the ids of runs whose records were written, to be
	// marked in batches (one UPDATE for many runs, not one per run).
	applied chan string
	// batch queues records for the batch writers (records.go).
	batch     batching
	store     Store
	clients   ClientDirectory
	records   RecordWriter
	providers *action.Providers
	clock     Clock
	cfg       Config
	// guard checks, when a request is made, the URLs an action will fetch,
	// by the outbound address rule the fetcher applies when it dials.
	guard   *netguard.Guard
	logger  *slog.Logger
	metrics *runMetrics
	// timings measures successful runs for discovery (timings.go).
	timings timings
	// queue is the workers' state (queue.go).
	queue queueState
}

// NewActions returns the action use cases.
func NewActions(st Store, clients ClientDirectory, records RecordWriter, p *action.Providers, clock Clock, cfg Config, logger *slog.Logger) *Actions {
	if cfg.ActionTimeout <= 0 {
		cfg.ActionTimeout = DefaultActionTimeout
	}
	if cfg.Lease <= cfg.ActionTimeout {
		cfg.Lease = cfg.ActionTimeout + 30*time.Second
	}
	if cfg.IdempotencyTTL <= 0 {
		cfg.IdempotencyTTL = DefaultIdempotencyTTL
	}
	if cfg.Workers <= 0 {
		cfg.Workers = DefaultWorkers()
	}
	if cfg.AgencyMaxQueued <= 0 {
		cfg.AgencyMaxQueued = DefaultAgencyMaxQueued
	}
	if cfg.QueuePoll <= 0 {
		cfg.QueuePoll = DefaultQueuePoll
	}
	a := &Actions{store: st, clients: clients, records: records, providers: p, clock: clock, cfg: cfg, logger: logger,
		guard:   &netguard.Guard{AllowPrivate: cfg.AllowPrivateFetch},
		applied: make(chan string, 4096), batch: batching{jobs: make(chan *applyJob, 1024), states: make(chan *applyJob, 4096)}, metrics: newRunMetrics(cfg.Metrics),
		queue: newQueueState(cfg.Workers)}
	if cfg.Metrics != nil {
		a.metrics.observeQueue(st)
	}
	return a
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
