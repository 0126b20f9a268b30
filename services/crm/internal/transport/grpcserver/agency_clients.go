package grpcserver

import (
	"context"

	"github.com/atrium-hq/atrium/platform/principal"
	crmv1 "github.com/atrium-hq/atrium/proto/atrium/crm/v1"
)

// agencyClientsServer implements crmv1.AgencyClientsServiceServer for the
// principal's agency: a type of its own, since its ListClients is not the
// admin API's (which takes any agency_id, or none).
type agencyClientsServer struct {
	crmv1.UnimplementedAgencyClientsServiceServer
	*Server
}

var _ crmv1.AgencyClientsServiceServer = (*agencyClientsServer)(nil)

// ListClients implements crmv1.AgencyClientsServiceServer.
func (s *agencyClientsServer) ListClients(ctx context.Context, _ *crmv1.AgencyClientsServiceListClientsRequest) (*crmv1.AgencyClientsServiceListClientsResponse, error) {
	cs, err := s.directory.AgencyClients(ctx, principal.AgencyID(ctx))
	if err != nil {
		return nil, err
	}
	out := &crmv1.AgencyClientsServiceListClientsResponse{Clients: make([]*crmv1.Client, len(cs))}
	for i, c := range cs {
		out.Clients[i] = clientPB(c)
	}
	return out, nil
}
