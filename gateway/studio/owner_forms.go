package studio

// The owner pages' forms as requests, and the sums the credits page draws:
// pure functions, tested on their own (owner_forms_test.go). The services
// check every value again; these only carry what the form said.

import (
	"cmp"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/atrium-hq/atrium/platform/principal"
	actionsv1 "github.com/atrium-hq/atrium/proto/atrium/actions/v1"
	auditv1 "github.com/atrium-hq/atrium/proto/atrium/audit/v1"
	crmv1 "github.com/atrium-hq/atrium/proto/atrium/crm/v1"
)

// memberForm is what the invitation and member forms send.
type memberForm struct {
	Email, Name, Role, ClientID string
	SiteIDs                     []string
}

// HasSite reports whether the form names site id (for its checkbox).
func (f memberForm) HasSite(id string) bool { return slices.Contains(f.SiteIDs, id) }

func readMemberForm(f url.Values) memberForm {
	return memberForm{
		Email:    strings.TrimSpace(f.Get("email")),
		Name:     strings.TrimSpace(f.Get("name")),
		Role:     strings.TrimSpace(f.Get("role")),
		ClientID: strings.TrimSpace(f.Get("client_id")),
		SiteIDs:  nonEmpty(f["site_ids"]),
	}
}

// formOfMember is a member's form as their record fills it.
func formOfMember(m *crmv1.Member) memberForm {
	return memberForm{Email: m.GetEmail(), Name: m.GetName(), Role: m.GetRole().GetValue(),
		ClientID: m.GetClientId().GetValue(), SiteIDs: m.GetSiteIds()}
}

// createRequest sends the sites for an editor only and the client for a
// client member only: the form shows both groups, and what belongs to
// another role than the chosen one is left out rather than refused.
func (f memberForm) createRequest() *crmv1.PeopleServiceCreateMemberRequest {
	req := &crmv1.PeopleServiceCreateMemberRequest{Email: f.Email, Name: f.Name, Role: f.Role}
	switch principal.Role(f.Role) {
	case principal.RoleEditor:
		req.SiteIds = f.SiteIDs
	case principal.RoleClient:
		req.ClientId = f.ClientID
	}
	return req
}

// updateRequest changes the member's name (when given), role, and the
// sites or client of that role: an editor with no site ticked edits every
// site, so the list is cleared.
func (f memberForm) updateRequest(id string) *crmv1.UpdateMemberRequest {
	req := &crmv1.UpdateMemberRequest{MemberId: id, Role: new(f.Role)}
	if f.Name != "" {
		req.Name = new(f.Name)
	}
	switch principal.Role(f.Role) {
	case principal.RoleEditor:
		req.SiteIds = f.SiteIDs
		req.ClearSiteIds = len(f.SiteIDs) == 0
	case principal.RoleClient:
		req.ClientId = new(f.ClientID)
	}
	return req
}

// keyForm is what the new key form sends.
type keyForm struct {
	Name          string
	Scopes        []string
	SiteID        string
	PublishedOnly bool
	// Expires is a date (2006-01-02) or empty for a key that does not
	// expire.
	Expires string
}

// HasScope reports whether the form ticks scope (for its checkbox).
func (k keyForm) HasScope(s string) bool { return slices.Contains(k.Scopes, s) }

func readKeyForm(f url.Values) keyForm {
	return keyForm{
		Name:          strings.TrimSpace(f.Get("name")),
		Scopes:        nonEmpty(f["scopes"]),
		SiteID:        strings.TrimSpace(f.Get("site_id")),
		PublishedOnly: f.Get("published_only") == "true",
		Expires:       strings.TrimSpace(f.Get("expires")),
	}
}

// request is the key form as CreateAgencyKey takes it. A key expires at
// the end of the chosen day (UTC), so that a key "until 31 December"
// works on the 31st.
func (k keyForm) request() (*crmv1.CreateAgencyKeyRequest, error) {
	req := &crmv1.CreateAgencyKeyRequest{Name: k.Name, Scopes: k.Scopes, SiteId: k.SiteID, PublishedOnly: k.PublishedOnly}
	if k.Expires != "" {
		day, err := time.Parse(time.DateOnly, k.Expires)
		if err != nil {
			return nil, status.Errorf(codes.InvalidArgument, "the expiry must be a date such as 2027-12-31; got %q", k.Expires)
		}
		req.ExpiresAt = timestamppb.New(day.Add(24*time.Hour - time.Second))
	}
	return req, nil
}

