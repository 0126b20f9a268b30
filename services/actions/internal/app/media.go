package app

import (
	"context"
	"errors"
	"regexp"

	"github.com/atrium-hq/atrium/platform/apperr"
	"github.com/atrium-hq/atrium/services/actions/internal/app/provider"
)

// mediaName is the form of the names actions give generated files: 128
// random bits in hex and an extension. Anything else names nothing.
var mediaName = regexp.MustCompile(`^[0-9a-f]{32}\.(png)$`)

// Media returns a generated file by the name its URL carries.
func (a *Actions) Media(ctx context.Context, name string) (provider.Blob, error) {
	if !mediaName.MatchString(name) {
		return provider.Blob{}, apperr.NotFound("no media named %q", name)
	}
	b, err := a.providers.Blobs.Get(ctx, name)
	if errors.Is(err, ErrNotFound) {
		return provider.Blob{}, apperr.NotFound("no media named %q", name)
	}
	return b, err
}
