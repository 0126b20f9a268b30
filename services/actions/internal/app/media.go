package app

import (
	"context"
	"errors"

	"github.com/atrium-hq/atrium/platform/apperr"
	"github.com/atrium-hq/atrium/services/actions/internal/app/provider"
)

// Media returns a generated file by the name its URL carries.
func (a *Actions) Media(ctx context.Context, name string) (provider.Blob, error) {
	if !provider.IsGeneratedName(name) {
		return provider.Blob{}, apperr.NotFound("no media named %q", name)
	}
	b, err := a.providers.Blobs.Get(ctx, name)
	if errors.Is(err, ErrNotFound) {
		return provider.Blob{}, apperr.NotFound("no media named %q", name)
	}
	return b, err
}
