package filetype

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"io"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/atrium-hq/atrium/platform/publicfile"
)

func img(w, h int) image.Image {
	m := image.NewRGBA(image.Rect(0, 0, w, h))
	for x := range w {
		m.Set(x, 0, color.RGBA{R: uint8(x), A: 255})
	}
	return m
}

func encodePNG(t *testing.T, w, h int) []byte {
	var b bytes.Buffer
	if err := png.Encode(&b, img(w, h)); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func encodeJPEG(t *testing.T, w, h int) []byte {
	var b bytes.Buffer
	if err := jpeg.Encode(&b, img(w, h), nil); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func encodeGIF(t *testing.T, w, h int) []byte {
	var b bytes.Buffer
	if err := gif.Encode(&b, img(w, h), nil); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// withSegments puts APPn segments right after a JPEG's SOI.
func withSegments(j []byte, segs ...[]byte) []byte {
	out := append([]byte{}, j[:2]...)
	for _, s := range segs {
		out = append(out, s...)
	}
	return append(out, j[2:]...)
}

func segment(marker byte, payload []byte) []byte {
	s := []byte{0xff, marker, 0, 0}
	binary.BigEndian.PutUint16(s[2:], uint16(len(payload)+2))
	return append(s, payload...)
}

// exif is an APP1 payload whose IFD0 holds only the orientation.
func exif(orientation uint16, bo binary.ByteOrder) []byte {
	tiff := make([]byte, 8+2+12+4)
	if bo == binary.LittleEndian {
		copy(tiff, "II")
	} else {
		copy(tiff, "MM")
	}
	bo.PutUint16(tiff[2:], 42)
	bo.PutUint32(tiff[4:], 8)
	bo.PutUint16(tiff[8:], 1)
	bo.PutUint16(tiff[10:], 0x0112)
	bo.PutUint16(tiff[12:], 3)
	bo.PutUint32(tiff[14:], 1)
	bo.PutUint16(tiff[18:], orientation)
	return append([]byte("Exif\x00\x00"), tiff...)
}

// WebPLossless is the header of a lossless WebP of w by h.
func webpLossless(w, h int) []byte {
	b := []byte("RIFF\x00\x00\x00\x00WEBPVP8L\x05\x00\x00\x00\x2f")
	bits := make([]byte, 4)
	binary.LittleEndian.PutUint32(bits, uint32(w-1)|uint32(h-1)<<14)
	b = append(b, bits...)
	b = append(b, 0, 0, 0, 0, 0, 0, 0, 0)
	binary.LittleEndian.PutUint32(b[4:], uint32(len(b)-8))
	return b
}

func webpExtended(w, h int) []byte {
	b := []byte("RIFF\x00\x00\x00\x00WEBPVP8X\x0a\x00\x00\x00\x10\x00\x00\x00")
	b = append(b, byte(w-1), byte((w-1)>>8), byte((w-1)>>16), byte(h-1), byte((h-1)>>8), byte((h-1)>>16))
	return append(b, make([]byte, 8)...)
}

func webpLossy(w, h int) []byte {
	b := []byte("RIFF\x00\x00\x00\x00WEBPVP8 \x20\x00\x00\x00\x00\x00\x00\x9d\x01\x2a")
	b = binary.LittleEndian.AppendUint16(b, uint16(w))
	b = binary.LittleEndian.AppendUint16(b, uint16(h))
	return append(b, make([]byte, 16)...)
}

func isoBox(typ string, payload ...[]byte) []byte {
	body := bytes.Join(payload, nil)
	b := binary.BigEndian.AppendUint32(nil, uint32(8+len(body)))
	return append(append(b, typ...), body...)
}

func full(version byte, rest ...[]byte) []byte {
	return append([]byte{version, 0, 0, 0}, bytes.Join(rest, nil)...)
}

// avif is an AVIF's boxes up to its media data: a thumbnail item 2 with a
// small ispe listed first, the primary item 1 with w by h and rot quarter
// turns.
func avif(w, h int, rot byte) []byte {
	u32 := func(v int) []byte { return binary.BigEndian.AppendUint32(nil, uint32(v)) }
	ipco := isoBox("ipco",
		isoBox("ispe", full(0, u32(16), u32(16))),
		isoBox("ispe", full(0, u32(w), u32(h))),
		isoBox("irot", []byte{rot}),
	)
	ipma := isoBox("ipma", full(0, u32(2),
		[]byte{0, 2, 1, 0x81}, // item 2: property 1 (essential)
		[]byte{0, 1, 2, 2, 3}, // item 1: properties 2 and 3
	))
	meta := isoBox("meta", full(0,
		isoBox("hdlr", full(0, u32(0), []byte("pict"), make([]byte, 13))),
		isoBox("pitm", full(0, []byte{0, 1})),
		isoBox("iprp", ipco, ipma),
	))
	return append(append(isoBox("ftyp", []byte("avif"), u32(0), []byte("avifmif1miafMA1B")), meta...), isoBox("mdat", make([]byte, 64))...)
}

func TestDetect(t *testing.T) {
	for _, tc := range []struct {
		name  string
		head  []byte
		want  Type
		other string
	}{
		{"png", encodePNG(t, 3, 2), PNG, ""},
		{"jpeg", encodeJPEG(t, 3, 2), JPEG, ""},
		{"gif", encodeGIF(t, 3, 2), GIF, ""},
		{"webp", webpLossless(3, 2), WebP, ""},
		{"avif", avif(3, 2, 0), AVIF, ""},
		{"avif by compatible brand", isoBox("ftyp", []byte("mif1"), []byte{0, 0, 0, 0}, []byte("mif1avif")), AVIF, ""},
		{"pdf", []byte("%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj"), PDF, ""},
		{"mp4", isoBox("ftyp", []byte("isom"), []byte{0, 0, 2, 0}, []byte("isomiso2avc1mp41")), MP4, ""},
		{"mp4 of brand mp42", isoBox("ftyp", []byte("mp42"), []byte{0, 0, 0, 0}, []byte("mp42isom")), MP4, ""},
		{"svg", []byte(`<svg xmlns="http://www.w3.org/2000/svg" width="10" height="5"/>`), SVG, ""},
		{"svg with a prolog", []byte("\xef\xbb\xbf<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?>\n<!-- Generator: Adobe Illustrator -->\n<!DOCTYPE svg PUBLIC \"-//W3C//DTD SVG 1.1//EN\" \"http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd\" [\n<!ENTITY ns \"x\">\n]>\n<svg version=\"1.1\"></svg>"), SVG, ""},
		{"heic", isoBox("ftyp", []byte("heic"), []byte{0, 0, 0, 0}, []byte("mif1heic")), Type{}, "image/heic"},
		{"quicktime", isoBox("ftyp", []byte("qt  "), []byte{0, 0, 0, 0}, []byte("qt  ")), Type{}, "video/quicktime"},
		{"html", []byte("<!DOCTYPE html><html><script>alert(1)</script>"), Type{}, "text/html; charset=utf-8"},
		{"xml that is not svg", []byte(`<?xml version="1.0"?><html xmlns="http://www.w3.org/1999/xhtml"/>`), Type{}, "text/xml; charset=utf-8"},
		{"text", []byte("just some text"), Type{}, "text/plain; charset=utf-8"},
		{"zip", []byte("PK\x03\x04rest"), Type{}, "application/zip"},
		{"empty", nil, Type{}, "text/plain; charset=utf-8"},
	} {
		got, ok, other := Detect(tc.head)
		if got != tc.want || ok != (tc.want != Type{}) || other != tc.other {
			t.Errorf("%s: Detect = %v, %v, %q; want %v, %q", tc.name, got, ok, other, tc.want, tc.other)
		}
	}
}

func TestDeclared(t *testing.T) {
	for in, want := range map[string]string{
		"": "", "  ": "", "application/octet-stream": "", "image/PNG": "image/png", "image/jpg": "image/jpeg",
		"image/pjpeg": "image/jpeg", "image/svg+xml; charset=utf-8": "image/svg+xml", "text/html": "text/html",
	} {
		if got, ok := Declared(in); !ok || got != want {
			t.Errorf("Declared(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
	if _, ok := Declared("not a type"); ok {
		t.Error("Declared accepted a header that is no media type")
	}
}

func TestDimensions(t *testing.T) {
	big := bytes.Repeat([]byte{'x'}, 60_000)
	for _, tc := range []struct {
		name string
		t    Type
		file []byte
		want Size
	}{
		{"png", PNG, encodePNG(t, 37, 23), Size{37, 23}},
		{"gif", GIF, encodeGIF(t, 37, 23), Size{37, 23}},
		{"jpeg", JPEG, encodeJPEG(t, 37, 23), Size{37, 23}},
		{"jpeg turned a quarter by EXIF (big endian)", JPEG, withSegments(encodeJPEG(t, 37, 23), segment(0xe1, exif(6, binary.BigEndian))), Size{23, 37}},
		{"jpeg turned by EXIF (little endian)", JPEG, withSegments(encodeJPEG(t, 37, 23), segment(0xe1, exif(8, binary.LittleEndian))), Size{23, 37}},
		{"jpeg upside down by EXIF keeps its size", JPEG, withSegments(encodeJPEG(t, 37, 23), segment(0xe1, exif(3, binary.BigEndian))), Size{37, 23}},
		{"jpeg with large segments first", JPEG, withSegments(encodeJPEG(t, 37, 23), segment(0xe1, append([]byte("http://ns.adobe.com/xap/1.0/\x00"), big...)), segment(0xe2, big), segment(0xed, big)), Size{37, 23}},
		{"webp lossless", WebP, webpLossless(1000, 16383), Size{1000, 16383}},
		{"webp extended", WebP, webpExtended(4000, 3000), Size{4000, 3000}},
		{"webp lossy", WebP, webpLossy(640, 480), Size{640, 480}},
		{"avif", AVIF, avif(1920, 1080, 0), Size{1920, 1080}},
		{"avif turned a quarter", AVIF, avif(1920, 1080, 1), Size{1080, 1920}},
		{"svg in pixels", SVG, []byte(`<svg xmlns="http://www.w3.org/2000/svg" width="120px" height="80"/>`), Size{120, 80}},
		{"svg in inches", SVG, []byte(`<svg width="1in" height="0.5in"/>`), Size{96, 48}},
		{"svg by viewBox", SVG, []byte(`<svg viewBox="0 0 300 150"/>`), Size{300, 150}},
		{"svg by width and viewBox", SVG, []byte(`<svg width="600" viewBox="0,0,300,150"/>`), Size{600, 300}},
		{"svg with a relative width uses its viewBox", SVG, []byte(`<svg width="100%" height="100%" viewBox="0 0 64 32"/>`), Size{64, 32}},
	} {
		got, err := Dimensions(tc.t, bytes.NewReader(tc.file))
		if err != nil || got != tc.want {
			t.Errorf("%s: %v, %v; want %v", tc.name, got, err, tc.want)
		}
	}
}

func TestDimensionsNameWhatIsWrong(t *testing.T) {
	jpg := encodeJPEG(t, 8, 8)
	sos := bytes.Index(jpg, []byte{0xff, 0xda})
	for _, tc := range []struct {
		name string
		t    Type
		file []byte
		want string
	}{
		{"png cut short", PNG, encodePNG(t, 5, 5)[:20], "ends before its header does"},
		{"png without IHDR", PNG, append([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\x0dtEXt"), make([]byte, 12)...), "not IHDR"},
		{"png of zero width", PNG, pngHeader(0, 5, 8, 6, 13, true), "0 by 5"},
		{"png wider than any image", PNG, pngHeader(1<<20, 5, 8, 6, 13, true), "1 to 65535 pixels a side"},
		{"png wider than PNG allows", PNG, pngHeader(1<<31, 5, 8, 6, 13, true), "2147483648 by 5"},
		{"png with a bad CRC", PNG, pngHeader(5, 5, 8, 6, 13, false), "CRC does not match"},
		{"png without its CRC", PNG, pngHeader(5, 5, 8, 6, 13, true)[:29], "ends before its header does"},
		{"png of a bit depth its colour type has not", PNG, pngHeader(5, 5, 4, 2, 13, true), "bit depth 4 is not one colour type 2 allows (8, 16)"},
		{"png of a 16-bit palette", PNG, pngHeader(5, 5, 16, 3, 13, true), "bit depth 16 is not one colour type 3 allows (1, 2, 4, 8)"},
		{"png of an unknown colour type", PNG, pngHeader(5, 5, 8, 5, 13, true), "colour type 5 is none of PNG's"},
		{"png with a long IHDR", PNG, pngHeader(5, 5, 8, 6, 14, true), "14 bytes long, not 13"},
		{"jpeg with its scan first", JPEG, append(append([]byte{0xff, 0xd8}, jpg[sos:sos+20]...), jpg[2:]...), "before its frame header"},
		{"jpeg of junk", JPEG, []byte{0xff, 0xd8, 0x12, 0x34}, "where a marker should start"},
		{"webp of an unknown chunk", WebP, append([]byte("RIFF\x00\x00\x00\x00WEBPJUNK"), make([]byte, 20)...), "not VP8"},
		{"avif without meta", AVIF, append(isoBox("ftyp", []byte("avif")), isoBox("mdat", []byte("x"))...), "before its meta box"},
		{"svg without a size", SVG, []byte(`<svg xmlns="http://www.w3.org/2000/svg"><rect/></svg>`), ErrNoSize.Error()},
	} {
		_, err := Dimensions(tc.t, bytes.NewReader(tc.file))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v; want an error saying %q", tc.name, err, tc.want)
		}
	}
}

// pngHeader is a PNG's signature and IHDR chunk (colour type, bit depth,
// the length its chunk claims), with a CRC that matches or not.
func pngHeader(w, h uint32, depth, colour byte, length uint32, goodCRC bool) []byte {
	b := []byte("\x89PNG\r\n\x1a\n")
	b = binary.BigEndian.AppendUint32(b, length)
	b = append(b, "IHDR"...)
	b = binary.BigEndian.AppendUint32(b, w)
	b = binary.BigEndian.AppendUint32(b, h)
	b = append(b, depth, colour, 0, 0, 0)
	crc := crc32.ChecksumIEEE(b[12:])
	if !goodCRC {
		crc++
	}
	return binary.BigEndian.AppendUint32(b, crc)
}

// TestDimensionsOfEveryPNGKind: each colour type with each bit depth the
// specification allows passes, as the standard library's encoder writes
// them and as written by hand.
func TestDimensionsOfEveryPNGKind(t *testing.T) {
	for colour, depths := range pngBitDepths {
		for _, d := range depths {
			if got, err := Dimensions(PNG, bytes.NewReader(pngHeader(640, 480, d, colour, 13, true))); err != nil || got != (Size{640, 480}) {
				t.Errorf("colour type %d, bit depth %d: %v, %v; want 640 by 480", colour, d, got, err)
			}
		}
	}
}

// chunks writes b to w in pieces of n bytes.
func chunks(w io.Writer, b []byte, n int) error {
	for len(b) > 0 {
		k := min(n, len(b))
		if _, err := w.Write(b[:k]); err != nil {
			return err
		}
		b = b[k:]
	}
	return nil
}

func TestProbeReadsAsTheFileStreams(t *testing.T) {
	file := withSegments(encodeJPEG(t, 640, 480), segment(0xe1, exif(6, binary.BigEndian)), segment(0xe2, bytes.Repeat([]byte{1}, 50_000)))
	file = append(file, bytes.Repeat([]byte{0}, 1<<20)...) // a long tail the probe never needs
	for _, n := range []int{1, 7, 4096, 1 << 20} {
		p := NewProbe(JPEG)
		if err := chunks(p, file, n); err != nil {
			t.Fatalf("chunks of %d: Write: %v", n, err)
		}
		if got, err := p.Result(); err != nil || got != (Size{480, 640}) {
			t.Errorf("chunks of %d: %v, %v; want 480 by 640", n, got, err)
		}
	}
	// A wrong header stops the writer, before the rest of the file.
	p := NewProbe(PNG)
	err := chunks(p, append([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\x0dJUNK"), make([]byte, 1<<20)...), 64)
	if err == nil || !strings.Contains(err.Error(), "not IHDR") {
		t.Fatalf("a PNG without IHDR: Write = %v; want the header's error", err)
	}
	if _, err := p.Result(); err == nil {
		t.Fatal("Result of a wrong header succeeded")
	}
	// An SVG without a size is no failure of the upload.
	p = NewProbe(SVG)
	if err := chunks(p, []byte(`<svg xmlns="http://www.w3.org/2000/svg"><rect/></svg>`), 5); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Result(); !errors.Is(err, ErrNoSize) {
		t.Fatalf("an SVG without size: %v; want ErrNoSize", err)
	}
	// Aborted midway: no goroutine left behind (the race detector and the
	// test's end would hang on a stuck one).
	p = NewProbe(PNG)
	_, _ = p.Write([]byte("\x89PN"))
	p.Abort()
}

// TestProtoDocumentsTheKinds: the Asset message's content_type comment,
// which becomes the OpenAPI enumeration, lists exactly the kinds, and the
// names Atrium serves files as (platform/publicfile) agree with them.
func TestProtoDocumentsTheKinds(t *testing.T) {
	b, err := os.ReadFile("../../../../../proto/atrium/collections/v1/assets.proto")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`// The type the content was found to be. One of: ([a-z0-9/+., -]+)\.\n\s+string content_type = `).FindSubmatch(b)
	if m == nil {
		t.Fatal("assets.proto documents no content types for Asset.content_type")
	}
	var want []string
	for _, k := range All {
		want = append(want, k.MIME)
		if ct, ok := publicfile.ContentType(strings.Repeat("a", 32) + "." + k.Ext); !ok || ct != k.MIME {
			t.Errorf("publicfile serves .%s as %q, %v; the kind is %s", k.Ext, ct, ok, k.MIME)
		}
	}
	if got := strings.Split(string(m[1]), ", "); !slices.Equal(got, want) {
		t.Fatalf("assets.proto documents %v; the kinds are %v", got, want)
	}
}
