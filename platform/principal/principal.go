package principal

import (
	"context"
	"slices"
	"strings"

	"github.com/atrium-hq/atrium/platform/apperr"
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
	// KindUser is a person signed in with a session: a member of the agency
	// the request acts for, whose role says what they may do.
	KindUser Kind = "user"
	// KindAnonymous is a caller without credentials, admitted only by RPCs
	// open to anyone (CALLER_ANYONE).
	KindAnonymous Kind = "anonymous"
)

// Scope is a permission an API key carries.
type Scope string

const (
	ScopeRead  Scope = "read"
	ScopeWrite Scope = "write"
)

// Scopes lists every scope, in canonical order.
var Scopes = []Scope{ScopeRead, ScopeWrite}

// ScopeStrings returns scopes as their names.
func ScopeStrings(scopes []Scope) []string {
	out := make([]string, len(scopes))
	for i, s := range scopes {
		out[i] = string(s)
	}
	return out
}

// ScopeNames returns scopes as a comma-separated list for messages.
func ScopeNames(scopes []Scope) string {
	if len(scopes) == 0 {
		return "none"
	}
	return strings.Join(ScopeStrings(scopes), ", ")
}

// ScopesFrom converts names read back from a trusted store.
func ScopesFrom(names []string) []Scope {
	out := make([]Scope, len(names))
	for i, n := range names {
		out[i] = Scope(n)
	}
	return out
}

// ParseScopes checks the scope names of a request and returns them in
// canonical order without repeats.
func ParseScopes(names []string) ([]Scope, error) {
	all := ScopeNames(Scopes)
	if len(names) == 0 {
		return nil, apperr.Invalid("scopes is required: one or both of %s", all)
	}
	for _, n := range names {
		if !slices.Contains(Scopes, Scope(n)) {
			return nil, apperr.Invalid("scopes may contain only %s; got %q", all, n)
		}
	}
	var out []Scope
	for _, s := range Scopes {
		if slices.Contains(names, string(s)) {
			out = append(out, s)
		}
	}
	return out, nil
}

// Principal is the authenticated caller of a request.
type Principal struct {
	Kind Kind `json:"kind"`
	// Subject is the API key id for KindKey, the user id for KindUser,
	// "admin" for KindAdmin and the calling component's name for
	// KindService.
	Subject string  `json:"sub"`
	Scopes  []Scope `json:"scopes,omitempty"`
	// SiteID is the site a key is bound to, if any.
	SiteID string `json:"site_id,omitempty"`
	// AgencyID is the agency a key is bound to, if any.
	AgencyID string `json:"agency_id,omitempty"`
	// PublishedOnly is set for a key safe to embed in a web page: it
	// reads only published content and may never write.
	PublishedOnly bool `json:"published_only,omitempty"`
	// Role is a person's role in AgencyID (KindUser only): what they may
	// do, as the proto's Role grants it.
	Role Role `json:"role,omitempty"`
	// ClientID is the client a member with the client role belongs to:
	// they read that client's results and nothing else.
	ClientID string `json:"client_id,omitempty"`
	// MemberID is the person's membership of AgencyID (KindUser only).
	MemberID string `json:"member_id,omitempty"`
	// SessionID is the session a person signed in with (KindUser only),
	// which the audit trail records beside the user.
	SessionID string `json:"session_id,omitempty"`
}

// PublishedOnly reports whether the caller of ctx sees only published
// content (a published_only key, or a service acting for one).
func PublishedOnly(ctx context.Context) bool {
	p, _ := FromContext(ctx)
	return p.PublishedOnly
}

// HasScope reports whether p carries scope s.
func (p Principal) HasScope(s Scope) bool { return slices.Contains(p.Scopes, s) }

// ActsForTenant reports whether p names an agency or a site it acts for.
func (p Principal) ActsForTenant() bool { return p.AgencyID != "" || p.SiteID != "" }

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

// AgencyID is the agency the caller of a tenant RPC acts for. The
// interceptor has checked the RPC's access rule before a handler runs, so
// in a handler of an RPC bound to agencies it is never empty.
func AgencyID(ctx context.Context) string {
	p, _ := FromContext(ctx)
	return p.AgencyID
}

// ClientID is the client the caller is limited to (a member with the
// client role), or "" for every other caller. A service whose RPC is
// open_to_client without a client_field scopes its queries by it.
func ClientID(ctx context.Context) string {
	p, _ := FromContext(ctx)
	return p.ClientID
}

// SiteID is the site the caller of a tenant RPC acts for (see AgencyID).
func SiteID(ctx context.Context) string {
	p, _ := FromContext(ctx)
	return p.SiteID
}
