// Package pngimage draws the featured images of posts as PNGs: the title
// large and the subtitle small on a background of one of four styles. It
// uses only the Go fonts compiled into the binary, so images are made
// offline, and it is deterministic: the same request gives the same bytes,
// and the colours follow a hash of the title, so two posts get different
// images and one post always gets the same one.
package pngimage

import (
	"bytes"
	"context"
	"fmt"
	"hash/fnv"
	"image"
	"image/png"
	"strings"

	"golang.org/x/image/font/gofont/gobold"
	"golang.org/x/image/font/gofont/goregular"
	"golang.org/x/image/font/opentype"

	"github.com/atrium-hq/atrium/platform/apperr"
	"github.com/atrium-hq/atrium/services/actions/internal/app/provider"
)

// Image sizes, in pixels.
const (
	// DefaultWidth and DefaultHeight are the size social networks show a
	// link's card at (1.91:1).
	DefaultWidth  = 1200
	DefaultHeight = 630
	// MinSide and MaxSide bound each side: below 200 pixels no title is
	// legible, above 4000 an image costs 64 MB to draw.
	MinSide = 200
	MaxSide = 4000
)

// Config configures a Renderer.
type Config struct {
	// Width and Height are the size of the image drawn for a request that
	// leaves both zero. Default DefaultWidth×DefaultHeight; each between
	// MinSide and MaxSide.
	Width, Height int
}

// Renderer draws featured images. It is safe for concurrent use.
type Renderer struct {
	width, height int
	// bold sets titles, regular subtitles. Parsed fonts may be shared;
	// faces may not (they hold a glyph buffer), so each render makes its
	// own.
	bold, regular *opentype.Font
}

var _ provider.ImageRenderer = (*Renderer)(nil)

// New returns a Renderer.
func New(cfg Config) (*Renderer, error) {
	if cfg.Width == 0 {
		cfg.Width = DefaultWidth
	}
	if cfg.Height == 0 {
		cfg.Height = DefaultHeight
	}
	if cfg.Width < MinSide || cfg.Width > MaxSide {
		return nil, fmt.Errorf("pngimage: Width %d is out of range: allowed are %d to %d pixels", cfg.Width, MinSide, MaxSide)
	}
	if cfg.Height < MinSide || cfg.Height > MaxSide {
		return nil, fmt.Errorf("pngimage: Height %d is out of range: allowed are %d to %d pixels", cfg.Height, MinSide, MaxSide)
	}
	bold, err := opentype.Parse(gobold.TTF)
	if err != nil {
		return nil, fmt.Errorf("pngimage: parse Go Bold: %w", err)
	}
	regular, err := opentype.Parse(goregular.TTF)
	if err != nil {
		return nil, fmt.Errorf("pngimage: parse Go Regular: %w", err)
	}
	return &Renderer{width: cfg.Width, height: cfg.Height, bold: bold, regular: regular}, nil
}

// Render draws req as a PNG. A request whose Width and Height are both zero
// gets the configured size; an empty Style is StyleGradient. A size out of
// range, an unknown style or an empty title is an apperr.Invalid error.
func (r *Renderer) Render(ctx context.Context, req provider.ImageRequest) (provider.RenderedImage, error) {
	if err := ctx.Err(); err != nil {
		return provider.RenderedImage{}, err
	}
	w, h := req.Width, req.Height
	if w == 0 && h == 0 {
		w, h = r.width, r.height
	}
	if w < MinSide || w > MaxSide {
		return provider.RenderedImage{}, apperr.Invalid("image width %d is out of range: allowed are %d to %d pixels", w, MinSide, MaxSide)
	}
	if h < MinSide || h > MaxSide {
		return provider.RenderedImage{}, apperr.Invalid("image height %d is out of range: allowed are %d to %d pixels", h, MinSide, MaxSide)
	}
	style := req.Style
	if style == "" {
		style = provider.StyleGradient
	}
	th, ok := themes[style]
	if !ok {
		return provider.RenderedImage{}, apperr.Invalid("unknown image style %q: allowed are %s", style, strings.Join(provider.ImageStyles, ", "))
	}
	title := strings.TrimSpace(req.Title)
	if title == "" {
		return provider.RenderedImage{}, apperr.Invalid("the image's title is empty")
	}
	subtitle := strings.TrimSpace(req.Subtitle)

	img, err := r.draw(th, title, subtitle, w, h)
	if err != nil {
		return provider.RenderedImage{}, err
	}
	if err := ctx.Err(); err != nil {
		return provider.RenderedImage{}, err
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		return provider.RenderedImage{}, fmt.Errorf("pngimage: encode: %w", err)
	}
	return provider.RenderedImage{PNG: buf.Bytes(), Width: w, Height: h}, nil
}

// draw paints the background of th in the title's colours and sets the text
// on it.
func (r *Renderer) draw(th *theme, title, subtitle string, w, h int) (*image.RGBA, error) {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	pal := th.palettes[paletteIndex(title, len(th.palettes))]
	th.decorate(img, pal)
	lay, err := r.layOut(th, title, subtitle, w, h)
	if err != nil {
		return nil, err
	}
	if err := lay.draw(img, th); err != nil {
		return nil, err
	}
	return img, nil
}

// paletteIndex picks a palette from the title, so the choice is stable for
// a post and spreads over the palette for different posts.
func paletteIndex(title string, n int) int {
	f := fnv.New32a()
	_, _ = f.Write([]byte(title))
	return int(f.Sum32() % uint32(n)) //nolint:gosec // G115: n is the length of a palette list
}
