package app

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/atrium-hq/atrium/platform/apperr"
	"github.com/atrium-hq/atrium/platform/value"
)

// MaxAgencyAssetFile bounds what AgencyFile reads into memory: the file is
// handed over whole (an agency's logo), never streamed.
const MaxAgencyAssetFile = 4 << 20

// AgencyFile returns the bytes of asset id if one of sites (the agency's
// own, from Sites.OfAgency) holds it: how another service reads an asset
// an agency named by id, such as its reports' logo, without a site bound
// to the call. Not found when none of the sites has it, so that another
// agency's asset is as absent as one that never existed. A file larger
// than maxBytes is refused before it is read.
func (u *Assets) AgencyFile(ctx context.Context, sites []Site, id string, maxBytes int64) ([]byte, Asset, error) {
	if maxBytes < 1 || maxBytes > MaxAgencyAssetFile {
		return nil, Asset{}, apperr.Invalid("max_bytes must be 1 to %d; got %d", MaxAgencyAssetFile, maxBytes)
	}
	canonical, err := value.PathID("asset", id)
	if err != nil {
		return nil, Asset{}, err
	}
	for _, s := range sites {
		a, err := u.store.Asset(ctx, s.ID, canonical)
		if errors.Is(err, ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, Asset{}, err
		}
		if a.Size > maxBytes {
			return nil, Asset{}, apperr.PreconditionFailed("asset %s is %d bytes, more than the %d asked for", a.ID, a.Size, maxBytes)
		}
		obj, err := u.objects.Open(ctx, a.ObjectKey())
		if err != nil {
			return nil, Asset{}, fmt.Errorf("open asset %s's file: %w", a.ID, err)
		}
		defer func() { _ = obj.Close() }()
		b, err := io.ReadAll(io.LimitReader(obj, maxBytes+1))
		if err != nil {
			return nil, Asset{}, fmt.Errorf("read asset %s's file: %w", a.ID, err)
		}
		if int64(len(b)) > maxBytes {
			return nil, Asset{}, apperr.PreconditionFailed("asset %s is more than the %d bytes asked for", a.ID, maxBytes)
		}
		return b, a, nil
	}
	return nil, Asset{}, assetNotFound(id)
}
