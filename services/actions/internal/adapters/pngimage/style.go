package pngimage

import (
	"image"
	"image/color"
	"math"

	"github.com/atrium-hq/atrium/services/actions/internal/app/provider"
)

// theme is how one style looks.
type theme struct {
	// palettes are the colour sets the title's hash picks from.
	palettes []palette
	// title and subtitle are the text colours; a subtitle is quieter than
	// its title.
	title, subtitle color.Color
	// titleScale multiplies the title's starting size: bold sets it larger.
	titleScale float64
	// decorate draws the style's background and accents. It depends only
	// on the image's size and the palette, never on the text, so the text
	// area is known before the text is set.
	decorate func(img *image.RGBA, p palette)
}

// palette is one set of colours of a style.
type palette struct {
	// bg is the background; bg2 is the second colour of a gradient.
	bg, bg2 color.RGBA
	// accent colours the style's bar, line or shapes.
	accent color.RGBA
}

func rgb(v uint32) color.RGBA {
	return color.RGBA{R: uint8(v >> 16), G: uint8(v >> 8), B: uint8(v), A: 0xff} //nolint:gosec // G115: the three bytes of 0xRRGGBB
}

var (
	white = color.RGBA{R: 0xff, G: 0xff, B: 0xff, A: 0xff}
	black = color.RGBA{A: 0xff}
)

// themes holds the styles of provider.ImageStyles.
var themes = map[string]*theme{
	// Diagonal two-colour gradients, dark enough for white text.
	provider.StyleGradient: {
		palettes: []palette{
			{bg: rgb(0x4F46E5), bg2: rgb(0xDB2777)},
			{bg: rgb(0x0F766E), bg2: rgb(0x1D4ED8)},
			{bg: rgb(0xC2410C), bg2: rgb(0xBE123C)},
			{bg: rgb(0x6D28D9), bg2: rgb(0x2563EB)},
			{bg: rgb(0x166534), bg2: rgb(0x0E7490)},
			{bg: rgb(0x1E3A8A), bg2: rgb(0x9333EA)},
		},
		title:      white,
		subtitle:   color.NRGBA{R: 0xff, G: 0xff, B: 0xff, A: 0xd9},
		titleScale: 1,
		decorate:   decorateGradient,
	},
	// Off-white paper, dark ink, one thin accent bar above the text.
	provider.StyleMinimal: {
		palettes: []palette{
			{bg: rgb(0xFAF9F6), accent: rgb(0x2563EB)},
			{bg: rgb(0xF8FAFC), accent: rgb(0xDC2626)},
			{bg: rgb(0xFBF7F2), accent: rgb(0x059669)},
			{bg: rgb(0xF7F7F5), accent: rgb(0xD97706)},
			{bg: rgb(0xF9F8FC), accent: rgb(0x7C3AED)},
			{bg: rgb(0xFCF8F8), accent: rgb(0xDB2777)},
		},
		title:      rgb(0x111827),
		subtitle:   rgb(0x4B5563),
		titleScale: 1,
		decorate:   decorateMinimal,
	},
	// Saturated solid colour, large heavy white text, circles and a bar.
	provider.StyleBold: {
		palettes: []palette{
			{bg: rgb(0xE11D48), accent: rgb(0xFDE047)},
			{bg: rgb(0x2563EB), accent: rgb(0xFDE047)},
			{bg: rgb(0x16A34A), accent: rgb(0xFEF08A)},
			{bg: rgb(0xEA580C), accent: rgb(0x1E1B4B)},
			{bg: rgb(0x9333EA), accent: rgb(0x67E8F9)},
			{bg: rgb(0x0891B2), accent: rgb(0xFDE68A)},
		},
		title:      white,
		subtitle:   color.NRGBA{R: 0xff, G: 0xff, B: 0xff, A: 0xe6},
		titleScale: 1.2,
		decorate:   decorateBold,
	},
	// Near-black, light text, one line in an accent colour below the text.
	provider.StyleDark: {
		palettes: []palette{
			{bg: rgb(0x0D1117), accent: rgb(0x22D3EE)},
			{bg: rgb(0x111318), accent: rgb(0xA78BFA)},
			{bg: rgb(0x0F0F12), accent: rgb(0xF472B6)},
			{bg: rgb(0x14110F), accent: rgb(0x34D399)},
			{bg: rgb(0x0B0D10), accent: rgb(0xFBBF24)},
			{bg: rgb(0x12101A), accent: rgb(0x60A5FA)},
		},
		title:      rgb(0xF9FAFB),
		subtitle:   rgb(0x9CA3AF),
		titleScale: 1,
		decorate:   decorateDark,
	},
}

// margins returns the horizontal and vertical margins of an image: the text
// stays inside them, accents may use them.
func margins(w, h int) (mx, my int) { return w * 7 / 100, h * 10 / 100 }

