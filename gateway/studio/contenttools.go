package studio

import (
	"net/http"
	"net/url"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	collectionsv1 "github.com/atrium-hq/atrium/proto/atrium/collections/v1"
)

// The content tools are the pages around a site's content that are not
// the editor itself: an item's revisions (compare, restore), the site's
// asset library (upload, alt text, delete) and the owner's schema builder
// (collections and their fields). Each page calls only the RPCs behind
// it; who may see and use what is the judge's (visit.may), never decided
// here.

// contenttoolsRoutes registers the content tools' pages.
func (s *Studio) contenttoolsRoutes() {
	const site = "/studio/a/{agency}/sites/{site}/"
	const item = site + "collections/{slug}/items/{item}/revisions"
	s.handle("GET "+item, s.revisionsPage)
	s.handle("GET "+item+"/{version}", s.revisionPage)
	s.handle("POST "+item+"/{version}/restore", s.restoreRevision)

	s.handle("GET "+site+"assets", s.assetsPage)
	s.handleUpload("POST "+site+"assets", s.uploadAsset)
	s.handle("GET "+site+"assets/{asset}", s.assetPage)
	s.handle("POST "+site+"assets/{asset}", s.updateAsset)
	s.handle("POST "+site+"assets/{asset}/delete", s.deleteAsset)

	s.handle("GET "+site+"schema", s.schemaPage)
	s.handle("POST "+site+"schema", s.createCollection)
	s.handle("GET "+site+"schema/{slug}", s.schemaCollectionPage)
	s.handle("POST "+site+"schema/{slug}", s.renameCollection)
	s.handle("POST "+site+"schema/{slug}/fields", s.addField)
	s.handle("POST "+site+"schema/{slug}/fields/{key}", s.changeField)
	s.handle("POST "+site+"schema/{slug}/fields/{key}/remove", s.removeField)
}

// maxUploadForm bounds the upload form's body: the largest file any
// deployment takes (--max-asset-bytes is at most 2 GiB − 1, as sizes are
// 32-bit in the API) and room for the form's other fields. The service's
// own limit, usually far lower, is applied to the file (Gate.Upload).
const maxUploadForm = 2<<30 + 1<<20

// handleUpload is handle for the upload form. The gateway passes its body
// on unread (IsUpload), as it does the API's upload, rather than reading
// it whole under --max-body-bytes: the body is bounded here, by the
// gateway's measure of an upload (Gate.UploadBody), before the visit reads
// it (visit.checkForm parses the whole form, to check its CSRF token).
func (s *Studio) handleUpload(pattern string, page func(*visit) error) {
	s.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		r.Body = s.cfg.Gate.UploadBody(w, r, maxUploadForm)
		// The body's read deadlines end with it: the connection's next
		// request is the server's again.
		defer func() { _ = http.NewResponseController(w).SetReadDeadline(time.Time{}) }()
		v, ok := s.begin(w, r)
		if !ok {
			return
		}
		if err := page(v); err != nil {
			s.fail(v, err)
		}
	})
}

// IsUpload reports whether a request is the Studio's upload form (POST
// /studio/a/{agency}/sites/{site}/assets): a transfer, which the gateway
// hands over with its body unread and no deadline, as the API's upload.
func IsUpload(method, path string) bool {
	if method != http.MethodPost || !strings.HasPrefix(path, Prefix+"a/") {
		return false
	}
	parts := strings.Split(strings.TrimPrefix(path, Prefix+"a/"), "/")
	return len(parts) == 4 && parts[0] != "" && parts[1] == "sites" && parts[2] != "" && parts[3] == "assets"
}

// siteCrumbs are the crumbs down to the visit's site: the sites, then the
// site by its name (its id when the name cannot be read).
func (s *Studio) siteCrumbs(v *visit) []Link {
	name := v.site
	if v.may(collectionsv1.SchemaService_ListAgencySites_FullMethodName) {
		resp, err := call(v, collectionsv1.SchemaService_ListAgencySites_FullMethodName, s.schema.ListAgencySites, &collectionsv1.ListAgencySitesRequest{})
		if err == nil {
			for _, st := range resp.GetSites() {
				if st.GetId() == v.site && st.GetName() != "" {
					name = st.GetName()
				}
			}
		}
	}
	return []Link{{Label: "Sites", Href: v.path("sites")}, {Label: name, Href: v.path("sites", v.site) + "/"}}
}

// collection is the site's collection slug, with its fields, from the
// content API's list (which every role that may read content may call).
func (s *Studio) collection(v *visit, slug string) (*collectionsv1.Collection, []*collectionsv1.Collection, error) {
	resp, err := call(v, collectionsv1.CollectionsService_ListCollections_FullMethodName, s.collections.ListCollections, &collectionsv1.ListCollectionsRequest{})
	if err != nil {
		return nil, nil, err
	}
	for _, c := range resp.GetCollections() {
		if c.GetSlug() == slug {
			return c, resp.GetCollections(), nil
		}
	}
	return nil, resp.GetCollections(), errNotFound("the site has no collection " + quote(slug))
}

// formCode is the status of a page re-drawn with a form's error.
func formCode(msg string) int {
	if strings.Contains(msg, "already") {
		return http.StatusConflict
	}
	return http.StatusBadRequest
}

func quote(s string) string { return "“" + s + "”" }

func errNotFound(msg string) error { return status.Error(codes.NotFound, msg) }

func errNotFoundCode(err error) bool { return status.Code(err) == codes.NotFound }

func urlQuery(s string) string { return url.QueryEscape(s) }
