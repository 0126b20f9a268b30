package gateway

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/atrium-hq/atrium/gateway/internal/auth"
	"github.com/atrium-hq/atrium/platform/principal"
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

	// Upstream gRPC addresses.
	CRMAddr         string
	CollectionsAddr string
	DataAddr        string
	ActionsAddr     string

	// NATSURL, if set, lets the gateway hear key revocations and evict them
	// from its cache at once instead of after KeyCacheTTL.
	NATSURL string

	// KeyCacheTTL is how long a key lookup is reused; a revocation takes
	// effect within it.
	KeyCacheTTL time.Duration
	// KeyCacheSize bounds the number of cached lookups.
	KeyCacheSize int
	// RequestTimeout bounds each proxied call.
	RequestTimeout time.Duration
	// MaxBodyBytes bounds request bodies.
	MaxBodyBytes int64
	// ShutdownTimeout bounds the drain of in-flight requests at shutdown.
	ShutdownTimeout time.Duration

	Version string
	Logger  *slog.Logger
}

// Defaults of the optional settings.
const (
	DefaultKeyCacheTTL     = 5 * time.Second
	DefaultKeyCacheSize    = 100_000
	DefaultRequestTimeout  = 30 * time.Second
	DefaultMaxBodyBytes    = 1 << 20
	DefaultShutdownTimeout = 10 * time.Second
)

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
	if c.Version == "" {
		c.Version = "dev"
	}
}

// Validate reports the first invalid setting.
func (c *Config) Validate() error {
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
	case c.CRMAddr == "" || c.CollectionsAddr == "" || c.DataAddr == "" || c.ActionsAddr == "":
		return errors.New("every upstream address (--crm-addr, --collections-addr, --data-addr, --actions-addr) is required")
	case c.KeyCacheTTL < 0 || c.KeyCacheTTL > time.Minute:
		return fmt.Errorf("key cache TTL must be between 0s and 1m so that revocations take effect promptly; got %s", c.KeyCacheTTL)
	case c.KeyCacheSize < 1:
		return errors.New("key cache size must be at least 1")
	case c.RequestTimeout < 0 || c.MaxBodyBytes < 0 || c.ShutdownTimeout < 0:
		return errors.New("timeouts and sizes must not be negative")
	case c.Logger == nil:
		return errors.New("logger is required")
	}
	return nil
}
