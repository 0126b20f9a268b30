package studio

// The owner's pages (members, API keys, credits, the audit trail) and a
// client member's own view (results). Each page asks the services only,
// through the same RPCs as the JSON API's routes; who may open which page
// is the judge's answer (a manager opening members gets the service's 403),
// and the forms show only what the person may do (visit.may).

import (
	"net/http"
	"slices"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/atrium-hq/atrium/platform/principal"
	collectionsv1 "github.com/atrium-hq/atrium/proto/atrium/collections/v1"
	crmv1 "github.com/atrium-hq/atrium/proto/atrium/crm/v1"
)

func (s *Studio) ownerRoutes() {
	s.handle("GET /studio/a/{agency}/members", s.membersPage)
	s.handle("POST /studio/a/{agency}/members", s.inviteMember)
	s.handle("GET /studio/a/{agency}/members/{member}", s.memberPage)
	s.handle("POST /studio/a/{agency}/members/{member}", s.updateMember)
	s.handle("POST /studio/a/{agency}/members/{member}/invitation", s.reinviteMember)
	s.handle("POST /studio/a/{agency}/members/{member}/end-sessions", s.endMemberSessions)
	s.handle("POST /studio/a/{agency}/members/{member}/delete", s.deleteMember)
	s.handle("GET /studio/a/{agency}/keys", s.keysPage)
	s.handle("POST /studio/a/{agency}/keys", s.createKey)
	s.handle("POST /studio/a/{agency}/keys/{key}/revoke", s.revokeKey)
	s.handle("GET /studio/a/{agency}/credits", s.creditsPage)
	s.handle("GET /studio/a/{agency}/audit", s.auditPage)
	s.handle("GET /studio/a/{agency}/results", s.resultsPage)
	s.handle("GET /studio/a/{agency}/results/{dataset}", s.resultsDatasetPage)
}

// maxMemberPages bounds how many pages of 200 members a page reads to find
// one member (there is no RPC that reads one): 2,000 members.
const maxMemberPages = 10

// memberChoices are the sites and clients the member forms offer, with
// their names for the lists.
type memberChoices struct {
	Roles     []string
	Sites     []*collectionsv1.Site
	Clients   []*crmv1.Client
	SiteName  map[string]string
	ClientNm  map[string]string
	CanInvite bool
}

// choices reads the agency's sites and clients for the member forms; a
// part the person may not read is left empty (the form then offers none).
func (s *Studio) choices(v *visit) (memberChoices, error) {
	c := memberChoices{SiteName: map[string]string{}, ClientNm: map[string]string{}}
	for _, r := range principal.Roles() {
		c.Roles = append(c.Roles, string(r))
	}
	if v.may(collectionsv1.SchemaService_ListAgencySites_FullMethodName) {
		resp, err := call(v, collectionsv1.SchemaService_ListAgencySites_FullMethodName, s.schema.ListAgencySites, &collectionsv1.ListAgencySitesRequest{})
		if err != nil && status.Code(err) != codes.Unimplemented {
			return c, err
		}
		c.Sites = resp.GetSites()
		for _, x := range c.Sites {
			c.SiteName[x.GetId()] = x.GetName()
		}
	}
	if v.may(crmv1.AgencyClientsService_ListClients_FullMethodName) {
		resp, err := call(v, crmv1.AgencyClientsService_ListClients_FullMethodName, s.agencyClients.ListClients, &crmv1.AgencyClientsServiceListClientsRequest{})
		if err != nil && status.Code(err) != codes.Unimplemented {
			return c, err
		}
		c.Clients = resp.GetClients()
		for _, x := range c.Clients {
			c.ClientNm[x.GetId()] = x.GetName()
		}
	}
	c.CanInvite = v.may(crmv1.PeopleService_CreateMember_FullMethodName)
	return c, nil
}

// membersData is the members page: the list and the invitation form.
type membersData struct {
	memberChoices
	Members []*crmv1.Member
	Form    memberForm
	Error   string
	// More: the list stopped at its limit.
	More bool
}

func (s *Studio) membersPage(v *visit) error {
	return s.showMembers(v, http.StatusOK, memberForm{Role: string(principal.RoleEditor)}, "")
}

