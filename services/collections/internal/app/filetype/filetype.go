package filetype

import (
	"bytes"
	"encoding/binary"
	"encoding/xml"
	"io"
	"mime"
	"net/http"
	"strings"
)

// Type is a kind of file assets may be.
type Type struct {
	// MIME is the media type files of the kind are served with.
	MIME string
	// Ext is the extension of their object keys and URLs.
	Ext string
	// Name is the kind in words.
	Name string
	// Image kinds have a width and a height.
	Image bool
}

// The kinds of files assets may be; SVG only where the deployment allows
// it (docs/assets.md).
var (
	JPEG = Type{"image/jpeg", "jpg", "JPEG", true}
	PNG  = Type{"image/png", "png", "PNG", true}
	WebP = Type{"image/webp", "webp", "WebP", true}
	GIF  = Type{"image/gif", "gif", "GIF", true}
	AVIF = Type{"image/avif", "avif", "AVIF", true}
	PDF  = Type{"application/pdf", "pdf", "PDF", false}
	MP4  = Type{"video/mp4", "mp4", "MP4", false}
	SVG  = Type{"image/svg+xml", "svg", "SVG", true}
)

// All are the kinds, SVG last, in the order the docs list them.
var All = []Type{JPEG, PNG, WebP, GIF, AVIF, PDF, MP4, SVG}

// ByExt returns the kind whose key extension is ext.
func ByExt(ext string) (Type, bool) {
	for _, t := range All {
		if t.Ext == ext {
			return t, true
		}
	}
	return Type{}, false
}

// ByMIME returns the kind served as m.
func ByMIME(m string) (Type, bool) {
	for _, t := range All {
		if t.MIME == m {
			return t, true
		}
	}
	return Type{}, false
}

// SniffLen is how much of a file Detect looks at: enough for an SVG's
// XML declaration, comments and document type before its root element.
const SniffLen = 16 << 10

// aliases are the other names clients give the kinds.
var aliases = map[string]string{
	"image/jpg": "image/jpeg", "image/pjpeg": "image/jpeg", "image/x-png": "image/png",
	"image/x-webp": "image/webp", "application/x-pdf": "application/pdf", "image/svg": "image/svg+xml",
}

// Declared reads the Content-Type a client declared for a file: its media
// type in lower case, without parameters, with aliases resolved; "" when
// it declared none (nothing, or application/octet-stream: "some bytes").
// ok is false when the header is not a media type at all.
func Declared(contentType string) (string, bool) {
	if strings.TrimSpace(contentType) == "" {
		return "", true
	}
	m, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return "", false
	}
	if a, ok := aliases[m]; ok {
		m = a
	}
	if m == "application/octet-stream" {
		return "", true
	}
	return m, true
}

// Detect returns the kind of the file that starts with head (its first
// SniffLen bytes, or all of it when shorter). When it is none of the
// kinds, other names what it looks like instead (image/heic,
// video/quicktime, text/html), for the refusal.
func Detect(head []byte) (t Type, ok bool, other string) {
	switch {
	case bytes.HasPrefix(head, []byte{0xff, 0xd8, 0xff}):
		return JPEG, true, ""
	case bytes.HasPrefix(head, []byte("\x89PNG\r\n\x1a\n")):
		return PNG, true, ""
	case bytes.HasPrefix(head, []byte("GIF87a")), bytes.HasPrefix(head, []byte("GIF89a")):
		return GIF, true, ""
	case len(head) >= 12 && string(head[:4]) == "RIFF" && string(head[8:12]) == "WEBP":
		return WebP, true, ""
	case bytes.HasPrefix(head, []byte("%PDF-")):
		return PDF, true, ""
	}
	if t, ok, other := isoBMFF(head); ok || other != "" {
		return t, ok, other
	}
	if isSVG(head) {
		return SVG, true, ""
	}
	return Type{}, false, http.DetectContentType(head)
}

// isoBMFF tells AVIF and MP4 apart from the other ISO base media files
// (HEIC, QuickTime, 3GP, M4A) by the brands of their ftyp box.
func isoBMFF(head []byte) (Type, bool, string) {
	if len(head) < 16 || string(head[4:8]) != "ftyp" {
		return Type{}, false, ""
	}
	size := int(binary.BigEndian.Uint32(head[:4]))
	if size < 16 || size > len(head) {
		size = min(len(head), 256)
	}
	major := string(head[8:12])
	brands := map[string]bool{major: true}
	for i := 16; i+4 <= size; i += 4 {
		brands[string(head[i:i+4])] = true
	}
	switch {
	case major == "avif" || major == "avis" || (brands["avif"] && (major == "mif1" || major == "msf1")):
		return AVIF, true, ""
	case major == "heic" || major == "heix" || major == "heim" || major == "heis" || major == "hevc" || major == "hevx" || major == "mif1" || major == "msf1":
		return Type{}, false, "image/heic"
	case major == "qt  ":
		return Type{}, false, "video/quicktime"
	case strings.HasPrefix(major, "3gp") || strings.HasPrefix(major, "3g2"):
		return Type{}, false, "video/3gpp"
	case major == "M4A " || major == "M4B ":
		return Type{}, false, "audio/mp4"
	case major == "crx ":
		return Type{}, false, "image/x-canon-cr3"
	}
	for _, b := range []string{"isom", "iso2", "iso3", "iso4", "iso5", "iso6", "mp41", "mp42", "avc1", "dash", "M4V ", "M4VH", "M4VP", "f4v ", "mmp4", "msnv"} {
		if brands[b] {
			return MP4, true, ""
		}
	}
	return Type{}, false, "an ISO media file of brand " + strings.TrimSpace(major)
}

// isSVG reports whether head is XML whose root element is svg: what comes
// before it (an XML declaration, comments, a document type, white space)
// is skipped, within head.
func isSVG(head []byte) bool {
	head = bytes.TrimPrefix(head, []byte("\xef\xbb\xbf"))
	if t := bytes.TrimLeft(head, " \t\r\n"); len(t) == 0 || t[0] != '<' {
		return false
	}
	d := xml.NewDecoder(bytes.NewReader(head))
	d.Strict = false
	// Any declared encoding will do: the names this reads are ASCII in all
	// the encodings an SVG may declare.
	d.CharsetReader = func(_ string, r io.Reader) (io.Reader, error) { return r, nil }
	for {
		tok, err := d.RawToken()
		if err != nil {
			return false
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			return tok.Name.Local == "svg"
		case xml.CharData:
			if len(bytes.TrimSpace(tok)) > 0 {
				return false
			}
		}
	}
}
