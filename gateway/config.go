package gateway

import (
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"math"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/atrium-hq/atrium/gateway/internal/auth"
	"github.com/atrium-hq/atrium/gateway/internal/oidc"
	"github.com/atrium-hq/atrium/platform/objstore"
	"github.com/atrium-hq/atrium/platform/principal"
	"github.com/atrium-hq/atrium/platform/rpc"
	"github.com/atrium-hq/atrium/platform/telemetry"
)

// Config configures the gateway.
type Config struct {
	// HTTPAddr is the public listener.
	HTTPAddr string
	// AdminAddr is the admin listener. Keep it off public networks.
	AdminAddr string
	// AdminToken guards the admin API.
	AdminToken string
	// InternalSecret signs principals for the services.
	InternalSecret []byte

	// Upstreams are the services' gRPC addresses by name; every name of
	// UpstreamNames is required.
	Upstreams map[string]string
	// Local, when set, holds the services that run in the gateway's own
	// process (`atrium serve`): the gateway calls those in process
	// (rpc.Local), the others over the network.
	Local *rpc.Local

	// Objects is the object store of the files the public listener serves
	// without a key (assets at /files/, generated images at /media/),
	// straight from the store; nil serves no /files/ (503) and leaves
	// /media/ to the actions service.
	Objects objstore.Store

	// NATSURL, if set, lets the gateway hear key revocations and evict them
	// from its cache at once instead of after KeyCacheTTL.
	NATSURL string

	// KeyCacheTTL is how long a key lookup is reused; a revocation takes
	// effect within it. Session cookies, and the owners of the sites named
	// by Atrium-Site, are cached for as long.
	KeyCacheTTL time.Duration
	// KeyCacheSize bounds the number of cached lookups (of keys, and
	// apart from them, of sessions).
	KeyCacheSize int

	// CookieSecure marks the session cookie Secure even when a request
	// did not come over TLS: for a gateway behind a proxy that terminates
	// TLS. Over TLS the cookie is always Secure.
	CookieSecure bool
	// OIDCIssuer, when set, turns single sign-on on: the public listener
	// serves oidc.StartPath and oidc.CallbackPath, running the
	// authorization code flow with PKCE against this OpenID provider,
	// where Atrium is registered as OIDCClientID (with OIDCClientSecret,
	// unless a public client) redirecting to OIDCRedirectURL, the
	// callback's URL as browsers reach it (docs/authentication.md).
	OIDCIssuer       string
	OIDCClientID     string
	OIDCClientSecret string
	OIDCRedirectURL  string
	// LoginAttemptsPerEmail and LoginAttemptsPerAddress bound the sign-in
	// attempts (and the password resets asked for) per email address and
	// per client address in each LoginAttemptWindow, before the CRM is
	// asked; over them the request is answered 429 with Retry-After.
	LoginAttemptsPerEmail   int
	LoginAttemptsPerAddress int
	LoginAttemptWindow      time.Duration
	// TrustedProxies are the addresses (comma-separated CIDRs) of the
	// proxies in front of the gateway whose X-Forwarded-For it believes:
	// a request from one of them comes from the last address of that
	// header that is not itself a trusted proxy. Empty: the client is the
	// TCP peer, and X-Forwarded-For is ignored.
	TrustedProxies string
	trusted        []netip.Prefix
	// RequestTimeout bounds each request, from its first byte to its
	// response, the body's arrival included. Transfers are bounded by
	// progress instead: each read of an upload must bring bytes within it
	// and the upload must keep MinTransferRate after it, and a file's
	// download may take it plus a second per MinTransferRate bytes.
	RequestTimeout time.Duration
	// MinTransferRate is the slowest average, in bytes a second, an upload
	// or a download may keep once RequestTimeout has passed: a body that
	// trickles in slower is answered 408, a download read slower is cut.
	MinTransferRate int64
	// MaxBodyBytes bounds request bodies.
	MaxBodyBytes int64
	// ShutdownTimeout bounds the drain of in-flight requests at shutdown.
	ShutdownTimeout time.Duration
	// DrainDelay is how long, once asked to stop, the gateway answers
	// /readyz 503 while still serving (and closing keep-alive connections
	// after each response), so that load balancers stop sending before it
	// stops accepting.
	DrainDelay time.Duration

	// RateLimit is the requests per second each API key may make on the
	// public listener, refilled continuously; 0 turns the limit off.
	RateLimit float64
	// RateLimitBurst is how many requests a key may make at once after
	// being idle; 0 means twice RateLimit, rounded up.
	RateLimitBurst int
	// MaxInFlight bounds the requests each listener serves at once; over
	// it, requests are answered 503 at once rather than queued.
	MaxInFlight int
	// MaxLongRequests bounds the long requests (event streams, uploads,
	// downloads of files, Prefer: wait) each listener serves at once. They
	// have this budget of their own and never take one of MaxInFlight's
	// slots, so that requests which stay open cannot starve short ones.
	MaxLongRequests int
	// MaxStreamsPerKey and MaxStreamsPerTenant bound the long requests one
	// API key, and all the keys of one tenant (agency, or site for a key
	// bound to a site only), hold open at once; over them the request is
	// answered 429 with Retry-After.
	MaxStreamsPerKey    int
	MaxStreamsPerTenant int

	// RealtimeHeartbeat spaces the comment lines (": ping") of an idle
	// realtime stream (GET /api/public/v1/realtime), so that proxies and
	// browsers do not take it for dead.
	RealtimeHeartbeat time.Duration
	// RealtimeMaxStreamsPerKey and RealtimeMaxStreamsPerSite bound the
	// realtime streams one API key, and all the keys of one site, bind on
	// this gateway (docs/realtime.md). They are apart from
	// MaxStreamsPerKey: every visitor of a site shares its published-only
	// key, so thousands of browsers hold one key's streams.
	RealtimeMaxStreamsPerKey  int
	RealtimeMaxStreamsPerSite int

	// MCPReadOnly hides the MCP server's write tools from every key
	// (/mcp; docs/mcp.md).
	MCPReadOnly bool
	// StudioOff turns Atrium Studio, the console at /studio/, off
	// (--studio=false); it is on by default.
	StudioOff bool

	Version string
	Logger  *slog.Logger
	// Telemetry receives the gateway's spans and metrics and serves them at
	// the admin listener's /metrics; nil reports to OpenTelemetry's globals
	// and serves no /metrics.
	Telemetry *telemetry.Telemetry

	// now is the rate limiter's clock; tests set it.
	now func() time.Time
	// realtimeIdle is how long a realtime stream without subscriptions
	// stays open (5 minutes, as PocketBase's); tests shorten it.
	realtimeIdle time.Duration
	// dependencyInterval spaces the checks of the services
	// (DependencyCheckInterval); tests shorten it.
	dependencyInterval time.Duration
}

