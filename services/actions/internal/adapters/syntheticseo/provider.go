package syntheticseo

import (
	"fmt"
	"hash/fnv"
	"math"
	"net/http"
	"time"

	"github.com/atrium-hq/atrium/services/actions/internal/app/provider"
)

// SourceName is what Source returns, so that callers can label the data as
// not measured.
const SourceName = "synthetic"

// providerName names this provider in errors.
const providerName = "SEO data"

// defaultReferenceDate is the day the synthetic data is as of when Config
// leaves it unset.
var defaultReferenceDate = time.Date(2026, time.January, 1, 0, 0, 0, 0, time.UTC)

// Config configures the synthetic provider.
type Config struct {
	// ReferenceDate is the day the synthetic data is as of: backlinks were
	// first seen in the three years before it, and keyword ideas that name
	// a year name its year. It is a fixed date rather than the clock so
	// that the same question gets the same answer tomorrow. Only the date
	// counts (in UTC). Zero: 2026-01-01. Allowed: years 2000 to 2100.
	ReferenceDate time.Time
}

// Provider answers SEO data questions with synthetic, deterministic data.
// It holds no state besides its configuration and is safe for concurrent
// use.
type Provider struct {
	ref time.Time
}

var _ provider.SearchData = (*Provider)(nil)

// New returns a provider, or an error naming the bad setting.
func New(cfg Config) (*Provider, error) {
	ref := cfg.ReferenceDate
	if ref.IsZero() {
		ref = defaultReferenceDate
	}
	ref = ref.UTC()
	if y := ref.Year(); y < 2000 || y > 2100 {
		return nil, fmt.Errorf("syntheticseo: ReferenceDate %s is outside the years 2000 to 2100", ref.Format(time.DateOnly))
	}
	return &Provider{ref: time.Date(ref.Year(), ref.Month(), ref.Day(), 0, 0, 0, 0, time.UTC)}, nil
}

// Source returns "synthetic".
func (p *Provider) Source() string { return SourceName }

// invalid reports a question the provider cannot answer, as a real API
// would: status 400 and a message naming the field and what is allowed.
func invalid(format string, a ...any) error {
	return provider.Failure(providerName, http.StatusBadRequest, nil, format, a...)
}

// The answers are deterministic: every random choice comes from a stream
// seeded by an FNV-64a hash of the question (and, for one part of the
// answer, a label naming that part), so parts do not shift when another
// part changes: an idea's metrics do not depend on the limit, a link's
// fields do not depend on how many links there are.

// hashOf hashes the parts, separated so that ("ab", "c") and ("a", "bc")
// differ.
func hashOf(parts ...string) uint64 {
	h := fnv.New64a()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return h.Sum64()
}

// stream is a splitmix64 generator. It is written out rather than taken
// from math/rand so that the sequence, and with it every answer, can never
// change with the Go version.
type stream struct{ s uint64 }

func newStream(parts ...string) *stream { return &stream{s: hashOf(parts...)} }

func (r *stream) next() uint64 {
	r.s += 0x9e3779b97f4a7c15
	z := r.s
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// float returns a number in [0, 1).
func (r *stream) float() float64 { return float64(r.next()>>11) / (1 << 53) }

// between returns a number in [lo, hi).
func (r *stream) between(lo, hi float64) float64 { return lo + (hi-lo)*r.float() }

// intn returns an integer in [0, n).
func (r *stream) intn(n int) int {
	return int(r.next() % uint64(n)) //nolint:gosec // G115: n > 0 at every call, and the remainder is below it
}

// chance reports true with probability p.
func (r *stream) chance(p float64) bool { return r.float() < p }

// pick returns one of the items.
func pick[T any](r *stream, items []T) T { return items[r.intn(len(items))] }

// round rounds to the given number of decimals.
func round(v float64, decimals int) float64 {
	f := math.Pow(10, float64(decimals))
	return math.Round(v*f) / f
}

func clamp(v, lo, hi float64) float64 { return math.Max(lo, math.Min(hi, v)) }
