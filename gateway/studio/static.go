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
)

//go:embed static
var staticFiles embed.FS

// staticHashes are the static files' content hashes, which their paths
// carry (?v=): a file is then cached for a year, and a new version of
// Atrium is a new address.
var staticHashes = func() map[string]string {
	out := map[string]string{}
	entries, _ := fs.ReadDir(staticFiles, "static")
	for _, e := range entries {
		b, err := staticFiles.ReadFile("static/" + e.Name())
		if err == nil {
			h := sha256.Sum256(b)
			out[e.Name()] = hex.EncodeToString(h[:6])
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
	b, err := staticFiles.ReadFile("static/" + path.Base(name))
	if err != nil || strings.HasPrefix(name, ".") {
		http.NotFound(w, r)
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
	_, _ = w.Write(b)
}
