// Package crmgrpc is the actions service's client of the CRM: it answers
// the app.ClientDirectory port over gRPC, each time it is asked (the
// service puts linkcache in front of it, which remembers "linked" until
// the CRM's unlink or update event).
package crmgrpc

import (
	"context"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	crmv1 "github.com/atrium-hq/atrium/proto/atrium/crm/v1"
	"github.com/atrium-hq/atrium/services/actions/internal/app"
	"github.com/atrium-hq/atrium/services/actions/internal/app/action"
)

// Directory asks the CRM about clients and agencies.
type Directory struct {
	client crmv1.ClientAccessServiceClient
}

// New returns the port over conn, which must sign a service principal into
// every call.
func New(conn grpc.ClientConnInterface) *Directory {
	return &Directory{client: crmv1.NewClientAccessServiceClient(conn)}
}

var _ app.ClientDirectory = (*Directory)(nil)

// LinkedClient implements app.ClientDirectory.
func (d *Directory) LinkedClient(ctx context.Context, agencyID, clientID string) (action.Client, bool, error) {
	resp, err := d.client.GetLinkedClient(ctx, &crmv1.GetLinkedClientRequest{AgencyId: agencyID, ClientId: clientID})
	if status.Code(err) == codes.NotFound {
		return action.Client{}, false, nil
	}
	if err != nil {
		return action.Client{}, false, err
	}
	c := resp.GetClient()
	return action.Client{ID: c.GetId(), Name: c.GetName(), Domain: c.GetDomain(), Status: c.GetStatus(), AutoDeploy: c.GetAutoDeploy()}, true, nil
}

// AgencyExists implements app.ClientDirectory.
func (d *Directory) AgencyExists(ctx context.Context, agencyID string) (bool, error) {
	resp, err := d.client.CheckAgencyExists(ctx, &crmv1.CheckAgencyExistsRequest{AgencyId: agencyID})
	if err != nil {
		return false, err
	}
	return resp.Exists, nil
}
