package pngimage_test

import (
	"testing"

	"github.com/atrium-hq/atrium/services/actions/internal/adapters/pngimage"
	"github.com/atrium-hq/atrium/services/actions/internal/app/provider"
	"github.com/atrium-hq/atrium/services/actions/internal/app/provider/providertest"
)

func TestImagesContract(t *testing.T) {
	providertest.RunImages(t, func(t *testing.T) provider.ImageRenderer {
		r, err := pngimage.New(pngimage.Config{})
		if err != nil {
			t.Fatal(err)
		}
		return r
	})
}
