package principal

import (
	"context"
	"slices"
)

// Kind says what sort of caller a principal is.
type Kind string

const (
	// KindKey is a tenant calling with an API key through the public gateway.
	KindKey Kind = "key"
	// KindAdmin is the operator calling through the admin listener.
	KindAdmin Kind = "admin"
	// KindService is another Atrium process: the gateway resolving a key, or
	// one service asking another.
	KindService Kind = "service"
)

// Scope is a permission an API key carries.
type Scope string

const (
	ScopeRead  Scope = "read"
	ScopeWrite Scope = "write"
)

// Scopes lists every scope, in canonical order.
var Scopes = []Scope{ScopeRead, ScopeWrite}

// Principal is the authenticated caller of a request.
type Principal struct {
	Kind Kind `json:"kind"`
	// Subject is the API key id for KindKey, "admin" for KindAdmin and the
	// calling component's name for KindService.
	Subject string  `json:"sub"`
	Scopes  []Scope `json:"scopes,omitempty"`
	// SiteID is the site a key is bound to, if any.
	SiteID string `json:"site_id,omitempty"`
	// AgencyID is the agency a key is bound to, if any.
	AgencyID string `json:"agency_id,omitempty"`
}

// HasScope reports whether p carries scope s.
func (p Principal) HasScope(s Scope) bool { return slices.Contains(p.Scopes, s) }

type contextKey struct{}

// NewContext returns ctx carrying p.
func NewContext(ctx context.Context, p Principal) context.Context {
	return context.WithValue(ctx, contextKey{}, p)
}

// FromContext returns the principal ctx carries, if any.
func FromContext(ctx context.Context) (Principal, bool) {
	p, ok := ctx.Value(contextKey{}).(Principal)
	return p, ok
}
