package studio

import (
	"net/http"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	collectionsv1 "github.com/atrium-hq/atrium/proto/atrium/collections/v1"
	crmv1 "github.com/atrium-hq/atrium/proto/atrium/crm/v1"
)

// keysData is the API keys page: the agency's keys and the form for a new
// one.
type keysData struct {
	Keys      []*crmv1.APIKey
	Sites     []*collectionsv1.Site
	SiteName  map[string]string
	Form      keyForm
	Error     string
	CanCreate bool
	CanRevoke bool
	More      bool
}

func (s *Studio) keysPage(v *visit) error {
	return s.showKeys(v, http.StatusOK, keyForm{Scopes: []string{"read"}}, "")
}

func (s *Studio) showKeys(v *visit, code int, form keyForm, problem string) error {
	resp, err := call(v, crmv1.PeopleService_ListAgencyKeys_FullMethodName, s.people.ListAgencyKeys, &crmv1.ListAgencyKeysRequest{Limit: new(int32(200))})
	if err != nil {
		return err
	}
	d := keysData{Keys: resp.GetKeys(), SiteName: map[string]string{}, Form: form, Error: problem, More: len(resp.GetKeys()) >= 200,
		CanCreate: v.may(crmv1.PeopleService_CreateAgencyKey_FullMethodName),
		CanRevoke: v.may(crmv1.PeopleService_RevokeAgencyKey_FullMethodName)}
	if v.may(collectionsv1.SchemaService_ListAgencySites_FullMethodName) {
		sites, err := call(v, collectionsv1.SchemaService_ListAgencySites_FullMethodName, s.schema.ListAgencySites, &collectionsv1.ListAgencySitesRequest{})
		if err != nil && status.Code(err) != codes.Unimplemented {
			return err
		}
		d.Sites = sites.GetSites()
		for _, x := range d.Sites {
			d.SiteName[x.GetId()] = x.GetName()
		}
	}
	s.render(v, code, "owner/keys", View{Title: "API keys"}, d)
	return nil
}

// keyCreatedData is the one page that shows a key's secret.
type keyCreatedData struct {
	Key *crmv1.APIKey
}

func (s *Studio) createKey(v *visit) error {
	form := readKeyForm(v.r.PostForm)
	req, err := form.request()
	if err == nil {
		var resp *crmv1.CreateAgencyKeyResponse
		resp, err = call(v, crmv1.PeopleService_CreateAgencyKey_FullMethodName, s.people.CreateAgencyKey, req)
		if err == nil {
			// The secret is in this answer only: the CRM keeps its hash.
			s.render(v, http.StatusOK, "owner/key-created", View{Title: "Key " + resp.GetKey().GetName() + " created",
				Crumbs: []Link{{Label: "API keys", Href: v.path("keys")}}}, keyCreatedData{Key: resp.GetKey()})
			return nil
		}
	}
	if msg, ok := errForm(err); ok {
		return s.showKeys(v, formStatus(err), form, msg)
	}
	return err
}

func (s *Studio) revokeKey(v *visit) error {
	resp, err := call(v, crmv1.PeopleService_RevokeAgencyKey_FullMethodName, s.people.RevokeAgencyKey, &crmv1.RevokeAgencyKeyRequest{KeyId: v.r.PathValue("key")})
	if err != nil {
		if msg, ok := errForm(err); ok {
			return s.showKeys(v, formStatus(err), keyForm{Scopes: []string{"read"}}, msg)
		}
		return err
	}
	v.setFlash("Revoked the key " + resp.GetKey().GetName() + " (" + resp.GetKey().GetPrefix() + "…): it stops working at once.")
	return v.redirect(v.path("keys"), "")
}
