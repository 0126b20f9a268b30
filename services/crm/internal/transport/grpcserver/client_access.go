package grpcserver

import (
	"context"

	"github.com/atrium-hq/atrium/platform/apperr"
	crmv1 "github.com/atrium-hq/atrium/proto/atrium/crm/v1"
	"github.com/atrium-hq/atrium/services/crm/internal/app"
)

// CheckClientAccess implements crmv1.ClientAccessServiceServer.
func (s *Server) CheckClientAccess(ctx context.Context, req *crmv1.CheckClientAccessRequest) (*crmv1.CheckClientAccessResponse, error) {
	ok, err := s.directory.Linked(ctx, req.AgencyId, req.ClientId)
	if err != nil {
		return nil, err
	}
	return &crmv1.CheckClientAccessResponse{Linked: ok}, nil
}

// CheckClientExists implements crmv1.ClientAccessServiceServer.
func (s *Server) CheckClientExists(ctx context.Context, req *crmv1.CheckClientExistsRequest) (*crmv1.CheckClientExistsResponse, error) {
	ok, err := s.directory.ClientExists(ctx, req.ClientId)
	if err != nil {
		return nil, err
	}
	return &crmv1.CheckClientExistsResponse{Exists: ok}, nil
}

// GetLinkedClient implements crmv1.ClientAccessServiceServer.
func (s *Server) GetLinkedClient(ctx context.Context, req *crmv1.GetLinkedClientRequest) (*crmv1.GetLinkedClientResponse, error) {
	c, ok, err := s.directory.LinkedClient(ctx, req.AgencyId, req.ClientId)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, apperr.NotFound("client %q is not linked to agency %q", req.ClientId, req.AgencyId)
	}
	return &crmv1.GetLinkedClientResponse{Client: clientPB(c)}, nil
}

// CheckAgencyExists implements crmv1.ClientAccessServiceServer.
func (s *Server) CheckAgencyExists(ctx context.Context, req *crmv1.CheckAgencyExistsRequest) (*crmv1.CheckAgencyExistsResponse, error) {
	ok, err := s.directory.AgencyExists(ctx, req.AgencyId)
	if err != nil {
		return nil, err
	}
	return &crmv1.CheckAgencyExistsResponse{Exists: ok}, nil
}

// ListAgencyClients implements crmv1.ClientAccessServiceServer.
func (s *Server) ListAgencyClients(ctx context.Context, req *crmv1.ListAgencyClientsRequest) (*crmv1.ListAgencyClientsResponse, error) {
	cs, err := s.directory.LinkedClients(ctx, req.AgencyId)
	if err != nil {
		return nil, err
	}
	out := &crmv1.ListAgencyClientsResponse{Clients: make([]*crmv1.Client, len(cs))}
	for i, c := range cs {
		out.Clients[i] = clientPB(c)
	}
	return out, nil
}

// ListClientAgencies implements crmv1.ClientAccessServiceServer.
func (s *Server) ListClientAgencies(ctx context.Context, req *crmv1.ListClientAgenciesRequest) (*crmv1.ListClientAgenciesResponse, error) {
	ids, err := s.directory.ClientAgencies(ctx, req.ClientId)
	if err != nil {
		return nil, err
	}
	return &crmv1.ListClientAgenciesResponse{AgencyIds: ids}, nil
}

func clientPB(c app.Client) *crmv1.Client {
	return &crmv1.Client{Id: c.ID, Name: c.Name, Domain: c.Domain, Status: c.Status, AutoDeploy: c.AutoDeploy,
		CreatedAt: ts(c.CreatedAt), UpdatedAt: ts(c.UpdatedAt)}
}
