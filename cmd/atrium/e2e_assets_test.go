package main

// Assets over HTTP: uploads (multipart and raw), the files served without
// a key with their headers and ranges, refusals that store nothing, the
// list, PATCH and DELETE, isolation between sites, events, and the asset
// field type.

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"net/textproto"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
)

// assetKeys are the fields of every asset the API returns.
var assetKeys = []string{"id", "filename", "content_type", "size", "width", "height", "alt", "sha256", "url", "created_at", "updated_at"}

func testImage(w, h int) image.Image {
	m := image.NewRGBA(image.Rect(0, 0, w, h))
	for x := range w {
		for y := range h {
			m.Set(x, y, color.RGBA{R: uint8(x * 7), G: uint8(y * 11), B: 90, A: 255})
		}
	}
	return m
}

func pngBytes(t testing.TB, w, h int) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, testImage(w, h)); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func jpegBytes(t testing.TB, w, h int) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := jpeg.Encode(&b, testImage(w, h), nil); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// mp4Bytes is the start of an MP4: its ftyp box, then media data.
func mp4Bytes() []byte {
	return append([]byte("\x00\x00\x00\x18ftypisom\x00\x00\x02\x00isomiso2"), bytes.Repeat([]byte{0, 0, 0, 8, 'f', 'r', 'e', 'e'}, 100)...)
}

var pdfBytes = []byte("%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<< /Type /Catalog >>\nendobj\ntrailer\n<< /Root 1 0 R >>\n%%EOF\n")

// part is one field of a multipart form: a file part when filename is set.
type part struct {
	name, filename, contentType string
	data                        []byte
}

// multipartBody is a form of parts, and its Content-Type.
func multipartBody(t testing.TB, parts ...part) ([]byte, string) {
	t.Helper()
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	for _, p := range parts {
		h := textproto.MIMEHeader{}
		disp := fmt.Sprintf(`form-data; name=%q`, p.name)
		if p.filename != "" {
			// Quoted as RFC 7578 forms are, byte for byte (%q would
			// escape bytes that are not UTF-8, which the tests send).
			disp += `; filename="` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(p.filename) + `"`
		}
		h.Set("Content-Disposition", disp)
		if p.contentType != "" {
			h.Set("Content-Type", p.contentType)
		}
		w, err := mw.CreatePart(h)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = w.Write(p.data)
	}
	if err := mw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes(), mw.FormDataContentType()
}

// send sends a request with a raw body and returns the decoded response.
func send(t testing.TB, method, u, token, contentType string, body io.Reader, headers ...string) response {
	t.Helper()
	req, err := http.NewRequest(method, u, body)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, u, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	r := response{status: resp.StatusCode, header: resp.Header, body: raw}
	if len(raw) > 0 && strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		if err := json.Unmarshal(raw, &r.json); err != nil {
			t.Fatalf("%s %s: body is not a JSON object: %v\n%s", method, u, err, raw)
		}
	}
	return r
}

func (s *stack) assetsURL() string { return s.api + "/api/public/v1/assets" }

// uploadForm uploads a multipart form with the key.
func (s *stack) uploadForm(t testing.TB, key string, parts ...part) response {
	t.Helper()
	body, ct := multipartBody(t, parts...)
	return send(t, "POST", s.assetsURL(), key, ct, bytes.NewReader(body))
}

// uploadRaw uploads data as the body, with its Content-Type and query.
func (s *stack) uploadRaw(t testing.TB, key, contentType string, data []byte, query url.Values) response {
	t.Helper()
	return send(t, "POST", s.assetsURL()+"?"+query.Encode(), key, contentType, bytes.NewReader(data))
}

// newAsset uploads a file and returns the asset.
func (s *stack) newAsset(t testing.TB, key, filename string, data []byte) map[string]any {
	t.Helper()
	r := s.uploadForm(t, key, part{name: "file", filename: filename, data: data})
	wantStatus(t, r, http.StatusCreated)
	return r.json["asset"].(map[string]any)
}

