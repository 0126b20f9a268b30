// Package crmgrpc is the data service's client of the CRM: it answers the
// app.ClientAccess port over gRPC, on every request, so that linking and
// unlinking a client apply at once.
package crmgrpc

import (
	"context"

	"google.golang.org/grpc"

	crmv1 "github.com/atrium-hq/atrium/proto/atrium/crm/v1"
	"github.com/atrium-hq/atrium/services/data/internal/app"
)

// Access asks the CRM which clients an agency may reach.
type Access struct {
	client crmv1.ClientAccessServiceClient
}

// New returns the port over conn, which must sign a service principal into
// every call.
func New(conn grpc.ClientConnInterface) *Access {
	return &Access{client: crmv1.NewClientAccessServiceClient(conn)}
}

// Linked implements app.ClientAccess.
func (a *Access) Linked(ctx context.Context, agencyID, clientID string) (bool, error) {
	resp, err := a.client.CheckClientAccess(ctx, &crmv1.CheckClientAccessRequest{AgencyId: agencyID, ClientId: clientID})
	if err != nil {
		return false, err
	}
	return resp.Linked, nil
}

// Exists implements app.ClientAccess.
func (a *Access) Exists(ctx context.Context, clientID string) (bool, error) {
	resp, err := a.client.CheckClientExists(ctx, &crmv1.CheckClientExistsRequest{ClientId: clientID})
	if err != nil {
		return false, err
	}
	return resp.Exists, nil
}

// Clients implements app.ClientAccess.
func (a *Access) Clients(ctx context.Context, agencyID string) ([]app.Client, error) {
	resp, err := a.client.ListAgencyClients(ctx, &crmv1.ListAgencyClientsRequest{AgencyId: agencyID})
	if err != nil {
		return nil, err
	}
	out := make([]app.Client, len(resp.Clients))
	for i, c := range resp.Clients {
		out[i] = app.Client{ID: c.Id, Name: c.Name, Domain: c.Domain, Status: c.Status, AutoDeploy: c.AutoDeploy,
			CreatedAt: c.CreatedAt.AsTime().UTC(), UpdatedAt: c.UpdatedAt.AsTime().UTC()}
	}
	return out, nil
}
