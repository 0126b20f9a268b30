package studio

import (
	"net/http"
	"net/url"

	auditv1 "github.com/atrium-hq/atrium/proto/atrium/audit/v1"
	crmv1 "github.com/atrium-hq/atrium/proto/atrium/crm/v1"
)

// auditPageSize is how many events a page of the audit trail shows.
const auditPageSize = 50

// auditActor is a choice of the audit page's "who" filter.
type auditActor struct {
	ID, Label string
}

// auditData is the audit trail page.
type auditData struct {
	Filter auditFilter
	Events []*auditv1.AuditEvent
	// Actors are the filter's choices; Name names an actor's id (a user's
	// or a key's) when the agency's lists know it.
	Actors []auditActor
	Name   map[string]string
	// Next is the next page's address; "" on the last. First is the
	// first page's, with the same filter, when this is not the first.
	Next, First string
	Error       string
}

func (s *Studio) auditPage(v *visit) error {
	f := readAuditFilter(v.r.URL.Query())
	d := auditData{Filter: f, Name: map[string]string{}}
	if f.Cursor != "" {
		d.First = withQuery(v.path("audit"), f.Query())
	}
	req, err := f.request(auditPageSize)
	if err != nil {
		return err
	}
	resp, err := call(v, auditv1.AuditService_ListAuditEvents_FullMethodName, s.audit.ListAuditEvents, req)
	if err != nil {
		if msg, ok := errForm(err); ok {
			d.Error = msg
			s.render(v, http.StatusBadRequest, "owner/audit", View{Title: "Audit trail"}, d)
			return nil
		}
		return err
	}
	d.Events = resp.GetAuditEvents()
	if c := resp.GetNextCursor(); c != "" {
		q := f.Query()
		q.Set("cursor", c)
		d.Next = withQuery(v.path("audit"), q)
	}
	// The people and keys behind the ids, for the filter and the table.
	if v.may(crmv1.PeopleService_ListMembers_FullMethodName) {
		if ms, err := call(v, crmv1.PeopleService_ListMembers_FullMethodName, s.people.ListMembers, &crmv1.ListMembersRequest{Limit: new(int32(200))}); err == nil {
			for _, m := range ms.GetMembers() {
				if uid := m.GetUserId().GetValue(); uid != "" {
					d.Name[uid] = memberLabel(m)
					d.Actors = append(d.Actors, auditActor{ID: uid, Label: memberLabel(m) + " (" + m.GetEmail() + ")"})
				}
			}
		}
	}
	if v.may(crmv1.PeopleService_ListAgencyKeys_FullMethodName) {
		if ks, err := call(v, crmv1.PeopleService_ListAgencyKeys_FullMethodName, s.people.ListAgencyKeys, &crmv1.ListAgencyKeysRequest{Limit: new(int32(200))}); err == nil {
			for _, k := range ks.GetKeys() {
				d.Name[k.GetId()] = "key " + k.GetName()
				d.Actors = append(d.Actors, auditActor{ID: k.GetId(), Label: "Key " + k.GetName() + " (" + k.GetPrefix() + "…)"})
			}
		}
	}
	d.Actors = append(d.Actors, auditActor{ID: "admin", Label: "Atrium's operator"})
	d.Name["admin"] = "Atrium's operator"
	s.render(v, http.StatusOK, "owner/audit", View{Title: "Audit trail"}, d)
	return nil
}

// withQuery is path with query q, if any.
func withQuery(path string, q url.Values) string {
	if len(q) == 0 {
		return path
	}
	return path + "?" + q.Encode()
}
