package pngimage

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"strings"
	"testing"

	"golang.org/x/image/font"

	"github.com/atrium-hq/atrium/platform/apperr"
	"github.com/atrium-hq/atrium/services/actions/internal/app/provider"
)

func newRenderer(t *testing.T) *Renderer {
	t.Helper()
	r, err := New(Config{})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return r
}

// render is the image Render encodes for req, read before the encoding:
// encoding and decoding PNGs under the race detector was most of these
// tests' time, and TestRenderEncodesWhatIsDrawn checks that Render's PNG
// holds exactly these pixels. req names its style and size, and its title
// has no surrounding space, as Render leaves them.
func render(t *testing.T, r *Renderer, req provider.ImageRequest) *image.RGBA {
	t.Helper()
	th, ok := themes[req.Style]
	if !ok || req.Width == 0 || req.Height == 0 || req.Title != strings.TrimSpace(req.Title) {
		t.Fatalf("render(%+v): give a style, a size and a trimmed title", req)
	}
	img, err := r.draw(th, req.Title, req.Subtitle, req.Width, req.Height)
	if err != nil {
		t.Fatalf("draw(%+v): %v", req, err)
	}
	return img
}

// decode is the image a PNG holds, as RGBA.
func decode(t *testing.T, b []byte) *image.RGBA {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("the output is not a PNG: %v", err)
	}
	if rgba, ok := img.(*image.RGBA); ok {
		return rgba
	}
	rgba := image.NewRGBA(img.Bounds())
	draw.Draw(rgba, rgba.Bounds(), img, img.Bounds().Min, draw.Src)
	return rgba
}

// distance is the largest difference of the colours' channels, 0 to 255.
func distance(a, b color.Color) int {
	ar, ag, ab, _ := a.RGBA()
	br, bg, bb, _ := b.RGBA()
	d := 0
	for _, p := range [][2]uint32{{ar, br}, {ag, bg}, {ab, bb}} {
		d = max(d, abs(int(p[0]>>8)-int(p[1]>>8)))
	}
	return d
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}

func averageColour(img *image.RGBA, r image.Rectangle) color.RGBA {
	var sr, sg, sb, n int
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			c := img.RGBAAt(x, y)
			sr, sg, sb, n = sr+int(c.R), sg+int(c.G), sb+int(c.B), n+1
		}
	}
	return color.RGBA{R: uint8(sr / n), G: uint8(sg / n), B: uint8(sb / n), A: 0xff}
}

// countNear counts the pixels of r within 48 of c in every channel.
func countNear(img *image.RGBA, r image.Rectangle, c color.Color) int {
	n := 0
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			if distance(img.RGBAAt(x, y), c) <= 48 {
				n++
			}
		}
	}
	return n
}

// background draws what an image of title has before its text is set.
func background(style, title string, w, h int) *image.RGBA {
	th := themes[style]
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	th.decorate(img, th.palettes[paletteIndex(title, len(th.palettes))])
	return img
}

func TestRenderIsAPNGOfTheRequestedSize(t *testing.T) {
	r := newRenderer(t)
	for _, tc := range []struct{ reqW, reqH, w, h int }{
		{0, 0, DefaultWidth, DefaultHeight},
		{800, 418, 800, 418},
		{MinSide, MinSide, MinSide, MinSide},
		{MaxSide, MinSide, MaxSide, MinSide},
		{MinSide, 1000, MinSide, 1000},
	} {
		t.Run(fmt.Sprintf("%dx%d", tc.reqW, tc.reqH), func(t *testing.T) {
			out, err := r.Render(context.Background(), provider.ImageRequest{Title: "Ten ways to get more reviews", Subtitle: "Acme Dental", Width: tc.reqW, Height: tc.reqH})
			if err != nil {
				t.Fatal(err)
			}
			if out.Width != tc.w || out.Height != tc.h {
				t.Errorf("RenderedImage size = %dx%d, want %dx%d", out.Width, out.Height, tc.w, tc.h)
			}
			cfg, format, err := image.DecodeConfig(bytes.NewReader(out.PNG))
			if err != nil || format != "png" {
				t.Fatalf("decode: format %q, error %v", format, err)
			}
			if cfg.Width != tc.w || cfg.Height != tc.h {
				t.Errorf("PNG is %dx%d, want %dx%d", cfg.Width, cfg.Height, tc.w, tc.h)
			}
		})
	}
}