// fetch GETs a file's URL without a key.
func fetch(t testing.TB, u string, headers ...string) response {
	t.Helper()
	return send(t, "GET", u, "", "", nil, headers...)
}

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func testAssetsUpload(t *testing.T, s *stack) {
	tn := s.newTenant(t)
	img := pngBytes(t, 64, 40)
	// Multipart, alt before the file.
	r := s.uploadForm(t, tn.write, part{name: "alt", data: []byte("A loaf on a board")}, part{name: "file", filename: "Loaf of the day.png", contentType: "image/png", data: img})
	wantStatus(t, r, http.StatusCreated)
	wantKeys(t, r.json, "asset")
	a := r.json["asset"].(map[string]any)
	wantKeys(t, a, assetKeys...)
	wantTimestamp(t, a, "created_at")
	if a["filename"] != "Loaf of the day.png" || a["content_type"] != "image/png" || a["size"] != float64(len(img)) ||
		a["width"] != float64(64) || a["height"] != float64(40) || a["alt"] != "A loaf on a board" || a["sha256"] != sha(img) {
		t.Fatalf("asset = %v", a)
	}
	u := a["url"].(string)
	if !strings.HasPrefix(u, s.api+"/files/") || !strings.HasSuffix(u, "/Loaf%20of%20the%20day.png") {
		t.Fatalf("url = %s, want the public API's /files/<capability>/<file name>", u)
	}

	// Served without a key, with headers a CDN and a browser keep a year.
	f := fetch(t, u)
	wantStatus(t, f, http.StatusOK)
	if !bytes.Equal(f.body, img) {
		t.Fatalf("the served file is %d bytes that differ from the %d uploaded", len(f.body), len(img))
	}
	for h, want := range map[string]string{"Content-Type": "image/png", "Cache-Control": "public, max-age=31536000, immutable",
		"X-Content-Type-Options": "nosniff", "Accept-Ranges": "bytes", "Content-Length": fmt.Sprint(len(img))} {
		if got := f.header.Get(h); got != want {
			t.Errorf("%s: %q, want %q", h, got, want)
		}
	}
	etag := f.header.Get("ETag")
	if !strings.HasPrefix(etag, `"`) || f.header.Get("Content-Security-Policy") != "" {
		t.Fatalf("ETag %q, CSP %q; want a strong ETag and no CSP for a PNG", etag, f.header.Get("Content-Security-Policy"))
	}
	// Ranges, as video players and resumed downloads ask.
	rng := fetch(t, u, "Range", "bytes=10-19")
	wantStatus(t, rng, http.StatusPartialContent)
	if !bytes.Equal(rng.body, img[10:20]) || rng.header.Get("Content-Range") != fmt.Sprintf("bytes 10-19/%d", len(img)) {
		t.Fatalf("range 10-19: %q, Content-Range %q", rng.body, rng.header.Get("Content-Range"))
	}
	tail := fetch(t, u, "Range", "bytes=-7")
	if tail.status != http.StatusPartialContent || !bytes.Equal(tail.body, img[len(img)-7:]) {
		t.Fatalf("the last 7 bytes: %d %q", tail.status, tail.body)
	}
	wantError(t, fetch(t, u, "Range", fmt.Sprintf("bytes=%d-", len(img)+10)), http.StatusRequestedRangeNotSatisfiable, "Range", fmt.Sprint(len(img)))
	// A client holding the file is told so.
	wantStatus(t, fetch(t, u, "If-None-Match", etag), http.StatusNotModified)
	head := send(t, "HEAD", u, "", "", nil)
	if head.status != http.StatusOK || len(head.body) != 0 || head.header.Get("Content-Length") != fmt.Sprint(len(img)) {
		t.Fatalf("HEAD = %d, %d bytes, Content-Length %q", head.status, len(head.body), head.header.Get("Content-Length"))
	}
	// Any last segment names the same file: it is for people saving it.
	wantStatus(t, fetch(t, strings.TrimSuffix(u, "Loaf%20of%20the%20day.png")+"other.png"), http.StatusOK)
	wantError(t, send(t, "POST", u, "", "", nil), http.StatusMethodNotAllowed, "allowed: GET, HEAD")

	// Raw: the body is the file, its type the Content-Type, its name
	// ?filename=.
	jpg := jpegBytes(t, 30, 20)
	r = s.uploadRaw(t, tn.write, "image/jpeg", jpg, url.Values{"filename": {"hero.jpg"}, "alt": {"Hero"}})
	wantStatus(t, r, http.StatusCreated)
	a = r.json["asset"].(map[string]any)
	if a["content_type"] != "image/jpeg" || a["width"] != float64(30) || a["height"] != float64(20) || a["alt"] != "Hero" || a["filename"] != "hero.jpg" {
		t.Fatalf("raw JPEG = %v", a)
	}
	if f := fetch(t, a["url"].(string)); f.header.Get("Content-Type") != "image/jpeg" || !bytes.Equal(f.body, jpg) {
		t.Fatalf("the raw JPEG served as %q, %d bytes", f.header.Get("Content-Type"), len(f.body))
	}
	// Files that are not images have no width or height; alt may come
	// after the file.
	for _, tc := range []struct {
		file, ct string
		data     []byte
	}{{"menu.pdf", "application/pdf", pdfBytes}, {"tour.mp4", "video/mp4", mp4Bytes()}} {
		r := s.uploadForm(t, tn.write, part{name: "file", filename: tc.file, data: tc.data}, part{name: "alt", data: []byte("After")})
		wantStatus(t, r, http.StatusCreated)
		a := r.json["asset"].(map[string]any)
		if a["content_type"] != tc.ct || a["width"] != nil || a["height"] != nil || a["alt"] != "After" {
			t.Fatalf("%s = %v", tc.file, a)
		}
		if f := fetch(t, a["url"].(string)); f.header.Get("Content-Type") != tc.ct || !bytes.Equal(f.body, tc.data) {
			t.Fatalf("%s served as %q", tc.file, f.header.Get("Content-Type"))
		}
	}
}

