package collectionsgrpc

import (
	"context"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	collectionsv1 "github.com/atrium-hq/atrium/proto/atrium/collections/v1"
)

// Owners implements app.SiteOwners over gRPC.
type Owners struct {
	client collectionsv1.SiteOwnerServiceClient
}

// New returns the adapter over conn, a connection that signs the audit
// service's principal into every call.
func New(conn grpc.ClientConnInterface) *Owners {
	return &Owners{client: collectionsv1.NewSiteOwnerServiceClient(conn)}
}

// SiteOwner implements app.SiteOwners: a site deleted since is no one's.
func (o *Owners) SiteOwner(ctx context.Context, siteID string) (string, error) {
	resp, err := o.client.GetSiteOwner(ctx, &collectionsv1.GetSiteOwnerRequest{SiteId: siteID})
	if status.Code(err) == codes.NotFound {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	return resp.AgencyId, nil
}
