// Package publicfile is the one definition of the files Atrium serves
// without a key: an asset's file at /files/<name>/<filename> and an
// action's generated image at /media/<name>. The name is the capability:
// 128 random bits in hex, which nobody guesses, with the extension of the
// file's kind. The collections and actions services make the names and
// keep the files on the object store under the keys given here; the
// gateway, which serves them straight from the store, maps a URL back to
// its key and its Content-Type with the same functions, so the two sides
// cannot drift apart.
package publicfile

import (
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"slices"
	"strings"
)

// The URL paths of the files.
const (
	AssetsPath = "/files/"
	MediaPath  = "/media/"
)

// types are the content types by extension: the assets' kinds (see the
// collections service's filetype package) and the generated images'.
var types = map[string]string{
	"jpg": "image/jpeg", "png": "image/png", "webp": "image/webp", "gif": "image/gif", "avif": "image/avif",
	"pdf": "application/pdf", "mp4": "video/mp4", "svg": "image/svg+xml",
}

// reportTypes are the types only an action makes and nobody uploads: a
// client report's HTML page (generate_report), which is served with a
// Content-Security-Policy that forbids script (Scriptable) and with
// X-Robots-Tag: noindex (NoIndex).
var reportTypes = map[string]string{"html": HTMLType}

// HTMLType is the content type of a report's HTML page.
const HTMLType = "text/html; charset=utf-8"

// NoIndex reports whether a file of this type is a page a search engine
// must not index (a client's report, reached by its unlisted URL).
func NoIndex(contentType string) bool { return contentType == HTMLType }

// Types lists the content types files are served as, sorted: what an
// upload may be (SVG where a deployment allows it) and what actions make.
func Types() []string {
	out := make([]string, 0, len(types))
	for _, t := range types {
		out = append(out, t)
	}
	slices.Sort(out)
	return out
}

// ContentType is the type a file named name is served as, and whether the
// name is one NewName could have made.
func ContentType(name string) (string, bool) {
	hexPart, ext, ok := strings.Cut(name, ".")
	if !ok || len(hexPart) != 32 || !isHex(hexPart) {
		return "", false
	}
	t, ok := types[ext]
	if !ok {
		t, ok = reportTypes[ext]
	}
	return t, ok
}

// Scriptable reports whether a file of this content type can carry script
// a browser would run when the file is opened directly (SVG), so that it
// must be served with a Content-Security-Policy that forbids it.
func Scriptable(contentType string) bool {
	return contentType == "image/svg+xml" || contentType == HTMLType
}

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// NewName returns a new capability name for a file with extension ext.
func NewName(ext string) string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	return hex.EncodeToString(b[:]) + "." + ext
}

// AssetKey is the object key of the asset file named name ("assets/" and
// the name's first two characters, so that a local directory holds at most
// a few thousand files per folder), and whether name is a file name at
// all.
func AssetKey(name string) (string, bool) {
	t, ok := ContentType(name)
	if !ok || NoIndex(t) { // a report's page is never an asset
		return "", false
	}
	return "assets/" + name[:2] + "/" + name, true
}

// AssetURLPath is the path of an asset's URL: its name, then its file name
// as the last segment, which is only for people and tools that save the
// file (any last segment serves the same file).
func AssetURLPath(name, filename string) string {
	return AssetsPath + name + "/" + url.PathEscape(filename)
}

// MediaKey is the object key of the generated file named name, and
// whether name is a generated file's name at all.
func MediaKey(name string) (string, bool) {
	if _, ok := ContentType(name); !ok {
		return "", false
	}
	return "media/" + name, true
}