func testAssetsRefusals(t *testing.T, s *stack) {
	tn := s.newTenant(t)
	img := pngBytes(t, 8, 8)
	svg := []byte(`<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><script>alert(document.cookie)</script></svg>`)
	for _, tc := range []struct {
		name  string
		r     func() response
		code  int
		words []string
	}{
		{"a PNG declared JPEG, raw", func() response {
			return s.uploadRaw(t, tn.write, "image/jpeg", img, url.Values{"filename": {"a.jpg"}})
		}, 400, []string{"declared image/jpeg", "its content is PNG"}},
		{"a PNG declared GIF, multipart", func() response {
			return s.uploadForm(t, tn.write, part{name: "file", filename: "a.gif", contentType: "image/gif", data: img})
		}, 400, []string{"declared image/gif"}},
		{"HTML", func() response {
			return s.uploadForm(t, tn.write, part{name: "file", filename: "a.png", data: []byte("<!doctype html><script>alert(1)</script>")})
		}, 400, []string{"text/html", "allowed: JPEG (image/jpeg), PNG (image/png), WebP (image/webp), GIF (image/gif), AVIF (image/avif), PDF (application/pdf), MP4 (video/mp4)"}},
		{"SVG without --allow-svg-assets", func() response {
			return s.uploadForm(t, tn.write, part{name: "file", filename: "logo.svg", contentType: "image/svg+xml", data: svg})
		}, 400, []string{"SVG", "--allow-svg-assets"}},
		{"an empty file", func() response {
			return s.uploadForm(t, tn.write, part{name: "file", filename: "a.png"})
		}, 400, []string{"empty"}},
		{"a raw upload without filename", func() response {
			return s.uploadRaw(t, tn.write, "image/png", img, nil)
		}, 400, []string{"?filename="}},
		{"a raw upload with an unknown parameter", func() response {
			return s.uploadRaw(t, tn.write, "image/png", img, url.Values{"filename": {"a.png"}, "title": {"x"}})
		}, 400, []string{`unknown query parameter "title"`, "allowed: filename, alt"}},
		{"a file name with a slash", func() response {
			return s.uploadRaw(t, tn.write, "image/png", img, url.Values{"filename": {"../a.png"}})
		}, 400, []string{"filename must be a file name"}},
		{"an unknown form field", func() response {
			return s.uploadForm(t, tn.write, part{name: "title", data: []byte("x")}, part{name: "file", filename: "a.png", data: img})
		}, 400, []string{`unknown form field "title"`, "allowed fields: file, alt"}},
		{"no file part", func() response {
			return s.uploadForm(t, tn.write, part{name: "alt", data: []byte("x")})
		}, 400, []string{"no file part"}},
		{"two files", func() response {
			return s.uploadForm(t, tn.write, part{name: "file", filename: "a.png", data: img}, part{name: "file", filename: "b.png", data: img})
		}, 400, []string{"more than one file part"}},
		{"alt twice", func() response {
			return s.uploadForm(t, tn.write, part{name: "alt", data: []byte("x")}, part{name: "file", filename: "a.png", data: img}, part{name: "alt", data: []byte("y")})
		}, 400, []string{`"alt" was sent twice`}},
		// Text that is not UTF-8 cannot travel to the service: refused at
		// the gateway, naming the field as the client sent it.
		{"a raw file name that is not UTF-8", func() response {
			return s.uploadRaw(t, tn.write, "image/png", img, url.Values{"filename": {"caf\xe9.png"}})
		}, 400, []string{"query parameter filename (once percent-decoded) must be text in UTF-8", "byte 4 (0xE9)"}},
		{"a raw alt that is not UTF-8", func() response {
			return s.uploadRaw(t, tn.write, "image/png", img, url.Values{"filename": {"a.png"}, "alt": {"\xff"}})
		}, 400, []string{"query parameter alt (once percent-decoded) must be text in UTF-8"}},
		{"a raw Content-Type that is not UTF-8", func() response {
			return s.uploadRaw(t, tn.write, "image/png\xff", img, url.Values{"filename": {"a.png"}})
		}, 400, []string{"the Content-Type header must be text in UTF-8"}},
		{"a multipart file name that is not UTF-8", func() response {
			return s.uploadForm(t, tn.write, part{name: "file", filename: "caf\xe9.png", data: img})
		}, 400, []string{"the file part's filename must be text in UTF-8"}},
		{"a multipart Content-Type that is not UTF-8", func() response {
			return s.uploadForm(t, tn.write, part{name: "file", filename: "a.png", contentType: "image/\xffpng", data: img})
		}, 400, []string{"the file part's Content-Type must be text in UTF-8"}},
		{"an alt before the file that is not UTF-8", func() response {
			return s.uploadForm(t, tn.write, part{name: "alt", data: []byte("caf\xe9")}, part{name: "file", filename: "a.png", data: img})
		}, 400, []string{"form field alt must be text in UTF-8"}},
		{"an alt after the file that is not UTF-8", func() response {
			return s.uploadForm(t, tn.write, part{name: "file", filename: "a.png", data: img}, part{name: "alt", data: []byte("caf\xe9")})
		}, 400, []string{"form field alt must be text in UTF-8"}},
		// A PNG whose header a decoder would refuse is refused, not given
		// the sizes it claims.
		{"a PNG of a bit depth its colour type has not", func() response {
			bad := append([]byte{}, img...)
			bad[24] = 4 // bit depth 4 of truecolour (an opaque image), its CRC fixed
			binary.BigEndian.PutUint32(bad[29:33], crc32.ChecksumIEEE(bad[12:29]))
			return s.uploadRaw(t, tn.write, "image/png", bad, url.Values{"filename": {"a.png"}})
		}, 400, []string{"the file is not a valid PNG: its bit depth 4 is not one colour type 2 allows (8, 16)"}},
		{"a PNG whose IHDR CRC is wrong", func() response {
			bad := append([]byte{}, img...)
			bad[20]++ // a height the CRC does not cover
			return s.uploadForm(t, tn.write, part{name: "file", filename: "a.png", data: bad})
		}, 400, []string{"the file is not a valid PNG: its IHDR chunk's CRC does not match its content"}},
		{"a read key", func() response {
			return s.uploadForm(t, tn.read, part{name: "file", filename: "a.png", data: img})
		}, 403, []string{"write"}},
		{"no key", func() response {
			return s.uploadForm(t, "", part{name: "file", filename: "a.png", data: img})
		}, 401, nil},
		{"a JSON body", func() response {
			return send(t, "POST", s.assetsURL(), tn.write, "application/json", strings.NewReader(`{"file": "x"}`))
		}, 400, []string{"?filename="}},
	} {
		t.Run(tc.name, func(t *testing.T) { wantError(t, tc.r(), tc.code, tc.words...) })
	}

	// Too large, said up front: refused before the file is sent.
	const limit = 25 << 20
	client := &http.Client{Transport: &http.Transport{ExpectContinueTimeout: 10 * time.Second}}
	req, err := http.NewRequest("POST", s.assetsURL()+"?filename=big.png", io.LimitReader(zeros{}, limit+1))
	if err != nil {
		t.Fatal(err)
	}
	req.ContentLength = limit + 1
	req.Header.Set("Authorization", "Bearer "+tn.write)
	req.Header.Set("Content-Type", "image/png")
	req.Header.Set("Expect", "100-continue")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(string(body), "limit of 26214400 bytes (25 MiB)") {
		t.Fatalf("a declared 25 MiB + 1 = %d %s; want 413 naming the limit", resp.StatusCode, body)
	}
	// Too large, found while streaming (a multipart file's size shows only
	// at its end): refused once past the limit.
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	go func() {
		w, _ := mw.CreateFormFile("file", "big.png")
		_, _ = w.Write(img)
		_, err := io.Copy(w, io.LimitReader(zeros{}, limit))
		if err == nil {
			err = mw.Close()
		}
		pw.CloseWithError(err)
	}()
	r := send(t, "POST", s.assetsURL(), tn.write, mw.FormDataContentType(), pr)
	pr.Close()
	wantError(t, r, http.StatusRequestEntityTooLarge, "larger than this deployment's limit of 26214400 bytes")

	// Nothing of any refusal was kept.
	list := call(t, "GET", s.assetsURL(), tn.read, nil)
	wantStatus(t, list, http.StatusOK)
	if as := list.json["assets"].([]any); len(as) != 0 {
		t.Fatalf("refused uploads left assets: %s", list)
	}
}

