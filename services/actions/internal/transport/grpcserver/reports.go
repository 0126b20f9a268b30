package grpcserver

import (
	"context"

	"google.golang.org/grpc"

	"github.com/atrium-hq/atrium/platform/principal"
	actionsv1 "github.com/atrium-hq/atrium/proto/atrium/actions/v1"
	"github.com/atrium-hq/atrium/services/actions/internal/app"
	"github.com/atrium-hq/atrium/services/actions/internal/app/action"
)

// ReportsServer implements ReportsService: the agencies' report branding
// and the reports' share links.
type ReportsServer struct {
	actionsv1.UnimplementedReportsServiceServer
	reports *app.Reports
	shares  *app.Shares
	runs    app.RunReader
}

// NewReportsServer returns the reports server over the use cases.
func NewReportsServer(r *app.Reports, sh *app.Shares, runs app.RunReader) *ReportsServer {
	return &ReportsServer{reports: r, shares: sh, runs: runs}
}

// Register registers ReportsService on r.
func (s *ReportsServer) Register(r grpc.ServiceRegistrar) {
	actionsv1.RegisterReportsServiceServer(r, s)
}

func brandingPB(b action.Branding) *actionsv1.Branding {
	out := &actionsv1.Branding{Name: b.Name, Colors: &actionsv1.Colors{Primary: b.Primary, Accent: b.Accent}}
	if b.LogoAssetID != "" {
		out.LogoAssetId = &b.LogoAssetID
	}
	return out
}

// GetBranding implements actionsv1.ReportsServiceServer.
func (s *ReportsServer) GetBranding(ctx context.Context, _ *actionsv1.GetBrandingRequest) (*actionsv1.GetBrandingResponse, error) {
	b, err := s.reports.GetBranding(ctx, principal.AgencyID(ctx))
	if err != nil {
		return nil, err
	}
	return &actionsv1.GetBrandingResponse{Branding: brandingPB(b)}, nil
}

// PutBranding implements actionsv1.ReportsServiceServer.
func (s *ReportsServer) PutBranding(ctx context.Context, req *actionsv1.PutBrandingRequest) (*actionsv1.PutBrandingResponse, error) {
	b, err := s.reports.PutBranding(ctx, principal.AgencyID(ctx), action.Branding{Name: req.GetName(), LogoAssetID: req.GetLogoAssetId(),
		Primary: req.GetColors().GetPrimary(), Accent: req.GetColors().GetAccent()})
	if err != nil {
		return nil, err
	}
	return &actionsv1.PutBrandingResponse{Branding: brandingPB(b)}, nil
}
