package handlers

import (
	"context"
	"fmt"

	"github.com/atrium-hq/atrium/services/actions/internal/app/action"
	"github.com/atrium-hq/atrium/services/actions/internal/app/datasets"
	"github.com/atrium-hq/atrium/services/actions/internal/app/provider"
)

// The image action: a featured image drawn by the image renderer and kept
// in the blob store.

// Featured images are the social-card size.
const imageWidth, imageHeight = 1200, 630

// GenerateBlogImage is generate_blog_image: a featured image, stored as a
// blob under an unguessable name and recorded with its URL.
func GenerateBlogImage(ctx context.Context, x *action.Exec) (action.Result, error) {
	title, style := x.Input.Str("title"), x.Input.Str("style")
	img, err := x.P.Images.Render(ctx, provider.ImageRequest{Title: title, Subtitle: clientDomainOrName(x), Style: style, Width: imageWidth, Height: imageHeight})
	if err != nil {
		return action.Result{}, err
	}
	name, err := provider.NewPNGName()
	if err != nil {
		return action.Result{}, err
	}
	if err := x.P.Blobs.Put(ctx, name, "image/png", img.PNG); err != nil {
		return action.Result{}, fmt.Errorf("store the image: %w", err)
	}
	d := datasets.BlogImages
	row := map[string]any{
		d.ID: newID(x, d.Resource, 0), d.Title: title, d.Style: style, d.URL: x.P.MediaURL(name),
		d.Width: float64(img.Width), d.Height: float64(img.Height), d.Bytes: float64(len(img.PNG)), d.ContentType: "image/png",
	}
	return action.Result{Data: row, Writes: []action.RecordWrite{upsert(d.Resource, row)}}, nil
}