// zeros is an endless stream of zero bytes.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

func testAssetsLifecycle(t *testing.T, s *stack) {
	tn := s.newTenant(t)
	var ids []string
	for i := range 3 {
		ids = append(ids, s.newAsset(t, tn.write, fmt.Sprintf("photo-%d.png", i), pngBytes(t, 4+i, 4))["id"].(string))
	}
	r := call(t, "GET", s.assetsURL(), tn.read, nil)
	wantStatus(t, r, http.StatusOK)
	wantKeys(t, r.json, "assets", "limit", "offset")
	var got []string
	for _, a := range r.json["assets"].([]any) {
		wantKeys(t, a.(map[string]any), assetKeys...)
		got = append(got, a.(map[string]any)["id"].(string))
	}
	if want := []string{ids[2], ids[1], ids[0]}; !slices.Equal(got, want) || r.json["limit"] != float64(100) || r.json["offset"] != float64(0) {
		t.Fatalf("list = %v (limit %v), want newest first %v with limit 100", got, r.json["limit"], want)
	}
	r = call(t, "GET", s.assetsURL()+"?limit=1&offset=1", tn.read, nil)
	if as := r.json["assets"].([]any); len(as) != 1 || as[0].(map[string]any)["id"] != ids[1] {
		t.Fatalf("limit 1 offset 1 = %s", r)
	}
	wantError(t, call(t, "GET", s.assetsURL()+"?limit=0", tn.read, nil), http.StatusBadRequest, "limit must be an integer of at least 1")
	wantError(t, call(t, "GET", s.assetsURL()+"?order=size", tn.read, nil), http.StatusBadRequest, `unknown query parameter "order"`)

	id := ids[0]
	one := call(t, "GET", s.assetsURL()+"/"+strings.ToUpper(id), tn.read, nil)
	wantStatus(t, one, http.StatusOK)
	a := one.json["asset"].(map[string]any)
	oldURL := a["url"].(string)
	if a["id"] != id || a["filename"] != "photo-0.png" {
		t.Fatalf("get = %v", a)
	}
	wantError(t, call(t, "GET", s.assetsURL()+"/nope", tn.read, nil), http.StatusNotFound, `asset "nope" not found`)

	// PATCH changes alt and the file name; the file and its capability stay.
	r = call(t, "PATCH", s.assetsURL()+"/"+id, tn.write, map[string]any{"alt": "Crumb", "filename": "crumb shot.png"})
	wantStatus(t, r, http.StatusOK)
	a = r.json["asset"].(map[string]any)
	newURL := a["url"].(string)
	if a["alt"] != "Crumb" || a["filename"] != "crumb shot.png" || !strings.HasSuffix(newURL, "/crumb%20shot.png") ||
		newURL[:strings.LastIndexByte(newURL, '/')] != oldURL[:strings.LastIndexByte(oldURL, '/')] || a["updated_at"] == a["created_at"] {
		t.Fatalf("patched = %v (url was %s)", a, oldURL)
	}
	wantStatus(t, fetch(t, oldURL), http.StatusOK) // embedded links keep working
	wantError(t, call(t, "PATCH", s.assetsURL()+"/"+id, tn.write, map[string]any{"title": "x"}), http.StatusBadRequest, `unknown field "title"`, "alt", "filename")
	wantError(t, call(t, "PATCH", s.assetsURL()+"/"+id, tn.write, map[string]any{}), http.StatusBadRequest, "nothing to change")
	wantError(t, call(t, "PATCH", s.assetsURL()+"/"+id, tn.write, map[string]any{"filename": "a/b.png"}), http.StatusBadRequest, "filename must be a file name")
	wantError(t, call(t, "PATCH", s.assetsURL()+"/"+id, tn.read, map[string]any{"alt": "x"}), http.StatusForbidden, "write")

	// DELETE removes the asset and its file.
	r = call(t, "DELETE", s.assetsURL()+"/"+id, tn.write, nil)
	wantStatus(t, r, http.StatusOK)
	if r.json["ok"] != true {
		t.Fatalf("delete = %s", r)
	}
	wantError(t, call(t, "GET", s.assetsURL()+"/"+id, tn.read, nil), http.StatusNotFound, "not found")
	gone := fetch(t, newURL)
	wantError(t, gone, http.StatusNotFound, "no file")
	if gone.header.Get("Cache-Control") != "no-store" {
		t.Fatalf("a deleted file's 404 has Cache-Control %q; want no-store", gone.header.Get("Cache-Control"))
	}
	wantError(t, call(t, "DELETE", s.assetsURL()+"/"+id, tn.write, nil), http.StatusNotFound, "not found")
	// A name Atrium never gave out.
	wantError(t, fetch(t, s.api+"/files/"+strings.Repeat("0", 32)+".png/x.png"), http.StatusNotFound, "no file")
	wantError(t, fetch(t, s.api+"/files/not-a-capability/x.png"), http.StatusNotFound, "no file")
}