// Defaults of the optional settings.
const (
	DefaultKeyCacheTTL     = 5 * time.Second
	DefaultKeyCacheSize    = 100_000
	DefaultRequestTimeout  = 30 * time.Second
	DefaultMaxBodyBytes    = 1 << 20
	DefaultShutdownTimeout = 10 * time.Second
	DefaultMaxInFlight     = 1000
	// Long requests: see docs/operations.md ("Long requests").
	DefaultMaxLongRequests     = 1000
	DefaultMaxStreamsPerKey    = 16
	DefaultMaxStreamsPerTenant = 64
	// Realtime streams: see docs/realtime.md.
	DefaultRealtimeHeartbeat         = 25 * time.Second
	DefaultRealtimeMaxStreamsPerKey  = 5000
	DefaultRealtimeMaxStreamsPerSite = 10000
	// DefaultRealtimeIdle is how long a realtime stream without
	// subscriptions stays open.
	DefaultRealtimeIdle = 5 * time.Minute
	// DefaultMinTransferRate is 32 KiB a second (256 kbit/s), what a
	// poor mobile link still keeps: a 25 MiB file may take 30 s plus
	// 800 s.
	DefaultMinTransferRate = 32 << 10
	// Sign-in attempts: see docs/authentication.md.
	DefaultLoginAttemptsPerEmail   = 10
	DefaultLoginAttemptsPerAddress = 50
	DefaultLoginAttemptWindow      = 15 * time.Minute
)

