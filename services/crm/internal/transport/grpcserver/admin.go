package grpcserver

import (
	"context"
	"time"

	"github.com/atrium-hq/atrium/platform/apperr"
	"github.com/atrium-hq/atrium/platform/principal"
	crmv1 "github.com/atrium-hq/atrium/proto/atrium/crm/v1"
	"github.com/atrium-hq/atrium/services/crm/internal/app"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// CreateAgency implements crmv1.CRMAdminServiceServer.
func (s *Server) CreateAgency(ctx context.Context, req *crmv1.CreateAgencyRequest) (*crmv1.CreateAgencyResponse, error) {
	a, err := s.directory.CreateAgency(ctx, req.Name)
	if err != nil {
		return nil, err
	}
	return &crmv1.CreateAgencyResponse{Agency: agencyPB(a)}, nil
}

// ListAgencies implements crmv1.CRMAdminServiceServer.
func (s *Server) ListAgencies(ctx context.Context, req *crmv1.ListAgenciesRequest) (*crmv1.ListAgenciesResponse, error) {
	as, err := s.directory.ListAgencies(ctx, req.Limit, req.Offset)
	if err != nil {
		return nil, err
	}
	out := &crmv1.ListAgenciesResponse{Agencies: make([]*crmv1.Agency, len(as))}
	for i, a := range as {
		out.Agencies[i] = agencyPB(a)
	}
	return out, nil
}

func agencyPB(a app.Agency) *crmv1.Agency {
	return &crmv1.Agency{Id: a.ID, Name: a.Name, CreatedAt: ts(a.CreatedAt), UpdatedAt: ts(a.UpdatedAt)}
}

// ListClients implements crmv1.CRMAdminServiceServer.
func (s *Server) ListClients(ctx context.Context, req *crmv1.ListClientsRequest) (*crmv1.ListClientsResponse, error) {
	cs, err := s.directory.ListClients(ctx, app.ClientFilter{AgencyID: req.AgencyId}, req.Limit, req.Offset)
	if err != nil {
		return nil, err
	}
	out := &crmv1.ListClientsResponse{Clients: make([]*crmv1.Client, len(cs))}
	for i, c := range cs {
		out.Clients[i] = clientPB(c)
	}
	return out, nil
}

// CreateMember implements crmv1.CRMAdminServiceServer.
func (s *Server) CreateMember(ctx context.Context, req *crmv1.CreateMemberRequest) (*crmv1.CreateMemberResponse, error) {
	m, inv, err := s.people.CreateMember(ctx, app.NewMember{AgencyID: req.AgencyId, Name: req.Name, Email: req.Email,
		Role: req.Role, SiteIDs: req.SiteIds, ClientID: req.ClientId})
	if err != nil {
		return nil, err
	}
	return &crmv1.CreateMemberResponse{Member: memberPB(m), Invitation: invitationPB(inv)}, nil
}

// CreatePasswordReset implements crmv1.CRMAdminServiceServer.
func (s *Server) CreatePasswordReset(ctx context.Context, req *crmv1.CreatePasswordResetRequest) (*crmv1.CreatePasswordResetResponse, error) {
	r, err := s.sessions.CreatePasswordReset(ctx, req.Email)
	if err != nil {
		return nil, err
	}
	return &crmv1.CreatePasswordResetResponse{Token: r.Token, Url: r.URL, ExpiresAt: ts(r.ExpiresAt)}, nil
}

// CreateClient implements crmv1.CRMAdminServiceServer.
func (s *Server) CreateClient(ctx context.Context, req *crmv1.CreateClientRequest) (*crmv1.CreateClientResponse, error) {
	c, err := s.directory.CreateClient(ctx, app.NewClient{Name: req.Name, Domain: req.Domain, Status: req.Status})
	if err != nil {
		return nil, err
	}
	return &crmv1.CreateClientResponse{Client: clientPB(c)}, nil
}

// UpdateClient implements crmv1.CRMAdminServiceServer.
func (s *Server) UpdateClient(ctx context.Context, req *crmv1.UpdateClientRequest) (*crmv1.UpdateClientResponse, error) {
	c, err := s.directory.UpdateClient(ctx, req.ClientId, app.ClientSettings{Status: req.Status, AutoDeploy: req.AutoDeploy})
	if err != nil {
		return nil, err
	}
	return &crmv1.UpdateClientResponse{Client: clientPB(c)}, nil
}

// LinkClient implements crmv1.CRMAdminServiceServer.
func (s *Server) LinkClient(ctx context.Context, req *crmv1.LinkClientRequest) (*crmv1.LinkClientResponse, error) {
	l, err := s.directory.LinkClient(ctx, req.AgencyId, req.ClientId)
	if err != nil {
		return nil, err
	}
	return &crmv1.LinkClientResponse{Link: &crmv1.ClientLink{
		AgencyId: l.AgencyID, ClientId: l.ClientID, CreatedAt: ts(l.CreatedAt),
	}}, nil
}

// UnlinkClient implements crmv1.CRMAdminServiceServer.
func (s *Server) UnlinkClient(ctx context.Context, req *crmv1.UnlinkClientRequest) (*crmv1.UnlinkClientResponse, error) {
	if err := s.directory.UnlinkClient(ctx, req.AgencyId, req.ClientId); err != nil {
		return nil, err
	}
	return &crmv1.UnlinkClientResponse{Ok: true}, nil
}

// CreateKey implements crmv1.CRMAdminServiceServer.
func (s *Server) CreateKey(ctx context.Context, req *crmv1.CreateKeyRequest) (*crmv1.CreateKeyResponse, error) {
	exp, err := optionalTime("expires_at", req.ExpiresAt)
	if err != nil {
		return nil, err
	}
	k, secret, err := s.keys.Create(ctx, app.NewKey{
		Name: req.Name, Scopes: req.Scopes, SiteID: req.SiteId, AgencyID: req.AgencyId, ExpiresAt: exp, PublishedOnly: req.PublishedOnly,
	})
	if err != nil {
		return nil, err
	}
	pb := keyPB(k)
	pb.Secret = &secret
	return &crmv1.CreateKeyResponse{Key: pb}, nil
}

// ListKeys implements crmv1.CRMAdminServiceServer.
func (s *Server) ListKeys(ctx context.Context, req *crmv1.ListKeysRequest) (*crmv1.ListKeysResponse, error) {
	ks, err := s.keys.List(ctx, app.KeyFilter{AgencyID: req.AgencyId, SiteID: req.SiteId}, req.Limit, req.Offset)
	if err != nil {
		return nil, err
	}
	out := &crmv1.ListKeysResponse{Keys: make([]*crmv1.APIKey, len(ks))}
	for i, k := range ks {
		out.Keys[i] = keyPB(k)
	}
	return out, nil
}

// RevokeKey implements crmv1.CRMAdminServiceServer.
func (s *Server) RevokeKey(ctx context.Context, req *crmv1.RevokeKeyRequest) (*crmv1.RevokeKeyResponse, error) {
	k, err := s.keys.Revoke(ctx, req.KeyId)
	if err != nil {
		return nil, err
	}
	return &crmv1.RevokeKeyResponse{Key: keyPB(k)}, nil
}

// VerifyAPIKey implements crmv1.APIKeyServiceServer.
func (s *Server) VerifyAPIKey(ctx context.Context, req *crmv1.VerifyAPIKeyRequest) (*crmv1.VerifyAPIKeyResponse, error) {
	k, err := s.keys.Verify(ctx, req.SecretSha256)
	if err != nil {
		return nil, err
	}
	return &crmv1.VerifyAPIKeyResponse{Key: keyPB(k)}, nil
}

func keyPB(k app.APIKey) *crmv1.APIKey {
	return &crmv1.APIKey{
		Id:        k.ID,
		Name:      k.Name,
		Prefix:    k.Prefix,
		Scopes:    principal.ScopeStrings(k.Scopes),
		SiteId:    stringOrNull(k.SiteID),
		AgencyId:  stringOrNull(k.AgencyID),
		ExpiresAt: tsOrNull(k.ExpiresAt),
		RevokedAt: tsOrNull(k.RevokedAt),
		CreatedAt: ts(k.CreatedAt),
		// Absent for ordinary keys, whose shape the spec fixes.
		PublishedOnly: trueOrNil(k.PublishedOnly),
	}
}

func trueOrNil(b bool) *bool {
	if !b {
		return nil
	}
	return &b
}

// CreateProspect implements crmv1.CRMAdminServiceServer.
func (s *Server) CreateProspect(ctx context.Context, req *crmv1.CreateProspectRequest) (*crmv1.CreateProspectResponse, error) {
	p, err := s.pipeline.CreateProspect(ctx, req.AgencyId, app.ProspectFields{
		BusinessName:  &req.BusinessName,
		WebsiteURL:    &req.WebsiteUrl,
		Domain:        &req.Domain,
		Industry:      &req.Industry,
		HealthScore:   req.HealthScore,
		LeadScore:     req.LeadScore,
		PipelineStage: &req.PipelineStage,
	})
	if err != nil {
		return nil, err
	}
	return &crmv1.CreateProspectResponse{Prospect: prospectPB(p)}, nil
}

// UpdateProspect implements crmv1.CRMAdminServiceServer.
func (s *Server) UpdateProspect(ctx context.Context, req *crmv1.UpdateProspectRequest) (*crmv1.UpdateProspectResponse, error) {
	p, err := s.pipeline.UpdateProspect(ctx, req.AgencyId, req.ProspectId, app.ProspectFields{
		BusinessName:  req.BusinessName,
		WebsiteURL:    req.WebsiteUrl,
		Domain:        req.Domain,
		Industry:      req.Industry,
		HealthScore:   req.HealthScore,
		LeadScore:     req.LeadScore,
		PipelineStage: req.PipelineStage,
	})
	if err != nil {
		return nil, err
	}
	return &crmv1.UpdateProspectResponse{Prospect: prospectPB(p)}, nil
}

// CreateDeal implements crmv1.CRMAdminServiceServer.
func (s *Server) CreateDeal(ctx context.Context, req *crmv1.CreateDealRequest) (*crmv1.CreateDealResponse, error) {
	closedAt, err := optionalTime("closed_at", req.ClosedAt)
	if err != nil {
		return nil, err
	}
	d, err := s.pipeline.CreateDeal(ctx, req.AgencyId, app.DealFields{
		OwnerMemberID:     &req.OwnerMemberId,
		Title:             &req.Title,
		Stage:             &req.Stage,
		Value:             &req.Value,
		Currency:          &req.Currency,
		ExpectedCloseDate: &req.ExpectedCloseDate,
		ClosedAt:          closedAt,
	})
	if err != nil {
		return nil, err
	}
	return &crmv1.CreateDealResponse{Deal: dealPB(d)}, nil
}

// UpdateDeal implements crmv1.CRMAdminServiceServer.
func (s *Server) UpdateDeal(ctx context.Context, req *crmv1.UpdateDealRequest) (*crmv1.UpdateDealResponse, error) {
	d, err := s.pipeline.UpdateDeal(ctx, req.AgencyId, req.DealId, app.DealFields{
		OwnerMemberID:     req.OwnerMemberId,
		Title:             req.Title,
		Stage:             req.Stage,
		Value:             req.Value,
		Currency:          req.Currency,
		ExpectedCloseDate: req.ExpectedCloseDate,
	})
	if err != nil {
		return nil, err
	}
	return &crmv1.UpdateDealResponse{Deal: dealPB(d)}, nil
}

func optionalTime(field string, t *timestamppb.Timestamp) (*time.Time, error) {
	if t == nil {
		return nil, nil
	}
	if err := t.CheckValid(); err != nil {
		return nil, apperr.Invalid("%s must be an RFC 3339 timestamp between years 0001 and 9999", field)
	}
	v := t.AsTime()
	return &v, nil
}
