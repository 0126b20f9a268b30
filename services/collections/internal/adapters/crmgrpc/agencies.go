// Package crmgrpc is the collections service's client of the CRM: it
// answers the app.Agencies port over gRPC, when a site is given an owner,
// so that the agency and its client are the CRM's at that moment.
package crmgrpc

import (
	"context"

	"google.golang.org/grpc"

	crmv1 "github.com/atrium-hq/atrium/proto/atrium/crm/v1"
	"github.com/atrium-hq/atrium/services/collections/internal/app"
)

// Agencies asks the CRM about agencies and their clients.
type Agencies struct {
	client crmv1.ClientAccessServiceClient
}

// New returns the port over conn, which must sign a service principal into
// every call.
func New(conn grpc.ClientConnInterface) *Agencies {
	return &Agencies{client: crmv1.NewClientAccessServiceClient(conn)}
}

var _ app.Agencies = (*Agencies)(nil)

// AgencyExists implements app.Agencies.
func (a *Agencies) AgencyExists(ctx context.Context, agencyID string) (bool, error) {
	resp, err := a.client.CheckAgencyExists(ctx, &crmv1.CheckAgencyExistsRequest{AgencyId: agencyID})
	if err != nil {
		return false, err
	}
	return resp.GetExists(), nil
}

// ClientLinked implements app.Agencies.
func (a *Agencies) ClientLinked(ctx context.Context, agencyID, clientID string) (bool, error) {
	resp, err := a.client.CheckClientAccess(ctx, &crmv1.CheckClientAccessRequest{AgencyId: agencyID, ClientId: clientID})
	if err != nil {
		return false, err
	}
	return resp.GetLinked(), nil
}