// AdminTokenPrefix starts the admin tokens `atrium serve` generates; give
// chosen tokens the same prefix, so that the public API, sent one by
// mistake, says that it is the admin token and where it belongs.
const AdminTokenPrefix = auth.AdminTokenPrefix

// UpstreamNames are the services behind the gateway, in the order the
// table in gateway.go lists them.
func UpstreamNames() []string {
	names := make([]string, len(upstreams))
	for i, u := range upstreams {
		names[i] = u.name
	}
	return names
}

// BindFlags binds the gateway's own settings to fs, with c's current values
// as defaults: the listeners, the admin token, the key cache, the request
// limits and the protection against bursts. `atrium serve` and
// atrium-gateway both bind them here; the settings every process shares
// (internal secret, logging, shutdown timeout, drain delay) are
// platform/cli's, the upstream addresses atrium-gateway's.
func (c *Config) BindFlags(fs *flag.FlagSet) {
	fs.StringVar(&c.HTTPAddr, "http-addr", c.HTTPAddr, "public API listen address")
	fs.StringVar(&c.AdminAddr, "admin-addr", c.AdminAddr, "admin API listen address (also /healthz, /readyz, /metrics and /debug/pprof/); keep it off public networks, never the public one")
	fs.StringVar(&c.AdminToken, "admin-token", c.AdminToken, "bearer token of the admin API, at least 16 characters")
	fs.DurationVar(&c.KeyCacheTTL, "key-cache-ttl", c.KeyCacheTTL, "how long an API key or session cookie lookup (and a site's owner) is reused (0 to 1m); a revocation or sign-out takes effect within it if its event is missed")
	fs.IntVar(&c.KeyCacheSize, "key-cache-size", c.KeyCacheSize, "maximum cached API key lookups, and apart from them, session cookie lookups")
	fs.DurationVar(&c.RequestTimeout, "request-timeout", c.RequestTimeout, "deadline of each request, body included")
	fs.Int64Var(&c.MaxBodyBytes, "max-body-bytes", c.MaxBodyBytes, "largest accepted request body")
	fs.Float64Var(&c.RateLimit, "rate-limit", c.RateLimit, "requests per second each API key, and each signed-in person, may make (token bucket per key or person, answered 429 with Retry-After over it); 0 turns the limit off")
	fs.IntVar(&c.RateLimitBurst, "rate-limit-burst", c.RateLimitBurst, "requests an idle API key may make at once; 0 means twice --rate-limit, rounded up")
	fs.IntVar(&c.MaxInFlight, "max-in-flight", c.MaxInFlight, "requests each listener serves at once; more are answered 503 with Retry-After at once, never queued")
	fs.IntVar(&c.MaxLongRequests, "max-long-requests", c.MaxLongRequests, "long requests (event streams, uploads, file downloads, Prefer: wait) each listener serves at once, apart from --max-in-flight; more are answered 503 with Retry-After at once")
	fs.IntVar(&c.MaxStreamsPerKey, "max-streams-per-key", c.MaxStreamsPerKey, "long requests (event streams, uploads, Prefer: wait) one API key may hold open at once; more are answered 429 with Retry-After")
	fs.IntVar(&c.MaxStreamsPerTenant, "max-streams-per-tenant", c.MaxStreamsPerTenant, "long requests all the API keys of one agency (or site) may hold open at once; more are answered 429 with Retry-After")
	fs.DurationVar(&c.RealtimeHeartbeat, "realtime-heartbeat", c.RealtimeHeartbeat, "how often an open realtime stream (GET /api/public/v1/realtime) gets a heartbeat comment line")
	fs.IntVar(&c.RealtimeMaxStreamsPerKey, "realtime-max-streams-per-key", c.RealtimeMaxStreamsPerKey, "realtime streams one API key may bind on this gateway (every visitor of a site shares its published-only key); more are answered 429")
	fs.IntVar(&c.RealtimeMaxStreamsPerSite, "realtime-max-streams-per-site", c.RealtimeMaxStreamsPerSite, "realtime streams all the API keys of one site may bind on this gateway; more are answered 429")
	fs.Int64Var(&c.MinTransferRate, "min-transfer-rate", c.MinTransferRate, "slowest average, in bytes a second, an upload or a file download may keep once --request-timeout has passed; a slower upload is answered 408, a slower download cut")
	fs.BoolVar(&c.CookieSecure, "cookie-secure", c.CookieSecure, "mark the session cookie Secure even on requests that did not come over TLS (behind a proxy that terminates TLS); over TLS it always is")
	fs.StringVar(&c.OIDCIssuer, "oidc-issuer", c.OIDCIssuer, "issuer URL of an OpenID Connect provider to sign people in with (single sign-on, matched by verified email); empty: sign-in by password only")
	fs.StringVar(&c.OIDCClientID, "oidc-client-id", c.OIDCClientID, "client id Atrium is registered with at --oidc-issuer")
	fs.StringVar(&c.OIDCClientSecret, "oidc-client-secret", c.OIDCClientSecret, "client secret of --oidc-client-id; empty for a public client (PKCE only)")
	fs.StringVar(&c.OIDCRedirectURL, "oidc-redirect-url", c.OIDCRedirectURL, "the callback URL registered at --oidc-issuer, as browsers reach it: https://<public host>"+oidc.CallbackPath)
	fs.IntVar(&c.LoginAttemptsPerEmail, "login-attempts-per-email", c.LoginAttemptsPerEmail, "sign-in attempts (and password resets asked for) per email address in each --login-attempt-window; more are answered 429 with Retry-After")
	fs.IntVar(&c.LoginAttemptsPerAddress, "login-attempts-per-address", c.LoginAttemptsPerAddress, "sign-in attempts (and invitations accepted, password resets) per client address in each --login-attempt-window; more are answered 429 with Retry-After")
	fs.DurationVar(&c.LoginAttemptWindow, "login-attempt-window", c.LoginAttemptWindow, "the window of --login-attempts-per-email and --login-attempts-per-address; spent attempts come back evenly over it")
	fs.StringVar(&c.TrustedProxies, "trusted-proxies", c.TrustedProxies, "comma-separated CIDRs of the proxies (load balancers, ingress) in front of the gateway whose X-Forwarded-For names the client; empty: the client is the TCP peer and X-Forwarded-For is ignored")
	fs.Var(invertedBool{&c.StudioOff}, "studio", "serve Atrium Studio, the web console, at /studio/ of the public listener, and the operator's console at /studio/ of the admin listener (--studio=false turns both off)")
	fs.BoolVar(&c.MCPReadOnly, "mcp-read-only", c.MCPReadOnly, "hide the MCP server's write tools (create_item, update_item, run_action) from every key at /mcp; read tools stay")
}

