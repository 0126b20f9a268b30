package gateway

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/atrium-hq/atrium/gateway/internal/rest"
	"github.com/atrium-hq/atrium/platform/objstore"
	"github.com/atrium-hq/atrium/platform/publicfile"
)

// The files the gateway serves without a key, straight from the object
// store: an asset's file at /files/<name>/<filename> and a generated image
// at /media/<name>. The name is the capability (platform/publicfile) and
// says the key and the type, so that a download asks no service anything:
// it is an open, a stat and a copy, sendfile(2) on a local directory, as
// http.FileServer's (docs/assets.md, docs/performance.md).

// Headers every file is served with.
const (
	// immutable: a name is never given to other content, so browsers and
	// CDNs keep a file a year without asking again.
	fileCacheControl = "public, max-age=31536000, immutable"
	// scriptlessCSP is an SVG's policy: nothing it references loads and no
	// script of it runs, even opened directly; sandbox makes the document
	// an opaque origin besides.
	scriptlessCSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; sandbox"
)

// withFiles serves the file routes in front of the mux, when the gateway
// has an object store. Without one, /files/ answers 503 naming the
// setting, and /media/ goes to the actions service (GetMedia) as before.
func (g *Gateway) withFiles(next http.Handler) http.Handler {
	assetStats := g.metrics.named(http.MethodGet, publicfile.AssetsPath+"{name}/{filename}")
	mediaStats := g.metrics.named(http.MethodGet, publicfile.MediaPath+"{name}")
	shareStats := g.metrics.named(http.MethodGet, sharePath+"{token}")
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var key, name, route, what string
		switch {
		case strings.HasPrefix(r.URL.Path, sharePath):
			nameRequest(r.Context(), "GET "+sharePath+"{token}", shareStats)
			g.serveShare(w, r)
			return
		case strings.HasPrefix(r.URL.Path, publicfile.AssetsPath):
			nameRequest(r.Context(), "GET "+publicfile.AssetsPath+"{name}/{filename}", assetStats)
			rest, _ := strings.CutPrefix(r.URL.Path, publicfile.AssetsPath)
			name, _, _ = strings.Cut(rest, "/")
			key, _ = publicfile.AssetKey(name)
			route, what = publicfile.AssetsPath+"{name}/{filename}", "file"
			if strings.Count(rest, "/") > 1 || rest == "" {
				key = "" // a name and a file name, nothing more
			}
		case strings.HasPrefix(r.URL.Path, publicfile.MediaPath) && g.cfg.Objects != nil:
			nameRequest(r.Context(), "GET "+publicfile.MediaPath+"{name}", mediaStats)
			name, _ = strings.CutPrefix(r.URL.Path, publicfile.MediaPath)
			key, _ = publicfile.MediaKey(name)
			route, what = publicfile.MediaPath+"{name}", "media"
		default:
			next.ServeHTTP(w, r)
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			rest.WriteJSON(w, http.StatusMethodNotAllowed, rest.Body{Error: fmt.Sprintf("method %s is not allowed on %s; allowed: GET, HEAD", r.Method, route)})
			return
		}
		if r.URL.RawQuery != "" {
			rest.WriteJSON(w, http.StatusBadRequest, rest.Body{Error: fmt.Sprintf("%s takes no query parameters; a file's URL is used as given", route)})
			return
		}
		if key == "" {
			w.Header().Set("Cache-Control", "no-store")
			rest.WriteJSON(w, http.StatusNotFound, rest.Body{Error: fmt.Sprintf("no %s at %s: the address is not one Atrium gave out", what, r.URL.Path)})
			return
		}
		if g.cfg.Objects == nil {
			w.Header().Set("Retry-After", "1")
			rest.WriteJSON(w, http.StatusServiceUnavailable, rest.Body{Error: "this gateway serves no files: it was started without an object store (--data-dir shared with the collections service, or --s3-bucket)"})
			return
		}
		g.serveFile(w, r, key, name, what)
	})
}

