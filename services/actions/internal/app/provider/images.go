package provider

import "context"

// ImageRenderer draws a featured image.
type ImageRenderer interface {
	Render(ctx context.Context, req ImageRequest) (RenderedImage, error)
}

// Image styles.
const (
	StyleGradient = "gradient"
	StyleMinimal  = "minimal"
	StyleBold     = "bold"
	StyleDark     = "dark"
)

// ImageStyles lists the styles a featured image may have.
var ImageStyles = []string{StyleGradient, StyleMinimal, StyleBold, StyleDark}

// ImageRequest is a featured image to draw: the title large, the subtitle
// small, on a background of the style.
type ImageRequest struct {
	Title, Subtitle string
	Style           string // one of ImageStyles
	Width, Height   int
}

// RenderedImage is a PNG.
type RenderedImage struct {
	PNG           []byte
	Width, Height int
}
