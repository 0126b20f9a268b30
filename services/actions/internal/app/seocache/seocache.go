// Package seocache answers a repeated SEO data question from the answer a
// paid provider gave to it before (DataForSEO charges for every request):
// a decorator of provider.SearchData that keeps answers for a TTL
// (--seo-cache-ttl, 24 h by default; 0 turns it off) in a Store.
//
// The store is the actions store (its Store port, met by the memory store
// and the PostgreSQL store under the storetest contract), not process
// memory: the replicas of the actions service behind the gateway share
// one cache on PostgreSQL, so a question asked of one replica is not paid
// for again on another, and a restart keeps what was paid for. On the
// memory store (atrium serve) the cache lives as long as the process.
//
// An identical question is one with the same provider (its Namespace:
// DataForSEO's production API and its sandbox never share answers), the
// same method and the same normalised inputs: text without regard to case
// or spacing, a domain without scheme or www., coordinates to DataForSEO's
// seven decimals. An answer from the cache is reported to the run's meter
// as cached (provider.Cached) with the time it was measured, and costs
// nothing; concurrent identical questions in one process share one
// request. Errors are never cached; a store that fails makes the cache
// step aside (the provider is asked), never the run fail.
package seocache

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"

	"github.com/atrium-hq/atrium/services/actions/internal/app/provider"
)

// DefaultTTL is how long an answer is kept unless --seo-cache-ttl says
// otherwise: a day, the age at which keyword volumes, local ranks and
// backlink profiles are still the day's.
const DefaultTTL = 24 * time.Hour

// Answer is one stored answer: the provider's result as JSON, when it was
// measured and until when it may be given again.
type Answer struct {
	Value               []byte
	StoredAt, ExpiresAt time.Time
}

// Store keeps the answers. Times are kept to the microsecond.
type Store interface {
	// CachedAnswer returns the answer stored under key if it expires after
	// now; ok is false if there is none.
	CachedAnswer(ctx context.Context, key string, now time.Time) (a Answer, ok bool, err error)
	// CacheAnswer stores a under key, replacing any answer there, and
	// removes a few answers that expired by a.StoredAt, so that the store
	// holds little more than what it may still answer with.
	CacheAnswer(ctx context.Context, key string, a Answer) error
}

// Config configures a Cache.
type Config struct {
	// TTL is how long an answer is given again; required, positive.
	TTL time.Duration
	// Namespace names whose answers these are, beyond the provider's
	// Source: the account's view of the data (production or sandbox).
	Namespace string
	// Now is the clock; nil: time.Now.
	Now func() time.Time
	// Logger receives the store's failures; nil: none.
	Logger *slog.Logger
	// Metrics receives atrium.actions.seo_cache.lookups; nil: none.
	Metrics metric.MeterProvider
}

// Cache is provider.SearchData answering from the store when it can.
type Cache struct {
	next    provider.SearchData
	store   Store
	ttl     time.Duration
	ns      string
	now     func() time.Time
	logger  *slog.Logger
	lookups metric.Int64Counter
	hit     metric.AddOption
	miss    metric.AddOption
	shared  metric.AddOption

	mu      sync.Mutex
	flights map[string]*flight
}

// flight is a question being asked of the provider; identical questions
// wait for its answer.
type flight struct {
	done     chan struct{}
	value    []byte
	storedAt time.Time
	ok       bool
}

var _ provider.SearchData = (*Cache)(nil)

// New returns next with its answers cached in st.
func New(next provider.SearchData, st Store, cfg Config) (*Cache, error) {
	if cfg.TTL <= 0 {
		return nil, errors.New("seocache: the TTL must be positive")
	}
	c := &Cache{next: next, store: st, ttl: cfg.TTL, ns: cfg.Namespace, now: cfg.Now, logger: cfg.Logger, flights: map[string]*flight{}}
	if c.ns == "" {
		c.ns = next.Source()
	}
	if c.now == nil {
		c.now = time.Now
	}
	if c.logger == nil {
		c.logger = slog.New(slog.DiscardHandler)
	}
	mp := cfg.Metrics
	if mp == nil {
		mp = noop.NewMeterProvider()
	}
	// The error is only for an invalid name; the counter is then a no-op.
	c.lookups, _ = mp.Meter("github.com/atrium-hq/atrium/services/actions").Int64Counter("atrium.actions.seo_cache.lookups",
		metric.WithUnit("{lookup}"),
		metric.WithDescription("SEO data questions by how they were answered: hit (from the cache), shared (by an identical question in flight), miss (the provider was asked)."))
	set := func(v string) metric.AddOption {
		return metric.WithAttributeSet(attribute.NewSet(attribute.String("result", v)))
	}
	c.hit, c.miss, c.shared = set("hit"), set("miss"), set("shared")
	return c, nil
}

// Source is the provider's: cached answers are still its data.
func (c *Cache) Source() string { return c.next.Source() }

// CheckLocation asks the provider, which keeps its own (free) list.
func (c *Cache) CheckLocation(ctx context.Context, location string) error {
	return c.next.CheckLocation(ctx, location)
}

