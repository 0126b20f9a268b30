package grpcserver

import (
	"context"

	"github.com/google/uuid"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/atrium-hq/atrium/platform/apperr"
	"github.com/atrium-hq/atrium/platform/pagination"
	"github.com/atrium-hq/atrium/platform/principal"
	actionsv1 "github.com/atrium-hq/atrium/proto/atrium/actions/v1"
	"github.com/atrium-hq/atrium/services/actions/internal/app"
	"github.com/atrium-hq/atrium/services/actions/internal/app/action"
)

func sharePB(sh action.Share, state string) *actionsv1.Share {
	out := &actionsv1.Share{Id: sh.ID, RunId: sh.RunID, ClientId: sh.ClientID, State: state,
		CreatedAt: timestamppb.New(sh.CreatedAt), ExpiresAt: timestamppb.New(sh.ExpiresAt)}
	if !sh.RevokedAt.IsZero() {
		out.RevokedAt = timestamppb.New(sh.RevokedAt)
	}
	return out
}

// ListShares implements actionsv1.ReportsServiceServer.
func (s *ReportsServer) ListShares(ctx context.Context, req *actionsv1.ListSharesRequest) (*actionsv1.ListSharesResponse, error) {
	agency := principal.AgencyID(ctx)
	params := []string{agency, req.ClientId, req.RunId}
	f := app.ShareFilter{ClientID: req.ClientId, RunID: req.RunId, Limit: int(req.GetLimit())}
	if req.Limit != nil && req.GetLimit() == 0 {
		return nil, apperr.Invalid("limit must be 1 to %d; got 0", app.MaxSharesLimit)
	}
	if req.Cursor != "" {
		pos, err := pagination.ReadCursor(req.Cursor, "the client_id and run_id", params...)
		if err != nil {
			return nil, err
		}
		if uuid.Validate(pos) != nil {
			return nil, apperr.Invalid("cursor is malformed: send back next_cursor exactly as received, or no cursor for the first page")
		}
		f.Before = pos
	}
	list, next, err := s.shares.List(ctx, agency, f)
	if err != nil {
		return nil, err
	}
	now := s.shares.Now()
	out := &actionsv1.ListSharesResponse{Shares: make([]*actionsv1.Share, 0, len(list))}
	for _, sh := range list {
		out.Shares = append(out.Shares, sharePB(sh, sh.State(now)))
	}
	if next != "" {
		c := pagination.Cursor(next, params...)
		out.NextCursor = &c
	}
	return out, nil
}

// CreateShare implements actionsv1.ReportsServiceServer.
func (s *ReportsServer) CreateShare(ctx context.Context, req *actionsv1.CreateShareRequest) (*actionsv1.CreateShareResponse, error) {
	days := int(req.GetExpiresInDays())
	if req.ExpiresInDays != nil && days == 0 {
		return nil, apperr.Invalid("expires_in_days must be 1 to %d; got 0", app.MaxShareDays)
	}
	sh, url, err := s.shares.Create(ctx, s.runs, principal.AgencyID(ctx), req.RunId, days)
	if err != nil {
		return nil, err
	}
	out := sharePB(sh, action.ShareActive)
	out.Url = &url
	return &actionsv1.CreateShareResponse{Share: out}, nil
}

// RevokeShare implements actionsv1.ReportsServiceServer.
func (s *ReportsServer) RevokeShare(ctx context.Context, req *actionsv1.RevokeShareRequest) (*actionsv1.RevokeShareResponse, error) {
	sh, err := s.shares.Revoke(ctx, principal.AgencyID(ctx), req.Id)
	if err != nil {
		return nil, err
	}
	return &actionsv1.RevokeShareResponse{Share: sharePB(sh, action.ShareRevoked)}, nil
}

// GetSharedReport implements actionsv1.ReportsServiceServer: the gateway
// resolves /r/{token} with it. The files are named only while the link is
// active.
func (s *ReportsServer) GetSharedReport(ctx context.Context, req *actionsv1.GetSharedReportRequest) (*actionsv1.GetSharedReportResponse, error) {
	sh, state, err := s.shares.Resolve(ctx, req.Token)
	if err != nil {
		return nil, err
	}
	out := &actionsv1.GetSharedReportResponse{State: state}
	if state == action.ShareActive {
		out.HtmlName, out.PdfName = sh.HTMLName, sh.PDFName
	}
	return out, nil
}
