package studio

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	actionsv1 "github.com/atrium-hq/atrium/proto/atrium/actions/v1"
	collectionsv1 "github.com/atrium-hq/atrium/proto/atrium/collections/v1"
	crmv1 "github.com/atrium-hq/atrium/proto/atrium/crm/v1"
)

// The operator's console: the agencies, their credits, sites and keys, for
// whoever holds the admin token. It is served at /studio/ of the admin
// listener only (never the public one, which the admin API is not on
// either), and calls the admin RPCs with the admin principal the gateway
// makes from the token typed into its sign-in form (Gate.OperatorSignIn):
// the same principal the admin API's Authorization header gives.

// OperatorHandler serves the operator's console; mount it at Prefix of the
// admin listener.
func (s *Studio) OperatorHandler() http.Handler {
	m := http.NewServeMux()
	m.HandleFunc("GET /studio/static/{file}", s.static)
	m.HandleFunc("GET /studio/sign-in", s.opSignInPage)
	m.HandleFunc("POST /studio/sign-in", s.opSignIn)
	s.opHandle(m, "POST /studio/sign-out", s.opSignOut)
	s.opHandle(m, "GET /studio/{$}", s.opAgencies)
	s.opHandle(m, "POST /studio/agencies", s.opCreateAgency)
	s.opHandle(m, "GET /studio/agencies/{agency}", s.opAgency)
	s.opHandle(m, "POST /studio/agencies/{agency}/credits", s.opAddCredits)
	s.opHandle(m, "POST /studio/keys/{key}/revoke", s.opRevokeKey)
	m.HandleFunc("/studio/", func(w http.ResponseWriter, r *http.Request) {
		s.problem(&visit{s: s, w: w, r: r, operator: true}, http.StatusNotFound, "There is no page at this address.", "Go back to the list of agencies.")
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		securityHeaders(w.Header())
		m.ServeHTTP(w, r)
	})
}

// opHandle registers an operator's page: the request must carry the
// operator's cookie (and, for a POST, its CSRF token, from this origin).
func (s *Studio) opHandle(m *http.ServeMux, pattern string, page func(*visit) error) {
	m.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		v := &visit{s: s, w: w, r: r, operator: true}
		p, csrf, err := s.cfg.Gate.Operator(r)
		if err != nil {
			if r.Method == http.MethodGet {
				http.Redirect(w, r, Prefix+"sign-in", http.StatusSeeOther)
				return
			}
			s.problem(v, http.StatusUnauthorized, "Your operator session has ended.", "Sign in again with the admin token.")
			return
		}
		v.admin, v.opCSRF = p, csrf
		if err := checkText(r.URL.Path, r.URL.Query()); err != nil {
			s.fail(v, err)
			return
		}
		if r.Method == http.MethodPost {
			if err := s.cfg.Gate.SameOrigin(r); err != nil {
				s.fail(v, err)
				return
			}
			_ = r.ParseForm()
			if r.PostFormValue("csrf_token") != csrf {
				s.fail(v, status.Error(codes.PermissionDenied, "this form is out of date or was not sent by the Studio (its security token is missing or wrong): reload the page and send it again"))
				return
			}
			if err := checkText("", r.PostForm); err != nil {
				s.fail(v, err)
				return
			}
		}
		if err := page(v); err != nil {
			s.fail(v, err)
		}
	})
}

func (s *Studio) opSignInPage(w http.ResponseWriter, r *http.Request) {
	s.render(&visit{s: s, w: w, r: r, operator: true}, http.StatusOK, "operator/sign-in", View{Title: "Operator sign-in"}, struct{ Error string }{})
}

func (s *Studio) opSignIn(w http.ResponseWriter, r *http.Request) {
	v := &visit{s: s, w: w, r: r, operator: true}
	if err := s.cfg.Gate.SameOrigin(r); err != nil {
		s.fail(v, err)
		return
	}
	_ = r.ParseForm()
	if ok, wait := s.cfg.Gate.AllowSignIn(r, ""); !ok {
		s.render(v, http.StatusTooManyRequests, "operator/sign-in", View{Title: "Operator sign-in"},
			struct{ Error string }{refuseAttempts(w, wait, "attempts")})
		return
	}
	c, err := s.cfg.Gate.OperatorSignIn(r, strings.TrimSpace(r.PostFormValue("token")))
	if err != nil {
		s.render(v, http.StatusUnauthorized, "operator/sign-in", View{Title: "Operator sign-in"},
			struct{ Error string }{"That is not this deployment's admin token (--admin-token). Check it and try again."})
		return
	}
	http.SetCookie(w, c)
	http.Redirect(w, r, Prefix, http.StatusSeeOther)
}

func (s *Studio) opSignOut(v *visit) error {
	http.SetCookie(v.w, s.cfg.Gate.OperatorSignOut(v.r))
	http.Redirect(v.w, v.r, Prefix+"sign-in", http.StatusSeeOther)
	return nil
}

// opAgencyRow is an agency in the operator's list.
type opAgencyRow struct {
	Agency  *crmv1.Agency
	Balance *actionsv1.Balance
}

type opAgenciesData struct {
	Agencies []opAgencyRow
	Page     int
	More     bool
	Error    string
	Name     string
}

const opPageSize = 50

