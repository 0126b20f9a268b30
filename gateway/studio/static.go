package studio

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strings"

	"github.com/atrium-hq/atrium/gateway/studio/internal/diff"
	"github.com/atrium-hq/atrium/gateway/studio/internal/schemaform"
	"github.com/atrium-hq/atrium/platform/chart"
)

//go:embed static
var staticFiles embed.FS

// generated are the stylesheets the console's other rooms own (charts,
// differences), served beside the static files.
var generated = map[string]string{"chart.css": chart.CSS, "diff.css": diff.CSS, "schemaform.css": schemaform.CSS}

// readStatic reads a static file by name.
func readStatic(name string) ([]byte, error) {
	if css, ok := generated[name]; ok {
		return []byte(css), nil
	}
	return staticFiles.ReadFile("static/" + name)
}

// staticHashes are the static files' content hashes, which their paths
// carry (?v=): a file is then cached for a year, and a new version of
// Atrium is a new address.
var staticHashes = func() map[string]string {
	out := map[string]string{}
	entries, _ := fs.ReadDir(staticFiles, "static")
	names := []string{"chart.css", "diff.css", "schemaform.css"}
	for _, e := range entries {
		names = append(names, e.Name())
	}
	for _, name := range names {
		if b, err := readStatic(name); err == nil {
			h := sha256.Sum256(b)
			out[name] = hex.EncodeToString(h[:6])
		}
	}
	return out
}()

// staticPath is the address of static file name.
func staticPath(name string) string {
	return Prefix + "static/" + name + "?v=" + staticHashes[name]
}

// static serves a file of static/.
func (s *Studio) static(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("file")
	// Only a file of static/ itself: a name with a separator (an escaped
	// slash, a backslash) or a hidden one is no file of the console's.
	var b []byte
	err := fs.ErrNotExist
	if name != "" && !strings.HasPrefix(name, ".") && !strings.ContainsAny(name, "/\\\x00") {
		b, err = readStatic(name)
	}
	if err != nil {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte("There is no static file of Atrium Studio by this name: the pages link to their own files (/studio/static/studio.css and the like).\n"))
		return
	}
	ct := mime.TypeByExtension(path.Ext(name))
	if ct == "" {
		ct = "application/octet-stream"
	}
	w.Header().Set("Content-Type", ct)
	if r.URL.Query().Get("v") == staticHashes[name] {
		w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
	} else {
		w.Header().Set("Cache-Control", "no-cache")
	}
	_, _ = w.Write(b) //nolint:gosec // G705: an embedded file of the Studio's own, with its type
}
