package provider

import (
	"context"
	"math"
	"strconv"
	"sync"
	"time"
)

// USD is an amount of US dollars, in billionths: the providers' prices
// (DataForSEO charges $0.00003 a backlink row) add up exactly, which
// float64 dollars would not.
type USD int64

// Dollars converts a price a provider reported in dollars.
func Dollars(d float64) USD {
	if math.IsNaN(d) || math.IsInf(d, 0) || d <= 0 {
		return 0
	}
	return USD(math.Round(d * 1e9))
}

// Float is the amount in dollars, for JSON and the records.
func (u USD) Float() float64 { return float64(u) / 1e9 }

func (u USD) String() string { return "$" + strconv.FormatFloat(u.Float(), 'f', -1, 64) }

// Usage is what one run's provider calls cost and where their answers came
// from: what an agency reconciles the credits it sells against.
type Usage struct {
	// Cost is the sum of what the providers reported charging for the
	// run's calls, failed ones included.
	Cost USD
	// Calls counts the requests made to a provider that reports a cost;
	// Cached the answers taken from the cache instead.
	Calls, Cached int
	// MeasuredAt is when the oldest answer taken from the cache was
	// measured; zero when none was.
	MeasuredAt time.Time
}

// Meter adds up a run's Usage. The engine puts one in each run's context
// (WithMeter); adapters report to it with Billed, the cache with Cached.
// Safe for concurrent use: a grid search reports from many goroutines.
type Meter struct {
	mu sync.Mutex
	u  Usage
}

type meterKey struct{}

// WithMeter returns ctx carrying m.
func WithMeter(ctx context.Context, m *Meter) context.Context {
	return context.WithValue(ctx, meterKey{}, m)
}

func meterOf(ctx context.Context) *Meter {
	m, _ := ctx.Value(meterKey{}).(*Meter)
	return m
}

// Billed reports a request made to a provider and what the provider says
// it cost. Without a meter in ctx (a call outside a run) it does nothing.
func Billed(ctx context.Context, cost USD) {
	if m := meterOf(ctx); m != nil {
		m.mu.Lock()
		m.u.Calls++
		m.u.Cost += cost
		m.mu.Unlock()
	}
}

// Cached reports an answer taken from the cache, measured at measuredAt.
func Cached(ctx context.Context, measuredAt time.Time) {
	if m := meterOf(ctx); m != nil {
		m.mu.Lock()
		m.u.Cached++
		if m.u.MeasuredAt.IsZero() || measuredAt.Before(m.u.MeasuredAt) {
			m.u.MeasuredAt = measuredAt
		}
		m.mu.Unlock()
	}
}

// MeasuredAt is when the data a handler got in ctx was measured: now,
// unless an answer came from the cache, then when that answer was. A record
// of a cached answer carries its own date, not the day it was read again.
func MeasuredAt(ctx context.Context, now time.Time) time.Time {
	if m := meterOf(ctx); m != nil {
		if u := m.Usage(); !u.MeasuredAt.IsZero() {
			return u.MeasuredAt
		}
	}
	return now
}

// Usage returns what was reported so far.
func (m *Meter) Usage() Usage {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.u
}