func (s *Studio) opAgencies(v *visit) error {
	page, _ := strconv.Atoi(v.r.URL.Query().Get("page"))
	page = min(max(page, 1), 100_000)
	resp, err := opCall(v, s.crmAdmin.ListAgencies, &crmv1.ListAgenciesRequest{Limit: new(int32(opPageSize + 1)), Offset: new(int32((page - 1) * opPageSize))}) //nolint:gosec // G115: page is at most 100,000
	if err != nil {
		return err
	}
	d := opAgenciesData{Page: page}
	as := resp.GetAgencies()
	if d.More = len(as) > opPageSize; d.More {
		as = as[:opPageSize]
	}
	for _, a := range as {
		b, err := opCall(v, s.actionsAdmin.GetCredits, &actionsv1.GetCreditsRequest{AgencyId: a.GetId()})
		if err != nil {
			return err
		}
		d.Agencies = append(d.Agencies, opAgencyRow{a, b.GetBalance()})
	}
	s.render(v, http.StatusOK, "operator/agencies", View{Title: "Agencies"}, d)
	return nil
}

func (s *Studio) opCreateAgency(v *visit) error {
	name := strings.TrimSpace(v.r.PostFormValue("name"))
	resp, err := opCall(v, s.crmAdmin.CreateAgency, &crmv1.CreateAgencyRequest{Name: name})
	if err != nil {
		if msg, ok := errForm(err); ok {
			s.render(v, http.StatusBadRequest, "operator/agencies", View{Title: "Agencies"}, opAgenciesData{Error: msg, Name: name, Page: 1})
			return nil
		}
		return err
	}
	v.setFlash("Agency " + resp.GetAgency().GetName() + " created.")
	return v.redirect(Prefix+"agencies/"+url.PathEscape(resp.GetAgency().GetId()), "")
}

type opAgencyData struct {
	Agency  *crmv1.Agency
	Balance *actionsv1.Balance
	Sites   []*collectionsv1.Site
	Keys    []*crmv1.APIKey
	Error   string
}

func (s *Studio) opAgency(v *visit) error {
	return s.opAgencyPage(v, http.StatusOK, "")
}

func (s *Studio) opAgencyPage(v *visit, code int, formErr string) error {
	id := v.r.PathValue("agency")
	// The admin API has no GetAgency: the agency is found in the list.
	var agency *crmv1.Agency
	for off := int32(0); agency == nil; off += 200 {
		resp, err := opCall(v, s.crmAdmin.ListAgencies, &crmv1.ListAgenciesRequest{Limit: new(int32(200)), Offset: new(off)})
		if err != nil {
			return err
		}
		for _, a := range resp.GetAgencies() {
			if a.GetId() == id {
				agency = a
			}
		}
		if len(resp.GetAgencies()) < 200 {
			break
		}
	}
	if agency == nil {
		return status.Errorf(codes.NotFound, "no agency %q", id)
	}
	d := opAgencyData{Agency: agency, Error: formErr}
	credits, err := opCall(v, s.actionsAdmin.GetCredits, &actionsv1.GetCreditsRequest{AgencyId: id})
	if err != nil {
		return err
	}
	d.Balance = credits.GetBalance()
	sites, err := opCall(v, s.collectionsAdmin.ListSites, &collectionsv1.ListSitesRequest{AgencyId: id, Limit: new(int32(200))})
	if err != nil {
		return err
	}
	d.Sites = sites.GetSites()
	keys, err := opCall(v, s.crmAdmin.ListKeys, &crmv1.ListKeysRequest{AgencyId: id, Limit: new(int32(200))})
	if err != nil {
		return err
	}
	d.Keys = keys.GetKeys()
	s.render(v, code, "operator/agency", View{Title: agency.GetName(), Crumbs: []Link{{Label: "Agencies", Href: Prefix}}}, d)
	return nil
}

func (s *Studio) opAddCredits(v *visit) error {
	id := v.r.PathValue("agency")
	ai, errAI := strconv.ParseInt(strings.TrimSpace(v.r.PostFormValue("ai")), 10, 32)
	data, errData := strconv.ParseInt(strings.TrimSpace(v.r.PostFormValue("data")), 10, 32)
	if v.r.PostFormValue("ai") == "" {
		ai, errAI = 0, nil
	}
	if v.r.PostFormValue("data") == "" {
		data, errData = 0, nil
	}
	if errAI != nil || errData != nil {
		return s.opAgencyPage(v, http.StatusBadRequest, "Credits are whole numbers: AI credits and data credits to add (or a negative number to take away).")
	}
	if _, err := opCall(v, s.actionsAdmin.AddCredits, &actionsv1.AddCreditsRequest{AgencyId: id, Ai: int32(ai), Data: int32(data)}); err != nil {
		if msg, ok := errForm(err); ok {
			return s.opAgencyPage(v, http.StatusBadRequest, msg)
		}
		return err
	}
	v.setFlash("Credits added.")
	return v.redirect(Prefix+"agencies/"+url.PathEscape(id), "")
}

func (s *Studio) opRevokeKey(v *visit) error {
	resp, err := opCall(v, s.crmAdmin.RevokeKey, &crmv1.RevokeKeyRequest{KeyId: v.r.PathValue("key")})
	if err != nil {
		return err
	}
	v.setFlash("Key " + resp.GetKey().GetName() + " revoked: it stops working within seconds.")
	back := Prefix
	if a := resp.GetKey().GetAgencyId().GetValue(); a != "" {
		back = Prefix + "agencies/" + url.PathEscape(a)
	}
	return v.redirect(back, "")
}

// opCall calls an admin RPC as the operator (the admin principal).
func opCall[Req, Resp any](v *visit, fn func(context.Context, Req, ...grpc.CallOption) (Resp, error), req Req) (Resp, error) {
	return fn(v.s.cfg.Gate.Outgoing(v.r.Context(), v.r, v.admin), req)
}