// What the other tests read from render is what a user gets in the PNG.
func TestRenderEncodesWhatIsDrawn(t *testing.T) {
	r := newRenderer(t)
	req := provider.ImageRequest{Title: "Ten ways to get more reviews", Subtitle: "Acme Dental", Style: provider.StyleBold, Width: 400, Height: 210}
	out, err := r.Render(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := decode(t, out.PNG), render(t, r, req); !bytes.Equal(got.Pix, want.Pix) || got.Rect != want.Rect {
		t.Fatal("the PNG's pixels differ from the image drawn for the request")
	}
}

func TestConfiguredDefaultSize(t *testing.T) {
	r, err := New(Config{Width: 600, Height: 400})
	if err != nil {
		t.Fatal(err)
	}
	out, err := r.Render(context.Background(), provider.ImageRequest{Title: "Hello"})
	if err != nil {
		t.Fatal(err)
	}
	if out.Width != 600 || out.Height != 400 {
		t.Errorf("size = %dx%d, want the configured 600x400", out.Width, out.Height)
	}
}

func TestStylesHaveDifferentBackgrounds(t *testing.T) {
	r := newRenderer(t)
	const title = "How to rank in the local pack"
	corner := image.Rect(0, 0, 16, 16)
	avg := map[string]color.RGBA{}
	for _, style := range provider.ImageStyles {
		avg[style] = averageColour(render(t, r, provider.ImageRequest{Title: title, Style: style, Width: 400, Height: 210}), corner)
	}
	for i, a := range provider.ImageStyles {
		for _, b := range provider.ImageStyles[i+1:] {
			if d := distance(avg[a], avg[b]); d < 40 {
				t.Errorf("corners of %s %v and %s %v differ by only %d", a, avg[a], b, avg[b], d)
			}
		}
	}
	luma := func(c color.RGBA) int { return (299*int(c.R) + 587*int(c.G) + 114*int(c.B)) / 1000 }
	if l := luma(avg[provider.StyleMinimal]); l < 235 {
		t.Errorf("minimal background luma %d, want off-white (>= 235)", l)
	}
	if l := luma(avg[provider.StyleDark]); l > 30 {
		t.Errorf("dark background luma %d, want near-black (<= 30)", l)
	}
	if c := avg[provider.StyleBold]; max(c.R, c.G, c.B)-min(c.R, c.G, c.B) < 100 {
		t.Errorf("bold background %v is not saturated", c)
	}
}

func TestEmptyStyleIsGradient(t *testing.T) {
	r := newRenderer(t)
	req := provider.ImageRequest{Title: "Same post", Width: 400, Height: 210}
	a, _ := r.Render(context.Background(), req)
	req.Style = provider.StyleGradient
	b, _ := r.Render(context.Background(), req)
	if !bytes.Equal(a.PNG, b.PNG) {
		t.Error("an empty style does not draw the gradient style")
	}
}

func TestColoursFollowTheTitle(t *testing.T) {
	r := newRenderer(t)
	for _, style := range provider.ImageStyles {
		seen := map[color.RGBA]bool{}
		for i := range 12 {
			img := render(t, r, provider.ImageRequest{Title: fmt.Sprintf("Post number %d", i), Style: style, Width: 300, Height: 200})
			seen[averageColour(img, image.Rect(0, 0, 8, 8))] = true
		}
		if len(seen) < 3 {
			t.Errorf("%s: 12 titles gave %d background colours, want at least 3", style, len(seen))
		}
	}
}

func TestTextIsDrawn(t *testing.T) {
	r := newRenderer(t)
	for _, style := range provider.ImageStyles {
		t.Run(style, func(t *testing.T) {
			const w, h = 600, 315
			th := themes[style]
			mx, my := margins(w, h)
			area := image.Rect(mx, my, w-mx, h-my)
			count := func(title string) int {
				return countNear(render(t, r, provider.ImageRequest{Title: title, Style: style, Width: w, Height: h}), area, th.title)
			}
			// Count against the background alone: the bold style's text
			// and background could share a colour.
			bg := countNear(background(style, "Hi", w, h), area, th.title)
			short := count("Hi") - bg
			long := count("Hi there, ten ways to get more reviews") -
				countNear(background(style, "Hi there, ten ways to get more reviews", w, h), area, th.title)
			if short <= 0 {
				t.Errorf("the title %q drew no pixels in the text colour", "Hi")
			}
			if long <= short {
				t.Errorf("a longer title drew %d text pixels, no more than a short one's %d", long, short)
			}
		})
	}
}

func TestSubtitleIsDrawn(t *testing.T) {
	r := newRenderer(t)
	const title = "Ten ways to get more reviews"
	without := render(t, r, provider.ImageRequest{Title: title, Style: provider.StyleMinimal, Width: 600, Height: 315})
	with := render(t, r, provider.ImageRequest{Title: title, Subtitle: "A guide for dentists in Austin", Style: provider.StyleMinimal, Width: 600, Height: 315})
	area := with.Bounds()
	if a, b := countNear(without, area, themes[provider.StyleMinimal].subtitle), countNear(with, area, themes[provider.StyleMinimal].subtitle); b <= a {
		t.Errorf("a subtitle drew no pixels in the subtitle colour (%d with, %d without)", b, a)
	}
}

func TestLongTextStaysInsideTheMargins(t *testing.T) {
	r := newRenderer(t)
	long := strings.TrimSpace(strings.Repeat("Local search ranking factors explained for busy owners ", 30))
	for _, tc := range []struct {
		name, title, subtitle string
		w, h                  int
	}{
		{"long title", long, long, DefaultWidth, DefaultHeight},
		{"one long word", strings.Repeat("x", 5000), strings.Repeat("y", 5000), 600, 315},
		{"small square", long, "", MinSide, MinSide},
		{"wide strip", long, long, 2000, MinSide},
	} {
		for _, style := range provider.ImageStyles {
			t.Run(tc.name+"/"+style, func(t *testing.T) {
				img := render(t, r, provider.ImageRequest{Title: tc.title, Subtitle: tc.subtitle, Style: style, Width: tc.w, Height: tc.h})
				bg := background(style, tc.title, tc.w, tc.h)
				mx, my := margins(tc.w, tc.h)
				if mx < tc.w/20 || my < tc.h/20 {
					t.Fatalf("margins %d, %d are too narrow to test", mx, my)
				}
				area := image.Rect(mx, my, tc.w-mx, tc.h-my)
				inside, outside := 0, 0
				for y := 0; y < tc.h; y++ {
					row := img.PixOffset(0, y)
					if bytes.Equal(img.Pix[row:row+4*tc.w], bg.Pix[row:row+4*tc.w]) {
						continue // no text on this row
					}
					for x := 0; x < tc.w; x++ {
						if img.RGBAAt(x, y) == bg.RGBAAt(x, y) {
							continue
						}
						if image.Pt(x, y).In(area) {
							inside++
						} else {
							outside++
						}
					}
				}
				if outside > 0 {
					t.Errorf("%d pixels of text in the margins", outside)
				}
				if inside == 0 {
					t.Error("no text drawn")
				}
			})
		}
	}
}

func TestLongTitleIsShrunkThenCut(t *testing.T) {
	r := newRenderer(t)
	th := themes[provider.StyleGradient]
	mx, _ := margins(DefaultWidth, DefaultHeight)
	width := DefaultWidth - 2*mx
	start := float64(DefaultHeight) * 0.115

	check := func(t *testing.T, lay *layout) {
		t.Helper()
		if n := len(lay.title.lines); n < 1 || n > maxTitleLines {
			t.Fatalf("%d title lines, want 1 to %d", n, maxTitleLines)
		}
		face, err := newFace(lay.title.font, lay.title.size)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range lay.title.lines {
			ink, adv := font.BoundString(face, line)
			if ink.Min.X.Floor() < 0 || ink.Max.X.Ceil() > width || adv.Ceil() > width {
				t.Errorf("line %q spans %v to %v (advance %v), wider than %d", line, ink.Min.X, ink.Max.X, adv, width)
			}
			m := face.Metrics()
			if top, bottom := lay.title.baselines[i]-m.Ascent.Ceil(), lay.title.baselines[i]+m.Descent.Ceil(); top < lay.area.Min.Y || bottom > lay.area.Max.Y {
				t.Errorf("line %q spans y %d to %d, outside %v", line, top, bottom, lay.area)
			}
		}
	}

	t.Run("shrunk", func(t *testing.T) {
		// Five lines at the starting size, four once shrunk.
		title := "The complete guide to local search for dental practices: reviews, citations, business profiles and the backlinks that move rankings"
		lay, err := r.layOut(th, title, "", DefaultWidth, DefaultHeight)
		if err != nil {
			t.Fatal(err)
		}
		check(t, lay)
		if lay.title.size >= start {
			t.Errorf("title size %.1f, want it shrunk below %.1f", lay.title.size, start)
		}
		if got := strings.Join(lay.title.lines, " "); got != title {
			t.Errorf("the shrunk title reads %q, want all of %q", got, title)
		}
	})
	t.Run("cut", func(t *testing.T) {
		title := strings.Repeat("Local search ranking factors explained ", 30)
		lay, err := r.layOut(th, title, "", DefaultWidth, DefaultHeight)
		if err != nil {
			t.Fatal(err)
		}
		check(t, lay)
		if len(lay.title.lines) != maxTitleLines {
			t.Errorf("%d lines, want %d", len(lay.title.lines), maxTitleLines)
		}
		if last := lay.title.lines[len(lay.title.lines)-1]; !strings.HasSuffix(last, ellipsis) {
			t.Errorf("the last line %q does not end with an ellipsis", last)
		}
	})
	t.Run("short", func(t *testing.T) {
		lay, err := r.layOut(th, "Hello", "", DefaultWidth, DefaultHeight)
		if err != nil {
			t.Fatal(err)
		}
		if lay.title.size != start || len(lay.title.lines) != 1 {
			t.Errorf("a short title got size %.1f over %d lines, want %.1f over 1", lay.title.size, len(lay.title.lines), start)
		}
	})
}

func TestInvalidRequests(t *testing.T) {
	r := newRenderer(t)
	for _, tc := range []struct {
		name string
		req  provider.ImageRequest
		want string
	}{
		{"too narrow", provider.ImageRequest{Title: "a", Width: MinSide - 1, Height: 630}, "width 199"},
		{"too wide", provider.ImageRequest{Title: "a", Width: MaxSide + 1, Height: 630}, "width 4001"},
		{"too short", provider.ImageRequest{Title: "a", Width: 1200, Height: 10}, "height 10"},
		{"only width", provider.ImageRequest{Title: "a", Width: 1200}, "height 0"},
		{"negative", provider.ImageRequest{Title: "a", Width: -5, Height: 630}, "width -5"},
		{"unknown style", provider.ImageRequest{Title: "a", Style: "neon"}, `"neon"`},
		{"empty title", provider.ImageRequest{Title: "  \n"}, "title"},
		{"unprintable title", provider.ImageRequest{Title: "\x00\x01"}, "title"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := r.Render(context.Background(), tc.req)
			if apperr.KindOf(err) != apperr.KindInvalid {
				t.Fatalf("error %v, want an invalid-request error", err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not name %s", err, tc.want)
			}
		})
	}
}

func TestNewValidatesTheConfig(t *testing.T) {
	for _, cfg := range []Config{{Width: 100}, {Height: MaxSide + 1}, {Width: -1}} {
		if _, err := New(cfg); err == nil {
			t.Errorf("New(%+v) accepted a size out of range", cfg)
		}
	}
}

func TestRenderIsDeterministic(t *testing.T) {
	req := provider.ImageRequest{Title: "Ten ways to get more reviews", Subtitle: "Acme Dental", Style: provider.StyleBold, Width: 400, Height: 210}
	a, err := newRenderer(t).Render(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	b, err := newRenderer(t).Render(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.PNG, b.PNG) {
		t.Error("the same request gave different PNGs")
	}
	req.Title += "!"
	c, err := newRenderer(t).Render(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(a.PNG, c.PNG) {
		t.Error("different titles gave the same PNG")
	}
}