// decorateGradient blends bg at the top-left corner into bg2 at the
// bottom-right. Integer arithmetic keeps the pixels identical on every
// platform.
func decorateGradient(img *image.RGBA, p palette) {
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	den := 2 * (w - 1) * (h - 1)
	c1 := [3]int{int(p.bg.R), int(p.bg.G), int(p.bg.B)}
	c2 := [3]int{int(p.bg2.R), int(p.bg2.G), int(p.bg2.B)}
	for y := 0; y < h; y++ {
		row := img.Pix[y*img.Stride : y*img.Stride+4*w]
		for x := 0; x < w; x++ {
			// The position along the diagonal, 0 at the top-left corner
			// and den at the bottom-right, so that the gradient follows
			// the diagonal whatever the aspect ratio.
			num := x*(h-1) + y*(w-1)
			px := row[4*x : 4*x+4 : 4*x+4]
			for i := range 3 {
				px[i] = uint8(c1[i] + (c2[i]-c1[i])*num/den) //nolint:gosec // G115: between two channel values, num <= den
			}
			px[3] = 0xff
		}
	}
}

func decorateMinimal(img *image.RGBA, p palette) {
	w, h := img.Bounds().Dx(), img.Bounds().Dy()
	fill(img, img.Bounds(), p.bg)
	mx, my := margins(w, h)
	t := max(3, h/105)
	top := my/2 - t/2
	fill(img, image.Rect(mx, top, mx+w/8, top+t), p.accent)
}

func decorateBold(img *image.RGBA, p palette) {
	w, h := img.Bounds().Dx(), img.Bounds().Dy()
	fill(img, img.Bounds(), p.bg)
	fw, fh := float64(w), float64(h)
	// Two circles running off the right-hand side, one lighter and one
	// darker than the background, keep the solid colour from looking flat
	// while staying quiet behind white text.
	fillCircle(img, fw-fw*0.08, fh*0.12, fh*0.48, mix(p.bg, white, 0.16))
	fillCircle(img, fw-fw*0.26, fh*1.08, fh*0.36, mix(p.bg, black, 0.18))
	mx, my := margins(w, h)
	t := max(4, h/60)
	bottom := h - my/2 + t/2
	fill(img, image.Rect(mx, bottom-t, mx+w/12, bottom), p.accent)
}

func decorateDark(img *image.RGBA, p palette) {
	w, h := img.Bounds().Dx(), img.Bounds().Dy()
	fill(img, img.Bounds(), p.bg)
	mx, my := margins(w, h)
	t := max(2, h/160)
	top := h - my/2 - t/2
	fill(img, image.Rect(mx, top, w-mx, top+t), p.accent)
}

// fill paints r in c, opaque.
func fill(img *image.RGBA, r image.Rectangle, c color.RGBA) {
	r = r.Intersect(img.Bounds())
	for y := r.Min.Y; y < r.Max.Y; y++ {
		row := img.Pix[img.PixOffset(r.Min.X, y):img.PixOffset(r.Max.X, y)]
		for i := 0; i < len(row); i += 4 {
			row[i], row[i+1], row[i+2], row[i+3] = c.R, c.G, c.B, c.A
		}
	}
}

// fillCircle paints an opaque disc over img, its edge anti-aliased by the
// share of each edge pixel it covers.
func fillCircle(img *image.RGBA, cx, cy, radius float64, c color.RGBA) {
	box := image.Rect(int(math.Floor(cx-radius)), int(math.Floor(cy-radius)),
		int(math.Ceil(cx+radius))+1, int(math.Ceil(cy+radius))+1).Intersect(img.Bounds())
	for y := box.Min.Y; y < box.Max.Y; y++ {
		dy := float64(y) + 0.5 - cy
		for x := box.Min.X; x < box.Max.X; x++ {
			dx := float64(x) + 0.5 - cx
			cover := radius - math.Sqrt(dx*dx+dy*dy) + 0.5
			if cover <= 0 {
				continue
			}
			i := img.PixOffset(x, y)
			px := img.Pix[i : i+4 : i+4]
			if cover >= 1 {
				px[0], px[1], px[2] = c.R, c.G, c.B
				continue
			}
			a := int(cover * 256)
			px[0], px[1], px[2] = blend(px[0], c.R, a), blend(px[1], c.G, a), blend(px[2], c.B, a)
		}
	}
}

// mix returns a blended towards b by share (0 to 1).
func mix(a, b color.RGBA, share float64) color.RGBA {
	m := func(x, y uint8) uint8 { return uint8(math.Round(float64(x)*(1-share) + float64(y)*share)) }
	return color.RGBA{R: m(a.R, b.R), G: m(a.G, b.G), B: m(a.B, b.B), A: 0xff}
}

// blend mixes src over dst with coverage a/256, a from 0 to 256.
func blend(dst, src uint8, a int) uint8 {
	return uint8((int(dst)*(256-a) + int(src)*a) >> 8) //nolint:gosec // G115: a weighted mean of two bytes is a byte
}
