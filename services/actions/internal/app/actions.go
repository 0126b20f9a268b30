package app

import (
	"log/slog"
	"runtime"
	"sync/atomic"
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
	// Lease is how long a pending run's lease lasts from its start or its
	// last renewal: the process executing it renews the leases of all its
	// runs every LeaseRenewal (leases.go), so a run whose lease has ended
	// was left by a process that died (or lost its database for longer
	// than the lease), and recovery takes it back. LeaseRenewal must be
	// well under Lease (a third by default), so that a renewal or two can
	// fail without losing a live run.
	Lease, LeaseRenewal time.Duration
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
	// ScheduleMinInterval is the shortest interval a schedule's timing
	// may have; ScheduleCatchup how late a slot may still start after a
	// downtime; ScheduleTick how often the scheduler looks for due
	// slots; MaxSchedules how many schedules an agency may have.
	ScheduleMinInterval, ScheduleCatchup, ScheduleTick time.Duration
	MaxSchedules                                       int
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
	// DefaultLease and DefaultLeaseRenewal: a dead replica's run holds
	// its Idempotency-Key and its credits about 15 s (plus up to one
	// recovery interval), and a live one renews three times per lease.
	DefaultLease        = 15 * time.Second
	DefaultLeaseRenewal = 5 * time.Second
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
	// branding is the agencies' report branding, nil when the service
	// keeps none (reports are then signed with the default name).
	branding action.BrandingReader
	shares   action.ShareMaker
	// logos reads the branding's logo (nil: none is drawn).
	logos action.LogoReader
	clock Clock
	cfg   Config
	// guard checks, when a request is made, the URLs an action will fetch,
	// by the outbound address rule the fetcher applies when it dials.
	guard   *netguard.Guard
	logger  *slog.Logger
	metrics *runMetrics
	// timings measures successful runs for discovery (timings.go).
	timings timings
	// queue is the workers' state (queue.go).
	queue queueState
	// leases are the runs this process executes, whose leases it renews
	// (leases.go).
	leases leaseSet
	// kept counts the outcomes this process keeps until the database
	// takes them (outcomeretry.go).
	kept atomic.Int32
}

// NewActions returns the action use cases.
func NewActions(st Store, clients ClientDirectory, records RecordWriter, p *action.Providers, clock Clock, cfg Config, logger *slog.Logger) *Actions {
	if cfg.ActionTimeout <= 0 {
		cfg.ActionTimeout = DefaultActionTimeout
	}
	if cfg.Lease <= 0 {
		cfg.Lease = DefaultLease
	}
	if cfg.LeaseRenewal <= 0 || cfg.LeaseRenewal >= cfg.Lease {
		cfg.LeaseRenewal = min(DefaultLeaseRenewal, cfg.Lease/3)
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
	if cfg.ScheduleMinInterval <= 0 {
		cfg.ScheduleMinInterval = DefaultMinInterval
	}
	if cfg.ScheduleCatchup <= 0 {
		cfg.ScheduleCatchup = DefaultCatchup
	}
	if cfg.ScheduleTick <= 0 {
		cfg.ScheduleTick = DefaultScheduleTick
	}
	if cfg.MaxSchedules <= 0 {
		cfg.MaxSchedules = DefaultMaxSchedules
	}
	a := &Actions{store: st, clients: clients, records: records, providers: p, clock: clock, cfg: cfg, logger: logger,
		guard:   &netguard.Guard{AllowPrivate: cfg.AllowPrivateFetch},
		applied: make(chan string, 4096), batch: batching{jobs: make(chan *applyJob, 1024), states: make(chan *applyJob, 4096)}, metrics: newRunMetrics(cfg.Metrics),
		queue: newQueueState(cfg.Workers), leases: leaseSet{held: map[string]int{}}}
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
