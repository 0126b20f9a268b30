package principal

import (
	"strings"
	"testing"

	"github.com/atrium-hq/atrium/platform/apperr"
	accessv1 "github.com/atrium-hq/atrium/proto/atrium/access/v1"
)

// TestAuthorizeBindings is the binding half of the one judge: what each
// binding takes, and the words of each refusal, which the HTTP API shows.
func TestAuthorizeBindings(t *testing.T) {
	rw := []Scope{ScopeRead, ScopeWrite}
	site := Principal{Kind: KindKey, Subject: "k1", SiteID: "s", Scopes: rw}
	agency := Principal{Kind: KindKey, Subject: "k2", AgencyID: "a", Scopes: rw}
	both := Principal{Kind: KindKey, Subject: "k3", SiteID: "s", AgencyID: "a", Scopes: rw}
	neither := Principal{Kind: KindKey, Subject: "k4", Scopes: rw}
	actsForSite := Principal{Kind: KindService, Subject: "webhooks", SiteID: "s", Scopes: rw}
	rule := func(b Binding) Access {
		return Access{Caller: accessv1.Caller_CALLER_TENANT, Scope: ScopeWrite, Binding: b}
	}
	for _, c := range []struct {
		name string
		p    Principal
		b    Binding
		want string // "" allowed, else words of the refusal
	}{
		{"site key, site route", site, BindingSite, ""},
		{"agency key, site route", agency, BindingSite, "not bound to a site"},
		{"site key, agency route", site, BindingAgency, "not bound to an agency"},
		{"site key, site-or-agency route", site, BindingSiteOrAgency, ""},
		{"agency key, site-or-agency route", agency, BindingSiteOrAgency, ""},
		{"key bound to both, site-or-agency route", both, BindingSiteOrAgency, ""},
		{"service acting for a site, site-or-agency route", actsForSite, BindingSiteOrAgency, ""},
		{"key bound to neither, site-or-agency route", neither, BindingSiteOrAgency, "bound to neither a site nor an agency"},
	} {
		err := Authorize(c.p, rule(c.b))
		if c.want == "" {
			if err != nil {
				t.Errorf("%s: refused: %v", c.name, err)
			}
			continue
		}
		if apperr.KindOf(err) != apperr.KindPermissionDenied || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want PermissionDenied saying %q", c.name, err, c.want)
		}
	}
}

// TestAuthorizePublishedOnly: a published-only key calls the reads marked
// open to it, and is refused everything else, reads and writes alike,
// naming why and the operation, whatever scopes it carries.
func TestAuthorizePublishedOnly(t *testing.T) {
	p := Principal{Kind: KindKey, Subject: "k", SiteID: "s", Scopes: []Scope{ScopeRead, ScopeWrite}, PublishedOnly: true}
	open := Access{Caller: accessv1.Caller_CALLER_TENANT, Scope: ScopeRead, Binding: BindingSite, OpenToPublishedOnly: true}
	read := Access{Caller: accessv1.Caller_CALLER_TENANT, Scope: ScopeRead, Binding: BindingSiteOrAgency, Name: "GET /api/v1/webhooks"}
	write := Access{Caller: accessv1.Caller_CALLER_TENANT, Scope: ScopeWrite, Binding: BindingSite}
	if err := Authorize(p, open); err != nil {
		t.Fatalf("published-only read of published content refused: %v", err)
	}
	for _, c := range []struct {
		a    Access
		want []string
	}{
		{read, []string{"published_only", "GET /api/v1/webhooks is not among them", "collections"}},
		{write, []string{"published_only", "this operation is not among them"}},
	} {
		err := Authorize(p, c.a)
		if apperr.KindOf(err) != apperr.KindPermissionDenied {
			t.Fatalf("published-only key on %+v = %v, want PermissionDenied", c.a, err)
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("refusal %q does not say %q", err, w)
			}
		}
	}
	// The same key without the flag reads what it is refused above.
	p.PublishedOnly = false
	if err := Authorize(p, read); err != nil {
		t.Fatalf("an ordinary key refused a read: %v", err)
	}
}
