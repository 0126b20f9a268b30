package grpcserver

import (
	"context"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/atrium-hq/atrium/platform/principal"
	"github.com/atrium-hq/atrium/platform/render"
	"github.com/atrium-hq/atrium/platform/value"
	auditv1 "github.com/atrium-hq/atrium/proto/atrium/audit/v1"
	"github.com/atrium-hq/atrium/services/audit/internal/app"
)

// Server implements auditv1.AuditService.
type Server struct {
	auditv1.UnimplementedAuditServiceServer
	trail *app.Trail
}

// AdminServer implements auditv1.AuditAdminService.
type AdminServer struct {
	auditv1.UnimplementedAuditAdminServiceServer
	trail *app.Trail
}

// Register registers both services on r.
func Register(r grpc.ServiceRegistrar, trail *app.Trail) {
	auditv1.RegisterAuditServiceServer(r, &Server{trail: trail})
	auditv1.RegisterAuditAdminServiceServer(r, &AdminServer{trail: trail})
}

// ListAuditEvents implements auditv1.AuditServiceServer: the caller's
// agency's events, its sites' included (the access rule has made sure the
// caller is bound to an agency).
func (s *Server) ListAuditEvents(ctx context.Context, req *auditv1.ListAuditEventsRequest) (*auditv1.ListAuditEventsResponse, error) {
	p, _ := principal.FromContext(ctx)
	page, err := s.trail.List(ctx, app.Scope{AgencyID: p.AgencyID}, app.Query{Actor: req.Actor, ResourceType: req.ResourceType, Action: req.Action,
		ResourceID: req.ResourceId, Since: req.Since, Until: req.Until, Cursor: req.Cursor, Limit: req.Limit})
	if err != nil {
		return nil, err
	}
	if render.Requested(ctx) {
		return &auditv1.ListAuditEventsResponse{RenderedJson: renderEvents(page.Events, page.Next)}, nil
	}
	out := &auditv1.ListAuditEventsResponse{AuditEvents: eventsPB(page.Events)}
	if page.Next != "" {
		out.NextCursor = &page.Next
	}
	return out, nil
}

// ListAuditEvents implements auditv1.AuditAdminServiceServer.
func (s *AdminServer) ListAuditEvents(ctx context.Context, req *auditv1.AuditAdminServiceListAuditEventsRequest) (*auditv1.AuditAdminServiceListAuditEventsResponse, error) {
	var scope app.Scope
	var err error
	if req.AgencyId != "" {
		if scope.AgencyID, err = value.BodyID("agency_id", req.AgencyId); err != nil {
			return nil, err
		}
	}
	if req.SiteId != "" {
		if scope.SiteID, err = value.BodyID("site_id", req.SiteId); err != nil {
			return nil, err
		}
	}
	page, err := s.trail.List(ctx, scope, app.Query{Actor: req.Actor, ResourceType: req.ResourceType, Action: req.Action,
		ResourceID: req.ResourceId, Since: req.Since, Until: req.Until, Cursor: req.Cursor, Limit: req.Limit})
	if err != nil {
		return nil, err
	}
	if render.Requested(ctx) {
		return &auditv1.AuditAdminServiceListAuditEventsResponse{RenderedJson: renderEvents(page.Events, page.Next)}, nil
	}
	out := &auditv1.AuditAdminServiceListAuditEventsResponse{AuditEvents: eventsPB(page.Events)}
	if page.Next != "" {
		out.NextCursor = &page.Next
	}
	return out, nil
}

func eventsPB(evs []app.Event) []*auditv1.AuditEvent {
	out := make([]*auditv1.AuditEvent, len(evs))
	for i, e := range evs {
		out[i] = &auditv1.AuditEvent{
			Id: e.ID, At: timestamppb.New(e.At), Service: e.Service, Action: e.Action, Method: e.Method,
			ResourceType: e.ResourceType, ResourceId: e.ResourceID, Fields: e.Fields,
			AgencyId: present(e.AgencyID), SiteId: present(e.SiteID),
			Actor:         &auditv1.Actor{Kind: e.ActorKind, Id: e.ActorID, MemberId: present(e.MemberID), SessionId: present(e.SessionID)},
			ClientAddress: present(e.ClientAddress), UserAgent: present(e.UserAgent), TraceId: present(e.TraceID),
		}
	}
	return out
}

// present is s, absent when empty: what the event does not know is left
// out of its JSON rather than shown as "".
func present(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
