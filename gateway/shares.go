package gateway

import (
	"context"
	"errors"
	"fmt"
	"html"
	"net/http"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/atrium-hq/atrium/gateway/internal/rest"
	"github.com/atrium-hq/atrium/platform/objstore"
	"github.com/atrium-hq/atrium/platform/principal"
	"github.com/atrium-hq/atrium/platform/publicfile"
	actionsv1 "github.com/atrium-hq/atrium/proto/atrium/actions/v1"
)

// A report's share link, /r/{token} (its HTML page) and /r/{token}.pdf
// (its PDF): what an agency sends its client, opened with no key. The
// token is resolved by the actions service (GetSharedReport, which only a
// service may call, so that the report's permanent file names never reach
// anyone who lacks a live link); the files then come from the object
// store as /media/ ones do. Unlike /media/, nothing is cached anywhere:
// a revoked link must stop working at once.

// sharePath is the prefix of the share links.
const sharePath = "/r/"

// shareTokenMax bounds a token: Atrium's are 22 characters (128 bits).
const shareTokenMax = 64

// sharePrincipal is who the gateway is when it resolves a token.
var sharePrincipal = principal.Principal{Kind: principal.KindService, Subject: "gateway"}

// serveShare answers GET or HEAD /r/{token}[.pdf].
func (g *Gateway) serveShare(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Cache-Control", "private, no-store")
	h.Set("X-Robots-Tag", "noindex, nofollow")
	h.Set("X-Content-Type-Options", "nosniff")
	// The token is in the address: no page the report links to learns it.
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Content-Security-Policy", scriptlessCSP)
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		h.Set("Allow", "GET, HEAD")
		rest.WriteJSON(w, http.StatusMethodNotAllowed, rest.Body{Error: fmt.Sprintf("method %s is not allowed on %s{token}; allowed: GET, HEAD", r.Method, sharePath)})
		return
	}
	token, _ := strings.CutPrefix(r.URL.Path, sharePath)
	token, pdf := strings.CutSuffix(token, ".pdf")
	if !validShareToken(token) {
		sharePage(w, http.StatusNotFound, "This report link does not exist. Check that the address was copied whole, or ask the agency that sent it for a new one.")
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), g.cfg.RequestTimeout)
	defer cancel()
	client := actionsv1.NewReportsServiceClient(g.conn("actions"))
	resp, err := client.GetSharedReport(g.signer.OutgoingContext(ctx, sharePrincipal), &actionsv1.GetSharedReportRequest{Token: token})
	switch {
	case status.Code(err) == codes.NotFound:
		sharePage(w, http.StatusNotFound, "This report link does not exist. Check that the address was copied whole, or ask the agency that sent it for a new one.")
		return
	case err != nil && r.Context().Err() != nil:
		return // the client went away
	case err != nil:
		g.cfg.Logger.ErrorContext(ctx, "resolve a report share link", "error", err)
		h.Set("Retry-After", "1")
		sharePage(w, http.StatusServiceUnavailable, "The report cannot be shown right now. Try again in a moment.")
		return
	case resp.GetState() != "active":
		sharePage(w, http.StatusGone, "This report link no longer works: it has "+resp.GetState()+". Ask the agency that sent it for a new one.")
		return
	}
	name := resp.GetHtmlName()
	if pdf {
		name = resp.GetPdfName()
	}
	key, ok := publicfile.MediaKey(name)
	if !ok || g.cfg.Objects == nil {
		g.cfg.Logger.ErrorContext(ctx, "a report share link names no servable file", "name", name, "object_store", g.cfg.Objects != nil)
		h.Set("Retry-After", "1")
		sharePage(w, http.StatusServiceUnavailable, "The report cannot be shown right now. Try again in a moment.")
		return
	}
	obj, err := g.cfg.Objects.Open(ctx, key)
	switch {
	case errors.Is(err, objstore.ErrNotFound):
		sharePage(w, http.StatusGone, "This report link no longer works: the report was deleted. Ask the agency that sent it for a new one.")
		return
	case err != nil && r.Context().Err() != nil:
		return
	case err != nil:
		g.cfg.Logger.ErrorContext(ctx, "object store unavailable", "key", key, "error", err)
		h.Set("Retry-After", "1")
		sharePage(w, http.StatusServiceUnavailable, "The report cannot be shown right now. Try again in a moment.")
		return
	}
	defer obj.Close()
	// The transfer gets the same budget as a /media/ file's.
	budget := g.cfg.RequestTimeout + time.Duration(float64(obj.Size())/float64(g.cfg.MinTransferRate)*float64(time.Second))
	_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(budget))
	contentType, _ := publicfile.ContentType(name)
	h.Set("Content-Type", contentType)
	http.ServeContent(&jsonErrors{ResponseWriter: w, path: r.URL.Path, size: obj.Size()}, r, "", obj.ModTime(), obj)
}

// validShareToken reports whether token could be one Atrium gave out:
// base64url, not too long. Anything else is not looked up.
func validShareToken(token string) bool {
	if token == "" || len(token) > shareTokenMax {
		return false
	}
	for _, c := range token {
		if (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') && (c < '0' || c > '9') && c != '-' && c != '_' {
			return false
		}
	}
	return true
}

// sharePage writes the small page a person sees when a link does not work:
// a browser shows it, so it is HTML, not the API's JSON.
func sharePage(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(code)
	_, _ = fmt.Fprintf(w, `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="robots" content="noindex, nofollow">
<meta name="viewport" content="width=device-width, initial-scale=1"><title>Report link</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:36rem;margin:4rem auto;padding:0 1rem;color:#222}</style></head>
<body><h1>%s</h1><p>%s</p></body></html>
`, html.EscapeString(http.StatusText(code)), html.EscapeString(msg))
}
