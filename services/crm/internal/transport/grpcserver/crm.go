package grpcserver

import (
	"context"

	"github.com/atrium-hq/atrium/platform/principal"
	"github.com/atrium-hq/atrium/platform/render"
	crmv1 "github.com/atrium-hq/atrium/proto/atrium/crm/v1"
	"github.com/atrium-hq/atrium/services/crm/internal/app"
)

// ListProspects implements crmv1.CRMServiceServer.
func (s *Server) ListProspects(ctx context.Context, req *crmv1.ListProspectsRequest) (*crmv1.ListProspectsResponse, error) {
	ps, err := s.pipeline.ListProspects(ctx, principal.AgencyID(ctx), req.Limit, req.Offset)
	if err != nil {
		return nil, err
	}
	if render.Requested(ctx) {
		return &crmv1.ListProspectsResponse{RenderedJson: renderProspects(ps)}, nil
	}
	out := &crmv1.ListProspectsResponse{Data: make([]*crmv1.Prospect, len(ps))}
	for i, p := range ps {
		out.Data[i] = prospectPB(p)
	}
	return out, nil
}

// ListDeals implements crmv1.CRMServiceServer.
func (s *Server) ListDeals(ctx context.Context, req *crmv1.ListDealsRequest) (*crmv1.ListDealsResponse, error) {
	ds, err := s.pipeline.ListDeals(ctx, principal.AgencyID(ctx), req.Limit, req.Offset)
	if err != nil {
		return nil, err
	}
	if render.Requested(ctx) {
		return &crmv1.ListDealsResponse{RenderedJson: renderDeals(ds)}, nil
	}
	out := &crmv1.ListDealsResponse{Data: make([]*crmv1.Deal, len(ds))}
	for i, d := range ds {
		out.Data[i] = dealPB(d)
	}
	return out, nil
}

func prospectPB(p app.Prospect) *crmv1.Prospect {
	return &crmv1.Prospect{
		Id:            p.ID,
		BusinessName:  p.BusinessName,
		WebsiteUrl:    p.WebsiteURL,
		Domain:        p.Domain,
		Industry:      p.Industry,
		HealthScore:   p.HealthScore,
		LeadScore:     p.LeadScore,
		PipelineStage: p.PipelineStage,
		CreatedAt:     ts(p.CreatedAt),
		UpdatedAt:     ts(p.UpdatedAt),
	}
}

func dealPB(d app.Deal) *crmv1.Deal {
	return &crmv1.Deal{
		Id:                d.ID,
		Title:             d.Title,
		Stage:             d.Stage,
		Value:             d.Value,
		Currency:          d.Currency,
		ExpectedCloseDate: d.ExpectedCloseDate,
		ClosedAt:          tsOrNull(d.ClosedAt),
		CreatedAt:         ts(d.CreatedAt),
		UpdatedAt:         ts(d.UpdatedAt),
	}
}