// showMembers renders the members page; form and problem are an
// invitation form sent back to be corrected.
func (s *Studio) showMembers(v *visit, code int, form memberForm, problem string) error {
	resp, err := call(v, crmv1.PeopleService_ListMembers_FullMethodName, s.people.ListMembers, &crmv1.ListMembersRequest{Limit: new(int32(200))})
	if err != nil {
		return err
	}
	c, err := s.choices(v)
	if err != nil {
		return err
	}
	d := membersData{memberChoices: c, Members: resp.GetMembers(), Form: form, Error: problem, More: len(resp.GetMembers()) >= 200}
	s.render(v, code, "owner/members", View{Title: "Members"}, d)
	return nil
}

// invitedData is the page that shows an invitation's link, once.
type invitedData struct {
	Member  *crmv1.Member
	URL     string
	Expires time.Time
	Again   bool
}

func (s *Studio) inviteMember(v *visit) error {
	form := readMemberForm(v.r.PostForm)
	resp, err := call(v, crmv1.PeopleService_CreateMember_FullMethodName, s.people.CreateMember, form.createRequest())
	if err != nil {
		if msg, ok := errForm(err); ok {
			return s.showMembers(v, formStatus(err), form, msg)
		}
		return err
	}
	if resp.GetInvitation() == nil {
		v.setFlash("Added " + resp.GetMember().GetEmail() + " without a role: they cannot sign in until you give them one.")
		return v.redirect(v.path("members", resp.GetMember().GetId()), "")
	}
	s.showInvitation(v, resp.GetMember(), resp.GetInvitation(), false)
	return nil
}

// showInvitation shows an invitation's link: the answer to the form that
// made it, and never again (only the token's hash is kept).
func (s *Studio) showInvitation(v *visit, m *crmv1.Member, inv *crmv1.Invitation, again bool) {
	link := inv.GetUrl()
	if link == "" || strings.HasPrefix(link, "/") {
		link = requestOrigin(v.r) + Prefix + "invitations/" + inv.GetToken()
	}
	d := invitedData{Member: m, URL: link, Again: again}
	if inv.GetExpiresAt() != nil {
		d.Expires = inv.GetExpiresAt().AsTime()
	}
	s.render(v, http.StatusOK, "owner/invited", View{Title: "Invitation for " + memberLabel(m),
		Crumbs: []Link{{Label: "Members", Href: v.path("members")}}}, d)
}

