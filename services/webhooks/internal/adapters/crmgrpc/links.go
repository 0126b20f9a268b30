// Package crmgrpc is the webhooks service's client of the CRM: it answers
// the app.Links port over gRPC at each fan-out, so that an event about a
// client reaches the agencies linked to it when it is fanned out.
package crmgrpc

import (
	"context"

	"google.golang.org/grpc"

	crmv1 "github.com/atrium-hq/atrium/proto/atrium/crm/v1"
)

// Links asks the CRM which agencies a client is linked to.
type Links struct {
	client crmv1.ClientAccessServiceClient
}

// New returns the port over conn, which must sign a service principal into
// every call.
func New(conn grpc.ClientConnInterface) *Links {
	return &Links{client: crmv1.NewClientAccessServiceClient(conn)}
}

// AgenciesOf implements app.Links.
func (l *Links) AgenciesOf(ctx context.Context, clientID string) ([]string, error) {
	resp, err := l.client.ListClientAgencies(ctx, &crmv1.ListClientAgenciesRequest{ClientId: clientID})
	if err != nil {
		return nil, err
	}
	return resp.AgencyIds, nil
}
