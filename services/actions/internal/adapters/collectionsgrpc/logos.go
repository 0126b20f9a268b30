// Package collectionsgrpc is the actions service's client of the
// collections service: it reads an agency's asset (the logo a report
// draws, action.LogoReader) through the internal GetAgencyAssetFile,
// which finds it among the agency's own sites only.
package collectionsgrpc

import (
	"context"

	"google.golang.org/grpc"

	collectionsv1 "github.com/atrium-hq/atrium/proto/atrium/collections/v1"
	"github.com/atrium-hq/atrium/services/actions/internal/app/action"
)

// Logos reads agencies' logo files from the collections service.
type Logos struct {
	client collectionsv1.SiteOwnerServiceClient
}

// New returns the port over conn, which must sign a service principal into
// every call (the RPC is internal).
func New(conn grpc.ClientConnInterface) *Logos {
	return &Logos{client: collectionsv1.NewSiteOwnerServiceClient(conn)}
}

var _ action.LogoReader = (*Logos)(nil)

// AgencyAssetFile implements action.LogoReader.
func (l *Logos) AgencyAssetFile(ctx context.Context, agencyID, assetID string, max int64) ([]byte, string, error) {
	resp, err := l.client.GetAgencyAssetFile(ctx, &collectionsv1.GetAgencyAssetFileRequest{AgencyId: agencyID, AssetId: assetID, MaxBytes: max})
	if err != nil {
		return nil, "", err
	}
	return resp.Content, resp.ContentType, nil
}