func testAssetsTenancy(t *testing.T, s *stack) {
	mine, theirs := s.newTenant(t), s.newTenant(t)
	a := s.newAsset(t, mine.write, "private.png", pngBytes(t, 4, 4))
	id := a["id"].(string)
	for _, tc := range []struct {
		method string
		body   any
	}{{"GET", nil}, {"PATCH", map[string]any{"alt": "stolen"}}, {"DELETE", nil}} {
		wantError(t, call(t, tc.method, s.assetsURL()+"/"+id, theirs.write, tc.body), http.StatusNotFound, `asset "`+id+`" not found`)
	}
	if as := call(t, "GET", s.assetsURL(), theirs.read, nil).json["assets"].([]any); len(as) != 0 {
		t.Fatalf("another site lists %v", as)
	}
	r := call(t, "GET", s.assetsURL()+"/"+id, mine.read, nil)
	if r.json["asset"].(map[string]any)["alt"] != "" {
		t.Fatalf("another site's PATCH changed the asset: %s", r)
	}
	// The file is a capability: whoever was given its URL may fetch it.
	wantStatus(t, fetch(t, a["url"].(string)), http.StatusOK)
}

func testAssetsEvents(t *testing.T, s *stack) {
	tn := s.newTenant(t)
	nc, err := nats.Connect(s.natsURL)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	sub, err := nc.SubscribeSync("atrium.collections." + tn.site + ".asset.>")
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	a := s.newAsset(t, tn.write, "evented.png", pngBytes(t, 4, 4))
	id := a["id"].(string)
	wantStatus(t, call(t, "PATCH", s.assetsURL()+"/"+id, tn.write, map[string]any{"alt": "x"}), http.StatusOK)
	wantStatus(t, call(t, "DELETE", s.assetsURL()+"/"+id, tn.write, nil), http.StatusOK)
	var got []string
	deadline := time.Now().Add(10 * time.Second)
	for len(got) < 3 {
		msg, err := sub.NextMsg(time.Until(deadline))
		if err != nil {
			t.Fatalf("events so far %v: %v", got, err)
		}
		var ev map[string]any
		if err := json.Unmarshal(msg.Data, &ev); err != nil {
			t.Fatal(err)
		}
		if ev["id"] != id {
			continue
		}
		if ev["site_id"] != tn.site || ev["content_type"] != "image/png" || ev["sha256"] != a["sha256"] {
			t.Fatalf("%s payload = %v", msg.Subject, ev)
		}
		got = append(got, msg.Subject[strings.LastIndexByte(msg.Subject, '.')+1:])
	}
	if !slices.Equal(got, []string{"created", "updated", "deleted"}) {
		t.Fatalf("events = %v, want created, updated, deleted", got)
	}
}

