package report_test

import (
	"bytes"
	"encoding/base64"
	"html"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/atrium-hq/atrium/services/actions/internal/app/report"
)

// sampleLogo is a 120 by 40 logo: a wordmark's proportions, with an
// accent square, in the colours of the sample's branding.
func sampleLogo() image.Image {
	img := image.NewNRGBA(image.Rect(0, 0, 120, 40))
	for y := range 40 {
		for x := range 120 {
			c := color.NRGBA{0x1f, 0x3a, 0x5f, 0xff}
			if x < 40 {
				c = color.NRGBA{0xe0, 0x7a, 0x2e, 0xff}
			}
			if y > 16 && y < 24 && x > 48 {
				c = color.NRGBA{0xff, 0xff, 0xff, 0x00} // a transparent stripe: PNG's alpha, which fpdf keeps as a soft mask
			}
			img.Set(x, y, c)
		}
	}
	return img
}

func encode(t *testing.T, kind string, img image.Image) []byte {
	t.Helper()
	var buf bytes.Buffer
	var err error
	if kind == "png" {
		err = png.Encode(&buf, img)
	} else {
		err = jpeg.Encode(&buf, img, nil)
	}
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// pdfImages lists the PDF's images as pdfimages does: "width height" of
// each image (a PNG's alpha is a second, "smask", entry, left out).
func pdfImages(t *testing.T, pdf []byte) []string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "r.pdf")
	if err := os.WriteFile(path, pdf, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("pdfimages", "-list", path).Output()
	if err != nil {
		t.Fatalf("pdfimages (poppler-utils): %v", err)
	}
	var sizes []string
	for _, line := range strings.Split(string(out), "\n")[2:] {
		f := strings.Fields(line)
		if len(f) > 5 && f[2] == "image" {
			sizes = append(sizes, f[3]+" "+f[4])
		}
	}
	return sizes
}

var logoImg = regexp.MustCompile(`<img class="logo" src="data:image/(png|jpeg);base64,([A-Za-z0-9+/=]+)" alt="">`)

// A 16-bit PNG, which fpdf cannot read itself, is drawn all the same: the
// PDF draws Go's 8-bit re-encoding of every logo.
func TestA16BitLogoIsDrawnInThePDF(t *testing.T) {
	deep := image.NewNRGBA64(image.Rect(0, 0, 30, 10))
	for i := range deep.Pix {
		deep.Pix[i] = 0xff
	}
	pdf, err := report.PDF(figures(t), report.Branding{Name: "N", Logo: encode(t, "png", deep)})
	if err != nil {
		t.Fatal(err)
	}
	if imgs := pdfImages(t, pdf); len(imgs) != 1 || imgs[0] != "30 10" {
		t.Errorf("the PDF's images are %q; want the 30x10 logo", imgs)
	}
}

// A client opening the report sees the agency's logo in its header, in
// the HTML page (embedded, so that the file alone shows it, from the share
// link as saved) and in the PDF, PNG or JPEG, beside the agency's name.
func TestTheLogoIsDrawnInBothFiles(t *testing.T) {
	for _, kind := range []string{"png", "jpeg"} {
		t.Run(kind, func(t *testing.T) {
			logo := encode(t, kind, sampleLogo())
			b := report.Branding{Name: "Northwind SEO", Primary: "#1f3a5f", Accent: "#e07a2e", Logo: logo}
			page, err := report.HTML(figures(t), b)
			if err != nil {
				t.Fatal(err)
			}
			m := logoImg.FindSubmatch([]byte(html.UnescapeString(string(page)))) // the attribute writes + as &#43;
			if m == nil {
				t.Fatalf("the HTML has no embedded logo:\n%.600s", page)
			}
			if got, _ := base64.StdEncoding.DecodeString(string(m[2])); string(m[1]) != kind || !bytes.Equal(got, logo) {
				t.Errorf("the HTML's logo is a %s of %d bytes; want the %s of %d bytes", m[1], len(got), kind, len(logo))
			}
			if !strings.Contains(string(page), "Northwind SEO") {
				t.Error("the name must stay beside the logo")
			}
			pdf, err := report.PDF(figures(t), b)
			if err != nil {
				t.Fatal(err)
			}
			if imgs := pdfImages(t, pdf); len(imgs) != 1 || imgs[0] != "120 40" {
				t.Errorf("the PDF's images are %q; want the 120x40 logo once", imgs)
			}
			if text := PDFText(t, pdf); !strings.Contains(text, "Northwind SEO") || !strings.Contains(text, "March report") {
				t.Errorf("the PDF's header lost its text beside the logo:\n%.400s", text)
			}
		})
	}
}

// A logo that cannot be drawn leaves the name only; the report is made.
func TestALogoThatCannotBeDrawnLeavesTheName(t *testing.T) {
	for name, logo := range map[string][]byte{
		"not an image":  []byte("<svg onload=alert(1)>"),
		"a GIF":         []byte("GIF89a\x01\x00\x01\x00\x00\x00\x00;"),
		"truncated PNG": encode(t, "png", sampleLogo())[:200], // its header is whole: fpdf alone would panic on it
		"too many pixels": func() []byte {
			b := encode(t, "png", image.NewGray(image.Rect(0, 0, 5000, 4000)))
			return b
		}(),
	} {
		t.Run(name, func(t *testing.T) {
			b := report.Branding{Name: "Northwind SEO", Logo: logo}
			page, err := report.HTML(figures(t), b)
			if err != nil {
				t.Fatal(err)
			}
			if logoImg.Match(page) || strings.Contains(string(page), "<img") {
				t.Error("the HTML shows a logo that cannot be drawn")
			}
			if strings.Contains(string(page), "onload") {
				t.Error("the logo's bytes reached the page")
			}
			pdf, err := report.PDF(figures(t), b)
			if err != nil {
				t.Fatalf("a bad logo failed the PDF: %v", err)
			}
			if imgs := pdfImages(t, pdf); len(imgs) != 0 {
				t.Errorf("the PDF has images %q; want none", imgs)
			}
			if text := PDFText(t, pdf); !strings.Contains(text, "Northwind SEO") || !strings.Contains(text, "Rye Plumbing") {
				t.Errorf("the PDF without its logo lost its text:\n%.400s", text)
			}
		})
	}
}
