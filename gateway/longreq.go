package gateway

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/atrium-hq/atrium/gateway/internal/rest"
	"github.com/atrium-hq/atrium/gateway/studio"
	"github.com/atrium-hq/atrium/platform/principal"
	"github.com/atrium-hq/atrium/platform/publicfile"
)

// Long requests are the ones that stay open far longer than an API call:
// an event stream (for as long as its client listens), an upload or a
// file download (for as long as the bytes take), a Prefer: wait (up to
// the request timeout). Counted with the short ones, a few idle streams
// filled --max-in-flight and every tenant was answered 503. So each
// listener has two budgets: --max-in-flight for ordinary requests and
// --max-long-requests for long ones, which never take an ordinary slot;
// and on the public listener each API key and each tenant may hold at
// most --max-streams-per-key and --max-streams-per-tenant long requests
// at once (429 over them), so that one tenant cannot take the long budget
// from the others either. docs/operations.md ("Long requests") is the
// operator's view.

// longKind is what kind of long request a request is; ordinary if none.
type longKind uint8

const (
	ordinary longKind = iota
	kindStream
	kindUpload
	kindDownload
	kindWait
	numKinds
)

// longKindNames are the kinds as the metrics' kind label says them.
var longKindNames = [numKinds]string{"", "stream", "upload", "download", "wait"}

func (k longKind) String() string { return longKindNames[k] }

// transfer reports whether the kind's body or answer is a transfer the
// handler bounds by its progress rather than by the request deadline (and
// so reads its own body).
func (k longKind) transfer() bool { return k == kindStream || k == kindUpload || k == kindDownload }

// longRetryAfter is the Retry-After, in seconds, of a 429 for a key or a
// tenant at its cap: a long request ends when its client ends it, so no
// time is known; a few seconds keeps a reconnecting client from spinning.
const longRetryAfter = 5

// longKindOf classifies r before any routing, from what the request line
// and headers say: the streaming routes (the event stream, the upload),
// the files, and any request whose Prefer header asks to wait. A Prefer:
// wait on a route that does not honour it is still counted as long: the
// client asked to be held, and the long budget is the stricter one.
func (l *listener) longKindOf(r *http.Request) longKind {
	if k := l.routes.streamed[r.Method+" "+r.URL.Path]; k != ordinary {
		return k
	}
	if r.Method == http.MethodGet && r.URL.Path == realtimePath {
		// A realtime stream (realtime.go), open as long as its page.
		return kindStream
	}
	if studioStream(r) {
		return kindStream
	}
	if l.files && studio.IsUpload(r.Method, r.URL.Path) {
		// The Studio's upload form: a transfer like the API's upload
		// (studioGate.UploadBody bounds it), not a body read whole.
		return kindUpload
	}
	if l.files && (strings.HasPrefix(r.URL.Path, publicfile.AssetsPath) || strings.HasPrefix(r.URL.Path, publicfile.MediaPath) && l.objects) {
		return kindDownload
	}
	if asksToWait(r.Header.Values("Prefer")) {
		return kindWait
	}
	return ordinary
}

// studioStream reports whether r opens one of the Studio's event streams
// (a run's page following the run: GET /studio/…/events, Accept:
// text/event-stream), which lives as long as the page is open.
func studioStream(r *http.Request) bool {
	return r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/studio/") && strings.HasSuffix(r.URL.Path, "/events") &&
		strings.Contains(r.Header.Get("Accept"), "text/event-stream")
}

// asksToWait reports whether a Prefer header names the wait preference,
// whatever its value: validating it is the service's (a bad one is a 400
// there), and telling it apart here only decides which budget holds the
// request.
func asksToWait(values []string) bool {
	for _, v := range values {
		for pref := range strings.SplitSeq(v, ",") {
			name, _, _ := strings.Cut(pref, ";")
			name, _, _ = strings.Cut(name, "=")
			if strings.EqualFold(strings.TrimSpace(name), "wait") {
				return true
			}
		}
	}
	return false
}

// tenantOf is the tenant whose keys share --max-streams-per-tenant: the
// agency a key is bound to, or its site for a key bound to a site only.
func tenantOf(p principal.Principal) string {
	switch {
	case p.AgencyID != "":
		return "agency:" + p.AgencyID
	case p.SiteID != "":
		return "site:" + p.SiteID
	}
	return ""
}

// Which cap refused a long request, as the refusal counter's limit label
// says it.
const (
	capListener = "listener"
	capKey      = "key"
	capTenant   = "tenant"
)

// streamCaps counts the long requests each key and each tenant holds
// open. An entry lives only while its count is above zero, so the memory
// is bounded by the long requests open.
type streamCaps struct {
	perKey, perTenant int
	mu                sync.Mutex
	keys, tenants     map[string]int
}

