package gateway

import (
	"context"
	"net/http"
	"slices"
	"strings"

	"google.golang.org/grpc/metadata"

	"github.com/atrium-hq/atrium/platform/apperr"
	"github.com/atrium-hq/atrium/platform/principal"
	collectionsv1 "github.com/atrium-hq/atrium/proto/atrium/collections/v1"
)

// CORS: browsers as clients of the public API. A preflight carries no key,
// so it cannot name a site: the gateway answers every preflight of a route
// with that route's methods and headers for the asking origin, and judges
// the origin on the request itself, whose key names the site. A request
// from an origin the site does not allow is refused (403) before anything
// runs, so a preflight's answer unlocks nothing. Credentials (cookies) are
// never allowed: the key is sent explicitly.

// corsMaxAge is how long a browser may reuse a preflight's answer, in
// seconds.
const corsMaxAge = "600"

// exposedHeaders are the response headers a page may read.
var exposedHeaders = "ETag, Retry-After, Atrium-Trace-Id"

// isPreflight reports whether r is a CORS preflight.
func isPreflight(r *http.Request) bool {
	return r.Method == http.MethodOptions && r.Header.Get("Origin") != "" && r.Header.Get("Access-Control-Request-Method") != ""
}

// preflight answers a CORS preflight on the public listener: 204 with the
// methods the path takes and the headers those methods read, or 404 for a
// path no route takes.
func (g *Gateway) preflight(l *listener, w http.ResponseWriter, r *http.Request) {
	methods := l.routes.methods.Allowed(r.URL.Path)
	if l.routes.streamed["POST "+r.URL.Path] != ordinary && !slices.Contains(methods, http.MethodPost) {
		methods = append(methods, http.MethodPost)
	}
	h := w.Header()
	h.Add("Vary", "Origin")
	h.Add("Vary", "Access-Control-Request-Method")
	h.Add("Vary", "Access-Control-Request-Headers")
	if len(methods) == 0 {
		w.WriteHeader(http.StatusNotFound)
		return
	}
	headers := []string{"Authorization"}
	for _, m := range methods {
		switch m {
		case http.MethodPost:
			headers = append(headers, "Content-Type", "Idempotency-Key")
		case http.MethodPut:
			headers = append(headers, "Content-Type")
		case http.MethodPatch:
			headers = append(headers, "Content-Type", "If-Match")
		case http.MethodDelete:
			headers = append(headers, "If-Match")
		}
	}
	slices.Sort(headers)
	h.Set("Access-Control-Allow-Origin", r.Header.Get("Origin"))
	h.Set("Access-Control-Allow-Methods", strings.Join(methods, ", "))
	h.Set("Access-Control-Allow-Headers", strings.Join(slices.Compact(headers), ", "))
	h.Set("Access-Control-Max-Age", corsMaxAge)
	w.WriteHeader(http.StatusNoContent)
}

// checkOrigin judges a public request that names an Origin: the key's site
// must allow it, exactly or through * for a key that cannot write. When it
// does, the response may be read by the page (Access-Control-Allow-Origin).
func (g *Gateway) checkOrigin(ctx context.Context, w http.ResponseWriter, p principal.Principal, origin string) error {
	w.Header().Add("Vary", "Origin")
	if p.SiteID == "" {
		return apperr.PermissionDenied("a request from a web page (Origin %s) needs a key bound to a site whose allowed_origins include it; this key is bound to none", origin)
	}
	origins, err := g.siteOrigins(ctx, p.SiteID)
	if err != nil {
		return err
	}
	switch {
	case slices.Contains(origins, origin):
	case slices.Contains(origins, "*"):
		if p.HasScope(principal.ScopeWrite) && !p.PublishedOnly {
			return apperr.PermissionDenied("the site allows origin %s only through *, which serves keys that cannot write; this key has the write scope: use a read or published_only key in web pages, or list the origin in the site's allowed_origins", origin)
		}
	default:
		return apperr.PermissionDenied("origin %s is not among the site's allowed_origins (set them with PUT /admin/v1/sites/{site_id}/allowed_origins)", origin)
	}
	w.Header().Set("Access-Control-Allow-Origin", origin)
	w.Header().Set("Access-Control-Expose-Headers", exposedHeaders)
	return nil
}

// siteOrigins asks the collections service for a site's allowed origins,
// as the gateway itself (a service acting for no tenant). Only requests
// that name an Origin pay for it.
func (g *Gateway) siteOrigins(ctx context.Context, siteID string) ([]string, error) {
	conn := g.conn("collections")
	if conn == nil {
		return nil, apperr.Unavailable(nil, "cannot check the request's origin: the collections service is not configured")
	}
	md := metadata.Pairs(principal.MetadataKey, g.signer.Token(principal.Principal{Kind: principal.KindService, Subject: "gateway"}))
	resp, err := collectionsv1.NewCollectionsAdminServiceClient(conn).GetSite(metadata.NewOutgoingContext(ctx, md), &collectionsv1.GetSiteRequest{SiteId: siteID})
	if err != nil {
		return nil, apperr.Unavailable(err, "cannot check the request's origin now: the collections service did not answer; retry later")
	}
	return resp.GetSite().GetAllowedOrigins(), nil
}