// KeywordIdeas implements provider.SearchData.
func (c *Cache) KeywordIdeas(ctx context.Context, q provider.KeywordQuery) (provider.KeywordResult, error) {
	return ask(ctx, c, "keyword_ideas", []string{text(q.Seed), text(q.Location), strconv.Itoa(q.Limit)},
		func(ctx context.Context) (provider.KeywordResult, error) { return c.next.KeywordIdeas(ctx, q) })
}

// GridSearch implements provider.SearchData.
func (c *Cache) GridSearch(ctx context.Context, q provider.GridQuery) (provider.GridResult, error) {
	return ask(ctx, c, "grid_search", []string{text(q.Keyword), coord(q.Lat), coord(q.Lng), strconv.FormatFloat(q.RadiusKm, 'f', 3, 64),
		strconv.Itoa(q.Size), domain(q.Domain), text(q.BusinessName)},
		func(ctx context.Context) (provider.GridResult, error) { return c.next.GridSearch(ctx, q) })
}

// Backlinks implements provider.SearchData.
func (c *Cache) Backlinks(ctx context.Context, d string) (provider.BacklinkProfile, error) {
	return ask(ctx, c, "backlinks", []string{domain(d)},
		func(ctx context.Context) (provider.BacklinkProfile, error) { return c.next.Backlinks(ctx, d) })
}

// ask answers a question from the cache, from an identical question in
// flight, or from the provider, whose answer it then stores.
func ask[T any](ctx context.Context, c *Cache, method string, inputs []string, fetch func(context.Context) (T, error)) (T, error) {
	var zero T
	key := c.key(method, inputs)
	for {
		c.mu.Lock()
		if f := c.flights[key]; f != nil {
			c.mu.Unlock()
			select {
			case <-f.done:
			case <-ctx.Done():
				return zero, ctx.Err()
			}
			if !f.ok {
				// The question failed for its asker (or its asker went
				// away): this caller asks for itself.
				continue
			}
			var v T
			if err := json.Unmarshal(f.value, &v); err == nil {
				c.lookups.Add(ctx, 1, c.shared)
				provider.Cached(ctx, f.storedAt)
				return v, nil
			}
			continue
		}
		f := &flight{done: make(chan struct{})}
		c.flights[key] = f
		c.mu.Unlock()
		v, err := lead(ctx, c, key, f, fetch)
		c.mu.Lock()
		delete(c.flights, key)
		c.mu.Unlock()
		close(f.done)
		return v, err
	}
}

// lead answers a question no identical one is waiting on: from the store,
// else from the provider, whose answer it stores. f receives the answer
// for the questions that waited.
func lead[T any](ctx context.Context, c *Cache, key string, f *flight, fetch func(context.Context) (T, error)) (T, error) {
	var zero T
	now := c.now().UTC().Truncate(time.Microsecond)
	a, ok, err := c.store.CachedAnswer(ctx, key, now)
	if err != nil {
		if ctx.Err() != nil {
			return zero, ctx.Err()
		}
		c.logger.WarnContext(ctx, "the SEO cache could not be read; asking the provider", "error", err)
	}
	if ok {
		var v T
		if err := json.Unmarshal(a.Value, &v); err == nil {
			c.lookups.Add(ctx, 1, c.hit)
			provider.Cached(ctx, a.StoredAt)
			f.value, f.storedAt, f.ok = a.Value, a.StoredAt, true
			return v, nil
		}
		// Written by a version whose answer had another shape: asked anew
		// and replaced.
	}
	c.lookups.Add(ctx, 1, c.miss)
	v, err := fetch(ctx)
	if err != nil {
		return zero, err
	}
	value, err := json.Marshal(v)
	if err != nil {
		// An answer JSON cannot hold is given, not kept.
		c.logger.WarnContext(ctx, "an SEO answer could not be cached", "error", err)
		return v, nil
	}
	f.value, f.storedAt, f.ok = value, now, true
	// Stored even if the caller has gone: it was paid for.
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), storeTimeout)
	defer cancel()
	if err := c.store.CacheAnswer(sctx, key, Answer{Value: value, StoredAt: now, ExpiresAt: now.Add(c.ttl)}); err != nil {
		c.logger.WarnContext(ctx, "the SEO cache could not keep an answer", "error", err)
	}
	return v, nil
}

// storeTimeout bounds keeping an answer once it is paid for.
const storeTimeout = 5 * time.Second

// keyVersion changes when a cached answer's shape does, so that an answer
// of the old shape is never read as one of the new.
const keyVersion = "v1"

// key is the SHA-256 of the question: the namespace, the method and its
// normalised inputs.
func (c *Cache) key(method string, inputs []string) string {
	h := sha256.New()
	for _, p := range append([]string{keyVersion, c.ns, method}, inputs...) {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// text is a phrase without regard to case or spacing.
func text(s string) string { return strings.ToLower(strings.Join(strings.Fields(s), " ")) }

// coord is a coordinate to seven decimals (about a centimetre, the
// precision DataForSEO takes).
func coord(v float64) string { return strconv.FormatFloat(v, 'f', 7, 64) }

// domain is a domain or URL as a bare lower-case host.
func domain(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	if i := strings.Index(s, "://"); i >= 0 {
		s = s[i+3:]
	}
	if i := strings.IndexAny(s, "/?#"); i >= 0 {
		s = s[:i]
	}
	return strings.TrimPrefix(strings.TrimSuffix(s, "."), "www.")
}