// auditFilter is the audit page's filter, from its query string.
type auditFilter struct {
	Actor, ResourceType, ResourceID, Action string
	// Since and Until are dates (2006-01-02), both days included.
	Since, Until string
	Cursor       string
}

func readAuditFilter(q url.Values) auditFilter {
	return auditFilter{
		Actor:        strings.TrimSpace(q.Get("actor")),
		ResourceType: strings.TrimSpace(q.Get("resource_type")),
		ResourceID:   strings.TrimSpace(q.Get("resource_id")),
		Action:       strings.TrimSpace(q.Get("action")),
		Since:        strings.TrimSpace(q.Get("since")),
		Until:        strings.TrimSpace(q.Get("until")),
		Cursor:       q.Get("cursor"),
	}
}

// request is the filter as ListAuditEvents takes it: the dates as RFC
// 3339 times, until the end of the Until day.
func (f auditFilter) request(limit int32) (*auditv1.ListAuditEventsRequest, error) {
	req := &auditv1.ListAuditEventsRequest{Actor: f.Actor, ResourceType: f.ResourceType, ResourceId: f.ResourceID,
		Action: f.Action, Cursor: f.Cursor, Limit: new(limit)}
	if f.Since != "" {
		d, err := time.Parse(time.DateOnly, f.Since)
		if err != nil {
			return nil, status.Errorf(codes.InvalidArgument, "from must be a date such as 2026-11-01; got %q", f.Since)
		}
		req.Since = d.Format(time.RFC3339)
	}
	if f.Until != "" {
		d, err := time.Parse(time.DateOnly, f.Until)
		if err != nil {
			return nil, status.Errorf(codes.InvalidArgument, "to must be a date such as 2026-11-30; got %q", f.Until)
		}
		req.Until = d.Add(24 * time.Hour).Format(time.RFC3339)
	}
	return req, nil
}

// Query is the filter as a query string, without the cursor, for the
// next page's link (with its own cursor).
func (f auditFilter) Query() url.Values {
	q := url.Values{}
	for k, v := range map[string]string{"actor": f.Actor, "resource_type": f.ResourceType, "resource_id": f.ResourceID,
		"action": f.Action, "since": f.Since, "until": f.Until} {
		if v != "" {
			q.Set(k, v)
		}
	}
	return q
}

// creditTally is what runs spent, summed for one action or client.
type creditTally struct {
	Label    string
	AI, Data int64
	Runs     int
}

// Total is AI and data credits together (the bars' length).
func (c creditTally) Total() int64 { return c.AI + c.Data }

// tallyCredits sums the credits the runs created at or after since spent,
// by key (the action, the client), the largest total first and ties by
// label.
func tallyCredits(runs []*actionsv1.Run, since time.Time, key func(*actionsv1.Run) string) []creditTally {
	by := map[string]*creditTally{}
	for _, r := range runs {
		if r.GetCreatedAt() == nil || r.GetCreatedAt().AsTime().Before(since) {
			continue
		}
		k := key(r)
		t := by[k]
		if t == nil {
			t = &creditTally{Label: k}
			by[k] = t
		}
		t.AI += int64(r.GetCredits().GetSpent().GetAi())
		t.Data += int64(r.GetCredits().GetSpent().GetData())
		t.Runs++
	}
	out := make([]creditTally, 0, len(by))
	for _, t := range by {
		out = append(out, *t)
	}
	slices.SortFunc(out, func(a, b creditTally) int {
		return cmp.Or(cmp.Compare(b.Total(), a.Total()), cmp.Compare(a.Label, b.Label))
	})
	return out
}

// barsOf is a tally as chart.Bars takes it.
func barsOf(ts []creditTally) ([]string, []float64) {
	labels, values := make([]string, len(ts)), make([]float64, len(ts))
	for i, t := range ts {
		labels[i], values[i] = t.Label, float64(t.Total())
	}
	return labels, values
}

func nonEmpty(vs []string) []string {
	var out []string
	for _, v := range vs {
		if v = strings.TrimSpace(v); v != "" && !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}

// plural is "1 session" or "3 sessions".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