// requestOrigin is the scheme and host the person reached the Studio at.
func requestOrigin(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

// memberLabel names a member on a page: their name, or their email.
func memberLabel(m *crmv1.Member) string {
	if m.GetName() != "" {
		return m.GetName()
	}
	return m.GetEmail()
}

// formStatus is the answer's status for a form sent back: 409 for a
// conflict with what exists, 400 for the input itself.
func formStatus(err error) int {
	switch status.Code(err) {
	case codes.AlreadyExists, codes.FailedPrecondition, codes.Aborted:
		return http.StatusConflict
	}
	return http.StatusBadRequest
}

// findMember reads the agency's members until it finds id: another
// agency's member, or one that does not exist, is NotFound.
func (s *Studio) findMember(v *visit, id string) (*crmv1.Member, error) {
	for page := range maxMemberPages {
		resp, err := call(v, crmv1.PeopleService_ListMembers_FullMethodName, s.people.ListMembers,
			&crmv1.ListMembersRequest{Limit: new(int32(200)), Offset: new(int32(page * 200))})
		if err != nil {
			return nil, err
		}
		ms := resp.GetMembers()
		if i := slices.IndexFunc(ms, func(m *crmv1.Member) bool { return m.GetId() == id }); i >= 0 {
			return ms[i], nil
		}
		if len(ms) < 200 {
			break
		}
	}
	return nil, status.Errorf(codes.NotFound, "member %s is not a member of this agency", id)
}

// memberData is a member's page.
type memberData struct {
	memberChoices
	Member *crmv1.Member
	Form   memberForm
	Error  string
	// CanUpdate, CanInvite…: the controls the person may use.
	CanUpdate, CanReinvite, CanEnd, CanDelete bool
}

func (s *Studio) memberPage(v *visit) error {
	m, err := s.findMember(v, v.r.PathValue("member"))
	if err != nil {
		return err
	}
	return s.showMember(v, http.StatusOK, m, formOfMember(m), "")
}

func (s *Studio) showMember(v *visit, code int, m *crmv1.Member, form memberForm, problem string) error {
	c, err := s.choices(v)
	if err != nil {
		return err
	}
	d := memberData{memberChoices: c, Member: m, Form: form, Error: problem,
		CanUpdate:   v.may(crmv1.PeopleService_UpdateMember_FullMethodName),
		CanReinvite: v.may(crmv1.PeopleService_CreateInvitation_FullMethodName) && m.GetStatus() == "invited",
		CanEnd:      v.may(crmv1.PeopleService_EndMemberSessions_FullMethodName) && m.GetStatus() == "active",
		CanDelete:   v.may(crmv1.PeopleService_DeleteMember_FullMethodName),
	}
	s.render(v, code, "owner/member", View{Title: memberLabel(m), Crumbs: []Link{{Label: "Members", Href: v.path("members")}}}, d)
	return nil
}

// memberAction runs a write on the path's member; a refusal the owner
// can act on (the last owner, a member owning deals) is shown on the
// member's page, beside the controls.
func (s *Studio) memberAction(v *visit, write func(id string) error) error {
	id := v.r.PathValue("member")
	err := write(id)
	if err == nil {
		return nil
	}
	msg, ok := errForm(err)
	if !ok {
		return err
	}
	m, ferr := s.findMember(v, id)
	if ferr != nil {
		return err
	}
	form := formOfMember(m)
	if v.r.PostForm.Has("role") {
		form = readMemberForm(v.r.PostForm)
		form.Email = m.GetEmail()
	}
	return s.showMember(v, formStatus(err), m, form, msg)
}

func (s *Studio) updateMember(v *visit) error {
	return s.memberAction(v, func(id string) error {
		form := readMemberForm(v.r.PostForm)
		resp, err := call(v, crmv1.PeopleService_UpdateMember_FullMethodName, s.people.UpdateMember, form.updateRequest(id))
		if err != nil {
			return err
		}
		if resp.GetInvitation() != nil {
			s.showInvitation(v, resp.GetMember(), resp.GetInvitation(), false)
			return nil
		}
		v.setFlash("Saved " + memberLabel(resp.GetMember()) + ".")
		return v.redirect(v.path("members", id), "")
	})
}

func (s *Studio) reinviteMember(v *visit) error {
	return s.memberAction(v, func(id string) error {
		resp, err := call(v, crmv1.PeopleService_CreateInvitation_FullMethodName, s.people.CreateInvitation, &crmv1.CreateInvitationRequest{MemberId: id})
		if err != nil {
			return err
		}
		s.showInvitation(v, resp.GetMember(), resp.GetInvitation(), true)
		return nil
	})
}

func (s *Studio) endMemberSessions(v *visit) error {
	return s.memberAction(v, func(id string) error {
		resp, err := call(v, crmv1.PeopleService_EndMemberSessions_FullMethodName, s.people.EndMemberSessions, &crmv1.EndMemberSessionsRequest{MemberId: id})
		if err != nil {
			return err
		}
		v.setFlash(plural(int(resp.GetEnded()), "session", "sessions") + " ended: they are signed out everywhere.")
		return v.redirect(v.path("members", id), "")
	})
}

func (s *Studio) deleteMember(v *visit) error {
	return s.memberAction(v, func(id string) error {
		resp, err := call(v, crmv1.PeopleService_DeleteMember_FullMethodName, s.people.DeleteMember, &crmv1.DeleteMemberRequest{MemberId: id})
		if err != nil {
			return err
		}
		v.setFlash("Removed " + memberLabel(resp.GetMember()) + ": their sessions ended and the keys they issued are revoked.")
		return v.redirect(v.path("members"), "")
	})
}

// memberFields are the role, sites and client fields of a member form,
// which the invitation and the member's page share (partials/owner.html);
// Prefix keeps their ids apart.
type memberFields struct {
	memberChoices
	Form   memberForm
	Prefix string
}

// Fields are the choices with form's values, for the shared fields.
func (c memberChoices) Fields(form memberForm, prefix string) memberFields {
	return memberFields{memberChoices: c, Form: form, Prefix: prefix}
}
