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
	check := func(t *testing.T, img provider.RenderedImage) {
		t.Helper()
		cfg, err := png.DecodeConfig(bytes.NewReader(img.PNG))
		switch {
		case err != nil:
			t.Errorf("not a PNG: %v", err)
		case cfg.Width != w || cfg.Height != h || img.Width != w || img.Height != h:
			t.Errorf("a %dx%d PNG reported as %dx%d, want %dx%d", cfg.Width, cfg.Height, img.Width, img.Height, w, h)
		}
	}
	t.Run("EveryStyleIsAPNGOfTheSizeAsked", func(t *testing.T) {
		r := newRenderer(t)
		for _, style := range provider.ImageStyles {
			img, err := r.Render(t.Context(), provider.ImageRequest{Title: "Sourdough at home", Subtitle: "rye.example", Style: style, Width: w, Height: h})
			if err != nil {
				t.Errorf("%s: %v", style, err)
				continue
			}
			check(t, img)
		}
	})
	t.Run("AnyTitle", func(t *testing.T) {
		r := newRenderer(t)
		for _, title := range []string{"Ça va, Zoë? Crème brûlée at 7 € — the guide", strings.Repeat("Longword ", 25), "x"} {
			img, err := r.Render(t.Context(), provider.ImageRequest{Title: title, Subtitle: "Café Zoë", Style: provider.StyleGradient, Width: w, Height: h})
			if err != nil {
				t.Errorf("%q: %v", title, err)
				continue
			}
			check(t, img)
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