func testAssetFields(t *testing.T, s *stack) {
	mine, theirs := s.newCMS(t), s.newCMS(t)
	for _, c := range []cmsTenant{mine, theirs} {
		s.create(t, "/admin/v1/sites/"+c.site+"/collections", "collection", map[string]any{"name": "Pages", "slug": "landing",
			"fields": []map[string]any{{"key": "title", "type": "text"}, {"key": "hero", "type": "asset", "required": true}}})
	}
	own := s.newAsset(t, mine.write, "hero.png", pngBytes(t, 4, 4))["id"].(string)
	foreign := s.newAsset(t, theirs.write, "hero.png", pngBytes(t, 4, 4))["id"].(string)
	item := mine.createItem(t, "landing", map[string]any{"data": map[string]any{"title": "Home", "hero": own}})
	if item["hero"] != own {
		t.Fatalf("item = %v, want hero %s", item, own)
	}
	wantError(t, call(t, "POST", mine.base+"/landing", mine.write, map[string]any{"data": map[string]any{"hero": foreign}}),
		http.StatusBadRequest, "data.hero must be the id of an asset of this site", foreign)
	wantError(t, call(t, "POST", mine.base+"/landing", mine.write, map[string]any{"data": map[string]any{"hero": "hero.png"}}),
		http.StatusBadRequest, "data.hero must be the id (a UUID) of an asset of this site")
	r := call(t, "GET", mine.base+"/landing?filter_field=hero&filter_value="+own, mine.read, nil)
	if items := r.json["items"].([]any); len(items) != 1 {
		t.Fatalf("filter by asset = %s", r)
	}
}

