package report

import (
	"bytes"
	"encoding/base64"
	"html/template"
	"image"
	"image/draw"
	_ "image/jpeg" // the logo's kinds: what both renderings can draw
	"image/png"
)

// MaxLogoPixels bounds the logo's size in pixels before it is decoded
// (the PDF decodes it whole): a header logo needs far fewer.
const MaxLogoPixels = 4096 * 4096

// logo is the branding's logo as both renderings take it: its kind ("png"
// or "jpeg", found from its bytes, not from what it claims to be) and the
// image decoded whole; ok false when there is none, or it is not a PNG or
// JPEG image that decodes to the end (a truncated file is refused here,
// not in the middle of a rendering). A report then shows the name only.
func (b Branding) logo() (kind string, img image.Image, ok bool) {
	if len(b.Logo) == 0 {
		return "", nil, false
	}
	cfg, kind, err := image.DecodeConfig(bytes.NewReader(b.Logo))
	if err != nil || (kind != "png" && kind != "jpeg") || cfg.Width < 1 || cfg.Height < 1 || cfg.Width*cfg.Height > MaxLogoPixels {
		return "", nil, false
	}
	img, _, err = image.Decode(bytes.NewReader(b.Logo))
	if err != nil {
		return "", nil, false
	}
	return kind, img, true
}

// pdfLogo is the logo as the PDF draws it: re-encoded by Go as an 8-bit
// PNG, whatever it came as, because fpdf's own parser takes only some
// PNGs (not 16-bit, not interlaced) and panics on some malformed ones;
// it only ever reads what Go wrote. ok false when there is no logo.
func (b Branding) pdfLogo() (pngBytes []byte, size image.Point, ok bool) {
	_, img, ok := b.logo()
	if !ok {
		return nil, image.Point{}, false
	}
	r := img.Bounds()
	flat := image.NewNRGBA(image.Rect(0, 0, r.Dx(), r.Dy()))
	draw.Draw(flat, flat.Bounds(), img, r.Min, draw.Src)
	var buf bytes.Buffer
	if err := png.Encode(&buf, flat); err != nil {
		return nil, image.Point{}, false
	}
	return buf.Bytes(), r.Size(), true
}

// logoURL is the logo as a data: URL, so that the HTML page stays one
// self-contained file (its Content-Security-Policy allows img-src data:),
// which works the same from the share link, without a key, and saved.
func (b Branding) logoURL() template.URL {
	kind, _, ok := b.logo()
	if !ok {
		return ""
	}
	//nolint:gosec // G203: a data: URL of an image whose bytes we decoded as PNG or JPEG, base64 (no quote or markup can come out of it)
	return template.URL("data:image/" + kind + ";base64," + base64.StdEncoding.EncodeToString(b.Logo))
}