func newStreamCaps(perKey, perTenant int) *streamCaps {
	return &streamCaps{perKey: perKey, perTenant: perTenant, keys: map[string]int{}, tenants: map[string]int{}}
}

// acquire counts one more long request of key (of tenant, when not
// empty). It returns "" when the request may go on, else the cap that
// refused it (capKey, capTenant), counting nothing.
func (c *streamCaps) acquire(key, tenant string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.keys[key] >= c.perKey {
		return capKey
	}
	if tenant != "" && c.tenants[tenant] >= c.perTenant {
		return capTenant
	}
	c.keys[key]++
	if tenant != "" {
		c.tenants[tenant]++
	}
	return ""
}

// release ends one long request acquire counted.
func (c *streamCaps) release(key, tenant string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.keys[key]--; c.keys[key] <= 0 {
		delete(c.keys, key)
	}
	if tenant == "" {
		return
	}
	if c.tenants[tenant]--; c.tenants[tenant] <= 0 {
		delete(c.tenants, tenant)
	}
}

// writeStreamCapped answers a long request over its key's or its
// tenant's cap: 429, naming the cap and its value.
func (c *streamCaps) writeStreamCapped(w http.ResponseWriter, limit string) {
	who, n, flag := "this API key", c.perKey, "max-streams-per-key"
	if limit == capTenant {
		who, n, flag = "the API keys of this key's agency (or site) together", c.perTenant, "max-streams-per-tenant"
	}
	w.Header().Set("Retry-After", strconv.Itoa(longRetryAfter))
	rest.WriteJSON(w, http.StatusTooManyRequests, rest.Body{Error: fmt.Sprintf(
		"too many long requests: %s may hold at most %d open at once (event streams, uploads and Prefer: wait; --%s); close one, or retry after %d seconds",
		who, n, flag, longRetryAfter)})
}

// writeLongOverloaded answers a long request over the listener's long
// budget.
func writeLongOverloaded(w http.ResponseWriter, max int64) {
	w.Header().Set("Retry-After", "1")
	rest.WriteJSON(w, http.StatusServiceUnavailable, rest.Body{Error: fmt.Sprintf(
		"the server is at its limit of %d long requests (event streams, uploads, file downloads, Prefer: wait) on this listener; retry with exponential backoff", max)})
}

// longMetrics are the long requests' instruments:
//
//	atrium.gateway.long_requests{kind}                  open now
//	atrium.gateway.long_requests.refused{kind, limit}   refused by the listener's budget, a key's or a tenant's cap
//
// Their attribute sets are built once, so recording allocates nothing.
type longMetrics struct {
	open    metric.Int64UpDownCounter
	refused metric.Int64Counter
	kinds   [numKinds]metric.MeasurementOption
	// refusals by kind, then capListener, capKey, capTenant.
	refusals [numKinds][3]metric.MeasurementOption
}

func newLongMetrics(mp metric.MeterProvider) *longMetrics {
	m := mp.Meter("github.com/atrium-hq/atrium/gateway")
	// The names are fixed and valid: the errors cannot happen, and the
	// instruments would be no-ops.
	open, _ := m.Int64UpDownCounter("atrium.gateway.long_requests", metric.WithUnit("{request}"),
		metric.WithDescription("Long requests open (event streams, uploads, file downloads, Prefer: wait), by kind."))
	refused, _ := m.Int64Counter("atrium.gateway.long_requests.refused", metric.WithUnit("{request}"),
		metric.WithDescription("Long requests refused, by kind and by the limit that refused them: the listener's --max-long-requests (503), a key's --max-streams-per-key or a tenant's --max-streams-per-tenant (429)."))
	lm := &longMetrics{open: open, refused: refused}
	for k := kindStream; k < numKinds; k++ {
		lm.kinds[k] = metric.WithAttributeSet(attribute.NewSet(attribute.String("kind", k.String())))
		for i, limit := range []string{capListener, capKey, capTenant} {
			lm.refusals[k][i] = metric.WithAttributeSet(attribute.NewSet(attribute.String("kind", k.String()), attribute.String("limit", limit)))
		}
	}
	return lm
}

func (m *longMetrics) opened(ctx context.Context, k longKind) { m.open.Add(ctx, 1, m.kinds[k]) }
func (m *longMetrics) closed(ctx context.Context, k longKind) { m.open.Add(ctx, -1, m.kinds[k]) }

func (m *longMetrics) refuse(ctx context.Context, k longKind, limit string) {
	i := 0
	switch limit {
	case capKey:
		i = 1
	case capTenant:
		i = 2
	}
	m.refused.Add(ctx, 1, m.refusals[k][i])
}