// testAssetsSVG runs on a stack started with --allow-svg-assets: SVG is
// taken, and served with a policy under which its script cannot run.
func testAssetsSVG(t *testing.T, s *stack) {
	tn := s.newTenant(t)
	svg := []byte(`<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 120 60"><script>alert(document.cookie)</script></svg>`)
	a := s.newAsset(t, tn.write, "logo.svg", svg)
	if a["content_type"] != "image/svg+xml" || a["width"] != float64(120) || a["height"] != float64(60) {
		t.Fatalf("SVG asset = %v", a)
	}
	f := fetch(t, a["url"].(string))
	csp := f.header.Get("Content-Security-Policy")
	if f.status != http.StatusOK || f.header.Get("Content-Type") != "image/svg+xml" || !strings.Contains(csp, "default-src 'none'") ||
		!strings.Contains(csp, "sandbox") || strings.Contains(csp, "script-src") || f.header.Get("X-Content-Type-Options") != "nosniff" {
		t.Fatalf("SVG served as %d %q with CSP %q", f.status, f.header.Get("Content-Type"), csp)
	}
	// Declared SVG but HTML inside is still refused.
	wantError(t, s.uploadForm(t, tn.write, part{name: "file", filename: "x.svg", contentType: "image/svg+xml", data: []byte("<html><script>alert(1)</script></html>")}),
		http.StatusBadRequest, "text/html")
}

