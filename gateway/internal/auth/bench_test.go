package auth

import (
	"testing"
	"time"

	"github.com/atrium-hq/atrium/platform/principal"
	accessv1 "github.com/atrium-hq/atrium/proto/atrium/access/v1"
	crmv1 "github.com/atrium-hq/atrium/proto/atrium/crm/v1"
)

// BenchmarkAuthenticateCached is the per-request cost of API key
// authentication when the key is in the cache: header parsing, format
// check, SHA-256 and the cache lookup.
func BenchmarkAuthenticateCached(b *testing.B) {
	crm := &countingCRM{key: activeKey()}
	k, _ := newKeys(b, crm, time.Hour)
	if _, err := k.Authenticate(b.Context(), "Bearer "+secretKey); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := k.Authenticate(b.Context(), "Bearer "+secretKey); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSessionAuthenticateCached is the per-request cost of a session
// cookie when the session is in the cache, with the person's principal
// made from their membership: the budget is that of a cached key
// (BenchmarkAuthenticateCached) plus 10%.
func BenchmarkSessionAuthenticateCached(b *testing.B) {
	crm := &sessionCRM{memberships: []*crmv1.Membership{{MemberId: "m1", AgencyId: "A", Role: "owner"}}}
	s, _, _ := newSessions(b, crm, time.Hour)
	choice := Choice{Access: principal.Access{Caller: accessv1.Caller_CALLER_TENANT, Scope: principal.ScopeRead, Binding: principal.BindingAgency, Resource: "clients"}}
	b.ReportAllocs()
	for b.Loop() {
		sess, err := s.Authenticate(b.Context(), sessionSecret)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := sess.Principal(b.Context(), choice, owners{}); err != nil {
			b.Fatal(err)
		}
	}
}
