package providertest

import (
	"bytes"
	"context"
	"image/png"
	"strings"
	"testing"

	"github.com/atrium-hq/atrium/services/actions/internal/app/provider"
)

// RunImages runs the image renderer's contract against renderers made by
// newRenderer: every style draws a PNG of the size asked for, which is the
// size it reports (generate_blog_image records it), whatever the title's
// length or script; the caller's context ends a rendering.
func RunImages(t *testing.T, newRenderer func(t *testing.T) provider.ImageRenderer) {
	const w, h = 1200, 630
	t.Run("EveryStyleAndAnyTitleIsAPNGOfTheSizeAsked", func(t *testing.T) {
		r := newRenderer(t)
		var reqs []provider.ImageRequest
		for _, style := range provider.ImageStyles {
			reqs = append(reqs, provider.ImageRequest{Title: "Sourdough at home", Subtitle: "rye.example", Style: style})
		}
		for _, title := range []string{"Ça va, Zoë? Crème brûlée at 7 € — the guide", strings.Repeat("Longword ", 25), "x"} {
			reqs = append(reqs, provider.ImageRequest{Title: title, Subtitle: "Café Zoë", Style: provider.StyleGradient})
		}
		for _, req := range reqs {
			req.Width, req.Height = w, h
			img, err := r.Render(t.Context(), req)
			if err != nil {
				t.Errorf("%s, %q: %v", req.Style, req.Title, err)
				continue
			}
			cfg, err := png.DecodeConfig(bytes.NewReader(img.PNG))
			switch {
			case err != nil:
				t.Errorf("%s, %q: not a PNG: %v", req.Style, req.Title, err)
			case cfg.Width != w || cfg.Height != h || img.Width != w || img.Height != h:
				t.Errorf("%s, %q: a %dx%d PNG reported as %dx%d, want %dx%d", req.Style, req.Title, cfg.Width, cfg.Height, img.Width, img.Height, w, h)
			}
		}
	})
	t.Run("TheCallersContextEndsTheRendering", func(t *testing.T) {
		r := newRenderer(t)
		callerContexts(t, func(ctx context.Context) error {
			_, err := r.Render(ctx, provider.ImageRequest{Title: "Late", Style: provider.StyleDark, Width: w, Height: h})
			return err
		})
	})
}