// DefaultConfig returns a configuration with every default set.
func DefaultConfig() Config {
	c := Config{}
	c.setDefaults()
	return c
}

func (c *Config) setDefaults() {
	if c.KeyCacheTTL == 0 {
		c.KeyCacheTTL = DefaultKeyCacheTTL
	}
	if c.KeyCacheSize == 0 {
		c.KeyCacheSize = DefaultKeyCacheSize
	}
	if c.RequestTimeout == 0 {
		c.RequestTimeout = DefaultRequestTimeout
	}
	if c.MaxBodyBytes == 0 {
		c.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if c.ShutdownTimeout == 0 {
		c.ShutdownTimeout = DefaultShutdownTimeout
	}
	if c.MaxInFlight == 0 {
		c.MaxInFlight = DefaultMaxInFlight
	}
	if c.MaxLongRequests == 0 {
		c.MaxLongRequests = DefaultMaxLongRequests
	}
	if c.MaxStreamsPerKey == 0 {
		c.MaxStreamsPerKey = DefaultMaxStreamsPerKey
	}
	if c.MaxStreamsPerTenant == 0 {
		c.MaxStreamsPerTenant = DefaultMaxStreamsPerTenant
	}
	if c.RealtimeHeartbeat == 0 {
		c.RealtimeHeartbeat = DefaultRealtimeHeartbeat
	}
	if c.RealtimeMaxStreamsPerKey == 0 {
		c.RealtimeMaxStreamsPerKey = DefaultRealtimeMaxStreamsPerKey
	}
	if c.RealtimeMaxStreamsPerSite == 0 {
		c.RealtimeMaxStreamsPerSite = DefaultRealtimeMaxStreamsPerSite
	}
	if c.MinTransferRate == 0 {
		c.MinTransferRate = DefaultMinTransferRate
	}
	if c.LoginAttemptsPerEmail == 0 {
		c.LoginAttemptsPerEmail = DefaultLoginAttemptsPerEmail
	}
	if c.LoginAttemptsPerAddress == 0 {
		c.LoginAttemptsPerAddress = DefaultLoginAttemptsPerAddress
	}
	if c.LoginAttemptWindow == 0 {
		c.LoginAttemptWindow = DefaultLoginAttemptWindow
	}
	if c.RateLimit > 0 && c.RateLimitBurst == 0 {
		c.RateLimitBurst = max(1, int(math.Ceil(2*c.RateLimit)))
	}
	if c.now == nil {
		c.now = time.Now
	}
	if c.realtimeIdle == 0 {
		c.realtimeIdle = DefaultRealtimeIdle
	}
	if c.dependencyInterval == 0 {
		c.dependencyInterval = DependencyCheckInterval
	}
	if c.Version == "" {
		c.Version = "dev"
	}
}

// checkOIDC checks the single sign-on settings: none, or an issuer with a
// client id and the callback's URL.
func (c *Config) checkOIDC() error {
	if c.OIDCIssuer == "" {
		if c.OIDCClientID != "" || c.OIDCClientSecret != "" || c.OIDCRedirectURL != "" {
			return errors.New("--oidc-client-id, --oidc-client-secret and --oidc-redirect-url need --oidc-issuer, the provider's issuer URL")
		}
		return nil
	}
	if u, err := url.Parse(c.OIDCIssuer); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return fmt.Errorf("--oidc-issuer must be the provider's issuer URL (https://id.example.com/…); got %q", c.OIDCIssuer)
	}
	if c.OIDCClientID == "" {
		return errors.New("--oidc-issuer needs --oidc-client-id, the client id Atrium is registered with at the provider")
	}
	if u, err := url.Parse(c.OIDCRedirectURL); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.Path != oidc.CallbackPath {
		return fmt.Errorf("--oidc-redirect-url must be the absolute URL of %s as browsers reach the gateway (https://atrium.example.com%s), registered at the provider; got %q",
			oidc.CallbackPath, oidc.CallbackPath, c.OIDCRedirectURL)
	}
	return nil
}