// serveFile answers a file's GET or HEAD: 304 to a client that holds it,
// else the file or the ranges it asks for, through http.ServeContent.
func (g *Gateway) serveFile(w http.ResponseWriter, r *http.Request, key, name, what string) {
	contentType, _ := publicfile.ContentType(name)
	etag := `"` + strings.TrimSuffix(name, name[strings.IndexByte(name, '.'):]) + `"`
	h := w.Header()
	h.Set("Cache-Control", fileCacheControl)
	h.Set("ETag", etag)
	h.Set("X-Content-Type-Options", "nosniff")
	// Pages of any origin embed the files (a COEP page needs this to).
	h.Set("Cross-Origin-Resource-Policy", "cross-origin")
	h.Set("Access-Control-Allow-Origin", "*")
	if publicfile.Scriptable(contentType) {
		h.Set("Content-Security-Policy", scriptlessCSP)
	}
	if publicfile.NoIndex(contentType) {
		// A client's report, reached by its unlisted URL: never in a
		// search engine (the page says so too, in its robots meta).
		h.Set("X-Robots-Tag", "noindex, nofollow")
	}
	// A client that holds the file is told so without a look at the store:
	// the name never names other content.
	if inm := r.Header.Get("If-None-Match"); inm != "" && etagMatches(inm, etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	// The request's context carries no deadline here (serve leaves
	// transfers theirs): the open gets --request-timeout, the transfer that
	// plus a second per --min-transfer-rate bytes, so that a client that
	// reads nothing holds its connection and its long-request slot no
	// longer (sendfile(2) copies the file in one call: no per-write
	// deadline can be set in between).
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	timer := time.AfterFunc(g.cfg.RequestTimeout, cancel)
	defer timer.Stop()
	obj, err := g.cfg.Objects.Open(ctx, key)
	switch {
	case errors.Is(err, objstore.ErrNotFound):
		h.Set("Cache-Control", "no-store")
		h.Del("ETag")
		rest.WriteJSON(w, http.StatusNotFound, rest.Body{Error: fmt.Sprintf("no %s at %s: it was deleted, or the address is not one Atrium gave out", what, r.URL.Path)})
		return
	case err != nil && r.Context().Err() != nil:
		return // the client went away
	case err != nil:
		h.Set("Cache-Control", "no-store")
		h.Del("ETag")
		g.cfg.Logger.ErrorContext(ctx, "object store unavailable", "key", key, "error", err)
		h.Set("Retry-After", "1")
		rest.WriteJSON(w, http.StatusServiceUnavailable, rest.Body{Error: "the file store is temporarily unavailable; retry with exponential backoff"})
		return
	}
	defer obj.Close()
	budget := g.cfg.RequestTimeout + time.Duration(float64(obj.Size())/float64(g.cfg.MinTransferRate)*float64(time.Second))
	timer.Reset(budget)
	_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(budget))
	h.Set("Content-Type", contentType)
	http.ServeContent(&jsonErrors{ResponseWriter: w, path: r.URL.Path, size: obj.Size()}, r, "", obj.ModTime(), obj)
}

// etagMatches reports whether an If-None-Match header lists etag (weakly,
// as RFC 9110 compares for If-None-Match) or is *.
func etagMatches(header, etag string) bool {
	for t := range strings.SplitSeq(header, ",") {
		t = strings.TrimPrefix(strings.TrimSpace(t), "W/")
		if t == etag || t == "*" {
			return true
		}
	}
	return false
}

// jsonErrors turns the plain-text errors http.ServeContent writes (416 for
// a range past the end, 412 for a failed If-Match) into Atrium's JSON
// error body, and passes everything else through, io.ReaderFrom included,
// so that sendfile(2) still applies.
type jsonErrors struct {
	http.ResponseWriter
	path    string
	size    int64
	swallow bool
}

func (j *jsonErrors) WriteHeader(code int) {
	if code < 400 {
		j.ResponseWriter.WriteHeader(code)
		return
	}
	j.swallow = true
	var msg string
	switch code {
	case http.StatusRequestedRangeNotSatisfiable:
		msg = fmt.Sprintf("the Range header asks for bytes the file does not have: it has %d (bytes 0-%d)", j.size, j.size-1)
	case http.StatusPreconditionFailed:
		msg = "the file does not match the request's If-Match or If-Unmodified-Since"
	default:
		msg = strings.ToLower(http.StatusText(code)) + " for " + j.path
	}
	j.ResponseWriter.Header().Set("Cache-Control", "no-store")
	rest.WriteJSON(j.ResponseWriter, code, rest.Body{Error: msg})
}

func (j *jsonErrors) Write(b []byte) (int, error) {
	if j.swallow {
		return len(b), nil
	}
	return j.ResponseWriter.Write(b)
}

// ReadFrom keeps the zero-copy path of the writer underneath.
func (j *jsonErrors) ReadFrom(r io.Reader) (int64, error) {
	if j.swallow {
		return io.Copy(io.Discard, r)
	}
	if rf, ok := j.ResponseWriter.(io.ReaderFrom); ok {
		return rf.ReadFrom(r)
	}
	return io.Copy(struct{ io.Writer }{j.ResponseWriter}, r)
}

// Unwrap lets http.ResponseController reach the connection.
func (j *jsonErrors) Unwrap() http.ResponseWriter { return j.ResponseWriter }