// rawUpload writes an upload by hand on a connection: the request line and
// headers, a body announcing length bytes of which it sends only sent, then
// either closes its side (cut) or goes silent; it returns the status line
// and body of the answer.
func rawUpload(t *testing.T, s *stack, key string, length int, sent []byte, cut bool) (string, string) {
	t.Helper()
	u, err := url.Parse(s.api)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /api/public/v1/assets?filename=cut.png HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: image/png\r\nContent-Length: %d\r\n\r\n", u.Host, key, length)
	if _, err := conn.Write(sent); err != nil {
		t.Fatal(err)
	}
	if cut {
		if err := conn.(*net.TCPConn).CloseWrite(); err != nil {
			t.Fatal(err)
		}
	}
	_ = conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer to an upload that stopped: %v", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.Status, string(b)
}

// testAssetsCutShortAndStalled runs on a stack with a short request
// timeout: an upload whose body ends early is 400, one that stops arriving
// 408 once nothing has come for the timeout; neither leaves an asset.
func testAssetsCutShortAndStalled(t *testing.T, s *stack) {
	tn := s.newTenant(t)
	img := append(pngBytes(t, 16, 16), make([]byte, 300_000)...)
	status, body := rawUpload(t, s, tn.write, len(img), img[:len(img)/2], true)
	if !strings.HasPrefix(status, "400") || !strings.Contains(body, "ended before it was complete") {
		t.Fatalf("a body cut short: %s %s; want 400 saying so", status, body)
	}
	start := time.Now()
	status, body = rawUpload(t, s, tn.write, len(img), img[:len(img)/2], false)
	if !strings.HasPrefix(status, "408") || !strings.Contains(body, "stopped arriving") {
		t.Fatalf("a body that stopped: %s %s; want 408 saying so", status, body)
	}
	if waited := time.Since(start); waited > 15*time.Second {
		t.Fatalf("the stalled upload was answered after %s; want about the 2s request timeout", waited)
	}
	// A slow loris: a byte every 100 ms, so each read progresses well
	// within the 2s timeout, for a body of 300 KB that would take over
	// eight hours. After the timeout it is below --min-transfer-rate
	// (32 KiB/s by default), and answered 408 then.
	start = time.Now()
	status, body = trickleUpload(t, s, tn.write, len(img), 100*time.Millisecond)
	if !strings.HasPrefix(status, "408") || !strings.Contains(body, "too slowly") || !strings.Contains(body, "--min-transfer-rate") {
		t.Fatalf("a body trickling in: %s %s; want 408 saying it came too slowly", status, body)
	}
	if waited := time.Since(start); waited > 15*time.Second {
		t.Fatalf("the trickling upload was answered after %s; want about the 2s request timeout", waited)
	}
	if as := call(t, "GET", s.assetsURL(), tn.read, nil).json["assets"].([]any); len(as) != 0 {
		t.Fatalf("uploads that did not arrive left %v", as)
	}
}

// trickleUpload writes a raw upload announcing length bytes and then
// sends one byte every period, as a slow-loris client does, until the
// gateway answers; it returns the answer's status line and body.
func trickleUpload(t testing.TB, s *stack, key string, length int, period time.Duration) (string, string) {
	t.Helper()
	u, err := url.Parse(s.api)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /api/public/v1/assets?filename=slow.png HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: image/png\r\nContent-Length: %d\r\n\r\n", u.Host, key, length)
	answered := make(chan struct{})
	defer close(answered)
	go func() {
		// The client's pace is the behaviour under test: a ticker, not a
		// wait for something to happen.
		tick := time.NewTicker(period)
		defer tick.Stop()
		for range length {
			select {
			case <-answered:
				return
			case <-tick.C:
				if _, err := conn.Write([]byte{0}); err != nil {
					return // the gateway answered and closed
				}
			}
		}
	}()
	_ = conn.SetReadDeadline(time.Now().Add(60 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer to an upload trickling in: %v", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.Status, string(b)
}