// parseTrustedProxies reads TrustedProxies: CIDRs, or single addresses.
func (c *Config) parseTrustedProxies() error {
	c.trusted = nil
	for _, f := range strings.Split(c.TrustedProxies, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		p, err := netip.ParsePrefix(f)
		if err != nil {
			a, aerr := netip.ParseAddr(f)
			if aerr != nil {
				return fmt.Errorf("--trusted-proxies must be comma-separated CIDRs (10.0.0.0/8) or addresses; %q is neither", f)
			}
			p = netip.PrefixFrom(a, a.BitLen())
		}
		c.trusted = append(c.trusted, p.Masked())
	}
	return nil
}

// Validate reports the first invalid setting.
func (c *Config) Validate() error {
	var missing []string
	for _, name := range UpstreamNames() {
		if c.Upstreams[name] == "" {
			missing = append(missing, "--"+name+"-addr")
		}
	}
	switch {
	case c.HTTPAddr == "":
		return errors.New("public listen address (--http-addr) is required")
	case c.AdminAddr == "":
		return errors.New("admin listen address (--admin-addr) is required")
	case c.HTTPAddr == c.AdminAddr && !strings.HasSuffix(c.HTTPAddr, ":0"):
		return errors.New("the admin API must not share the public listener: --admin-addr must differ from --http-addr")
	case len(c.AdminToken) < auth.MinAdminTokenLen:
		return fmt.Errorf("admin token (--admin-token) must be at least %d characters", auth.MinAdminTokenLen)
	case len(c.InternalSecret) < principal.MinSecretLen:
		return fmt.Errorf("internal secret (--internal-secret) must be at least %d characters", principal.MinSecretLen)
	case len(missing) > 0:
		return fmt.Errorf("every upstream address is required; missing: %s", strings.Join(missing, ", "))
	case c.KeyCacheTTL < 0 || c.KeyCacheTTL > time.Minute:
		return fmt.Errorf("key cache TTL must be between 0s and 1m so that revocations take effect promptly; got %s", c.KeyCacheTTL)
	case c.KeyCacheSize < 1:
		return errors.New("key cache size must be at least 1")
	case c.RequestTimeout < 0 || c.MaxBodyBytes < 0 || c.ShutdownTimeout < 0 || c.DrainDelay < 0:
		return errors.New("timeouts and sizes must not be negative")
	case c.RateLimit < 0 || math.IsNaN(c.RateLimit) || math.IsInf(c.RateLimit, 0):
		return fmt.Errorf("--rate-limit must be 0 (off) or a positive number of requests per second per API key; got %v", c.RateLimit)
	case c.RateLimitBurst < 0:
		return fmt.Errorf("--rate-limit-burst must be at least 1 (0: twice --rate-limit); got %d", c.RateLimitBurst)
	case c.MaxInFlight < 0:
		return fmt.Errorf("--max-in-flight must be at least 1 (0: the default, %d); got %d", DefaultMaxInFlight, c.MaxInFlight)
	case c.MaxLongRequests < 0:
		return fmt.Errorf("--max-long-requests must be at least 1 (0: the default, %d); got %d", DefaultMaxLongRequests, c.MaxLongRequests)
	case c.MaxStreamsPerKey < 0:
		return fmt.Errorf("--max-streams-per-key must be at least 1 (0: the default, %d); got %d", DefaultMaxStreamsPerKey, c.MaxStreamsPerKey)
	case c.MaxStreamsPerTenant < 0:
		return fmt.Errorf("--max-streams-per-tenant must be at least 1 (0: the default, %d); got %d", DefaultMaxStreamsPerTenant, c.MaxStreamsPerTenant)
	case c.RealtimeHeartbeat < 0:
		return fmt.Errorf("--realtime-heartbeat must be positive (0: the default, %s); got %s", DefaultRealtimeHeartbeat, c.RealtimeHeartbeat)
	case c.RealtimeMaxStreamsPerKey < 0 || c.RealtimeMaxStreamsPerSite < 0:
		return fmt.Errorf("--realtime-max-streams-per-key and --realtime-max-streams-per-site must be at least 1 (0: the defaults, %d and %d); got %d and %d",
			DefaultRealtimeMaxStreamsPerKey, DefaultRealtimeMaxStreamsPerSite, c.RealtimeMaxStreamsPerKey, c.RealtimeMaxStreamsPerSite)
	case c.MinTransferRate < 0:
		return fmt.Errorf("--min-transfer-rate must be at least 1 byte a second (0: the default, %d); got %d", DefaultMinTransferRate, c.MinTransferRate)
	case c.LoginAttemptsPerEmail < 0 || c.LoginAttemptsPerAddress < 0:
		return fmt.Errorf("--login-attempts-per-email and --login-attempts-per-address must be at least 1 (0: the defaults, %d and %d); got %d and %d",
			DefaultLoginAttemptsPerEmail, DefaultLoginAttemptsPerAddress, c.LoginAttemptsPerEmail, c.LoginAttemptsPerAddress)
	case c.LoginAttemptWindow < 0:
		return fmt.Errorf("--login-attempt-window must be positive (0: the default, %s); got %s", DefaultLoginAttemptWindow, c.LoginAttemptWindow)
	case c.checkOIDC() != nil:
		return c.checkOIDC()
	case c.parseTrustedProxies() != nil:
		return c.parseTrustedProxies()
	case c.Logger == nil:
		return errors.New("logger is required")
	}
	return nil
}

// invertedBool is a boolean flag whose field holds its negation, so that a
// zero Config has the feature on: --studio (default true) sets StudioOff.
type invertedBool struct{ off *bool }

func (b invertedBool) String() string {
	if b.off == nil {
		return "true"
	}
	return strconv.FormatBool(!*b.off)
}

func (b invertedBool) Set(s string) error {
	v, err := strconv.ParseBool(s)
	if err != nil {
		return fmt.Errorf("want true or false, not %q", s)
	}
	*b.off = !v
	return nil
}

// IsBoolFlag lets --studio stand alone, as a boolean flag.
func (b invertedBool) IsBoolFlag() bool { return true }
