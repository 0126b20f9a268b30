package grpcserver

import (
	"context"
	"crypto/sha256"
	"math"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/atrium-hq/atrium/platform/audit"
	"github.com/atrium-hq/atrium/platform/principal"
	crmv1 "github.com/atrium-hq/atrium/proto/atrium/crm/v1"
	"github.com/atrium-hq/atrium/services/crm/internal/app"
)

// peopleServer implements crmv1.PeopleServiceServer for the principal's
// agency: every call's agency is the principal's, never the request's.
type peopleServer struct {
	crmv1.UnimplementedPeopleServiceServer
	*Server
}

var _ crmv1.PeopleServiceServer = (*peopleServer)(nil)

func memberPB(m app.Member) *crmv1.Member {
	pb := &crmv1.Member{Id: m.ID, AgencyId: m.AgencyID, Name: m.Name, Email: m.Email, CreatedAt: ts(m.CreatedAt), UpdatedAt: ts(m.UpdatedAt),
		Role: stringOrNull(string(m.Role)), SiteIds: m.SiteIDs, ClientId: stringOrNull(m.ClientID), Status: m.Status(), UserId: stringOrNull(m.UserID)}
	if pb.SiteIds == nil {
		pb.SiteIds = []string{}
	}
	return pb
}

func invitationPB(inv *app.IssuedInvitation) *crmv1.Invitation {
	if inv == nil {
		return nil
	}
	return &crmv1.Invitation{Id: inv.ID, MemberId: inv.MemberID, Email: inv.Email, ExpiresAt: ts(inv.ExpiresAt), CreatedAt: ts(inv.CreatedAt),
		Token: &inv.Token, Url: &inv.URL}
}

// ListMembers implements crmv1.PeopleServiceServer.
func (s *peopleServer) ListMembers(ctx context.Context, req *crmv1.ListMembersRequest) (*crmv1.ListMembersResponse, error) {
	ms, err := s.people.ListMembers(ctx, principal.AgencyID(ctx), req.Limit, req.Offset)
	if err != nil {
		return nil, err
	}
	out := &crmv1.ListMembersResponse{Members: make([]*crmv1.Member, len(ms))}
	for i, m := range ms {
		out.Members[i] = memberPB(m)
	}
	return out, nil
}

// CreateMember implements crmv1.PeopleServiceServer.
func (s *peopleServer) CreateMember(ctx context.Context, req *crmv1.PeopleServiceCreateMemberRequest) (*crmv1.PeopleServiceCreateMemberResponse, error) {
	m, inv, err := s.people.CreateMember(ctx, app.NewMember{AgencyID: principal.AgencyID(ctx), Name: req.Name, Email: req.Email,
		Role: req.Role, SiteIDs: req.SiteIds, ClientID: req.ClientId})
	if err != nil {
		return nil, err
	}
	return &crmv1.PeopleServiceCreateMemberResponse{Member: memberPB(m), Invitation: invitationPB(inv)}, nil
}

// UpdateMember implements crmv1.PeopleServiceServer.
func (s *peopleServer) UpdateMember(ctx context.Context, req *crmv1.UpdateMemberRequest) (*crmv1.UpdateMemberResponse, error) {
	m, inv, err := s.people.UpdateMember(ctx, principal.AgencyID(ctx), req.MemberId, app.MemberChanges{Name: req.Name, Role: req.Role,
		SiteIDs: req.SiteIds, ClearSiteIDs: req.ClearSiteIds, ClientID: req.ClientId})
	if err != nil {
		return nil, err
	}
	return &crmv1.UpdateMemberResponse{Member: memberPB(m), Invitation: invitationPB(inv)}, nil
}

// DeleteMember implements crmv1.PeopleServiceServer.
func (s *peopleServer) DeleteMember(ctx context.Context, req *crmv1.DeleteMemberRequest) (*crmv1.DeleteMemberResponse, error) {
	m, err := s.people.DeleteMember(ctx, principal.AgencyID(ctx), req.MemberId)
	if err != nil {
		return nil, err
	}
	return &crmv1.DeleteMemberResponse{Member: memberPB(m)}, nil
}

// CreateInvitation implements crmv1.PeopleServiceServer.
func (s *peopleServer) CreateInvitation(ctx context.Context, req *crmv1.CreateInvitationRequest) (*crmv1.CreateInvitationResponse, error) {
	m, inv, err := s.people.CreateInvitation(ctx, principal.AgencyID(ctx), req.MemberId)
	if err != nil {
		return nil, err
	}
	return &crmv1.CreateInvitationResponse{Member: memberPB(m), Invitation: invitationPB(inv)}, nil
}

// EndMemberSessions implements crmv1.PeopleServiceServer.
func (s *peopleServer) EndMemberSessions(ctx context.Context, req *crmv1.EndMemberSessionsRequest) (*crmv1.EndMemberSessionsResponse, error) {
	n, err := s.people.EndMemberSessions(ctx, principal.AgencyID(ctx), req.MemberId)
	if err != nil {
		return nil, err
	}
	return &crmv1.EndMemberSessionsResponse{Ended: int32(min(n, math.MaxInt32))}, nil //nolint:gosec // bounded on the line
}

// ListAgencyKeys implements crmv1.PeopleServiceServer.
func (s *peopleServer) ListAgencyKeys(ctx context.Context, req *crmv1.ListAgencyKeysRequest) (*crmv1.ListAgencyKeysResponse, error) {
	ks, err := s.people.ListAgencyKeys(ctx, principal.AgencyID(ctx), req.SiteId, req.Limit, req.Offset)
	if err != nil {
		return nil, err
	}
	out := &crmv1.ListAgencyKeysResponse{Keys: make([]*crmv1.APIKey, len(ks))}
	for i, k := range ks {
		out.Keys[i] = keyPB(k)
	}
	return out, nil
}

// CreateAgencyKey implements crmv1.PeopleServiceServer.
func (s *peopleServer) CreateAgencyKey(ctx context.Context, req *crmv1.CreateAgencyKeyRequest) (*crmv1.CreateAgencyKeyResponse, error) {
	exp, err := optionalTime("expires_at", req.ExpiresAt)
	if err != nil {
		return nil, err
	}
	p, _ := principal.FromContext(ctx)
	k, secret, err := s.people.CreateAgencyKey(ctx, p.AgencyID, p.MemberID, app.NewKey{
		Name: req.Name, Scopes: req.Scopes, SiteID: req.SiteId, ExpiresAt: exp, PublishedOnly: req.PublishedOnly,
	})
	if err != nil {
		return nil, err
	}
	pb := keyPB(k)
	pb.Secret = &secret
	return &crmv1.CreateAgencyKeyResponse{Key: pb}, nil
}

// RevokeAgencyKey implements crmv1.PeopleServiceServer.
func (s *peopleServer) RevokeAgencyKey(ctx context.Context, req *crmv1.RevokeAgencyKeyRequest) (*crmv1.RevokeAgencyKeyResponse, error) {
	k, err := s.people.RevokeAgencyKey(ctx, principal.AgencyID(ctx), req.KeyId)
	if err != nil {
		return nil, err
	}
	return &crmv1.RevokeAgencyKeyResponse{Key: keyPB(k)}, nil
}

// sessionServer implements crmv1.SessionServiceServer and the internal
// crmv1.SessionAuthServiceServer.
type sessionServer struct {
	crmv1.UnimplementedSessionServiceServer
	crmv1.UnimplementedSessionAuthServiceServer
	*Server
}

var (
	_ crmv1.SessionServiceServer     = (*sessionServer)(nil)
	_ crmv1.SessionAuthServiceServer = (*sessionServer)(nil)
)

// The response metadata that carries a new session's secret to the
// gateway, which turns it into the session cookie: the secret never
// appears in a JSON body.
const (
	MDSession        = "atrium-session"
	MDSessionExpires = "atrium-session-expires"
)

func origin(ctx context.Context) app.Origin {
	addr, ua := audit.Origin(ctx)
	return app.Origin{ClientAddress: addr, UserAgent: ua}
}

// handOver sends a new session's secret in the response header.
func handOver(ctx context.Context, in app.SignedIn) error {
	return grpc.SetHeader(ctx, metadata.Pairs(MDSession, in.Secret, MDSessionExpires, in.Session.ExpiresAt.UTC().Format(time.RFC3339)))
}

func userPB(u app.User) *crmv1.User {
	return &crmv1.User{Id: u.ID, Email: u.Email, Name: u.Name, CreatedAt: ts(u.CreatedAt)}
}

func sessionPB(v app.Session) *crmv1.Session {
	return &crmv1.Session{Id: v.ID, UserId: v.UserID, CreatedAt: ts(v.CreatedAt), ExpiresAt: ts(v.ExpiresAt),
		ClientAddress: v.ClientAddress, UserAgent: v.UserAgent}
}

func membershipsPB(ms []app.Membership) []*crmv1.Membership {
	out := make([]*crmv1.Membership, len(ms))
	for i, m := range ms {
		sites := m.Member.SiteIDs
		if sites == nil {
			sites = []string{}
		}
		out[i] = &crmv1.Membership{MemberId: m.Member.ID, AgencyId: m.Member.AgencyID, AgencyName: m.AgencyName, Role: string(m.Member.Role),
			SiteIds: sites, ClientId: stringOrNull(m.Member.ClientID)}
	}
	return out
}

// CreateSession implements crmv1.SessionServiceServer.
func (s *sessionServer) CreateSession(ctx context.Context, req *crmv1.CreateSessionRequest) (*crmv1.CreateSessionResponse, error) {
	in, err := s.sessions.CreateSession(ctx, req.Email, req.Password, origin(ctx))
	if err != nil {
		return nil, err
	}
	if err := handOver(ctx, in); err != nil {
		return nil, err
	}
	return &crmv1.CreateSessionResponse{User: userPB(in.User), Memberships: membershipsPB(in.Memberships), CsrfToken: in.Session.CSRFToken,
		Session: sessionPB(in.Session)}, nil
}

// GetCurrentSession implements crmv1.SessionServiceServer.
func (s *sessionServer) GetCurrentSession(ctx context.Context, _ *crmv1.GetCurrentSessionRequest) (*crmv1.GetCurrentSessionResponse, error) {
	in, err := s.sessions.Current(ctx)
	if err != nil {
		return nil, err
	}
	return &crmv1.GetCurrentSessionResponse{User: userPB(in.User), Memberships: membershipsPB(in.Memberships), CsrfToken: in.Session.CSRFToken,
		Session: sessionPB(in.Session)}, nil
}

// DeleteCurrentSession implements crmv1.SessionServiceServer.
func (s *sessionServer) DeleteCurrentSession(ctx context.Context, _ *crmv1.DeleteCurrentSessionRequest) (*crmv1.DeleteCurrentSessionResponse, error) {
	if err := s.sessions.DeleteCurrent(ctx); err != nil {
		return nil, err
	}
	return &crmv1.DeleteCurrentSessionResponse{}, nil
}

// AcceptInvitation implements crmv1.SessionServiceServer.
func (s *sessionServer) AcceptInvitation(ctx context.Context, req *crmv1.AcceptInvitationRequest) (*crmv1.AcceptInvitationResponse, error) {
	in, err := s.sessions.AcceptInvitation(ctx, req.Token, req.Password, req.Name, origin(ctx))
	if err != nil {
		return nil, err
	}
	if err := handOver(ctx, in); err != nil {
		return nil, err
	}
	return &crmv1.AcceptInvitationResponse{User: userPB(in.User), Memberships: membershipsPB(in.Memberships), CsrfToken: in.Session.CSRFToken,
		Session: sessionPB(in.Session)}, nil
}

// RequestPasswordReset implements crmv1.SessionServiceServer.
func (s *sessionServer) RequestPasswordReset(ctx context.Context, req *crmv1.RequestPasswordResetRequest) (*crmv1.RequestPasswordResetResponse, error) {
	if err := s.sessions.RequestPasswordReset(ctx, req.Email); err != nil {
		return nil, err
	}
	return &crmv1.RequestPasswordResetResponse{}, nil
}

// CompletePasswordReset implements crmv1.SessionServiceServer.
func (s *sessionServer) CompletePasswordReset(ctx context.Context, req *crmv1.CompletePasswordResetRequest) (*crmv1.CompletePasswordResetResponse, error) {
	if err := s.sessions.CompletePasswordReset(ctx, req.Token, req.Password); err != nil {
		return nil, err
	}
	return &crmv1.CompletePasswordResetResponse{}, nil
}

// VerifySession implements crmv1.SessionAuthServiceServer.
func (s *sessionServer) VerifySession(ctx context.Context, req *crmv1.VerifySessionRequest) (*crmv1.VerifySessionResponse, error) {
	in, err := s.sessions.Verify(ctx, req.SecretSha256)
	if err != nil {
		return nil, err
	}
	csrf := sha256.Sum256([]byte(in.Session.CSRFToken))
	return &crmv1.VerifySessionResponse{Session: sessionPB(in.Session), User: userPB(in.User), Memberships: membershipsPB(in.Memberships),
		CsrfSha256: csrf[:], CsrfToken: in.Session.CSRFToken}, nil
}

// CreateVerifiedSession implements crmv1.SessionAuthServiceServer: the
// gateway's call once a single sign-on provider verified the email. The
// secret goes back as CreateSession's does.
func (s *sessionServer) CreateVerifiedSession(ctx context.Context, req *crmv1.CreateVerifiedSessionRequest) (*crmv1.CreateVerifiedSessionResponse, error) {
	in, err := s.sessions.CreateVerifiedSession(ctx, app.VerifiedIdentity{Email: req.Email, Name: req.Name, Issuer: req.Issuer, Subject: req.Subject}, origin(ctx))
	if err != nil {
		return nil, err
	}
	if err := handOver(ctx, in); err != nil {
		return nil, err
	}
	return &crmv1.CreateVerifiedSessionResponse{User: userPB(in.User), Memberships: membershipsPB(in.Memberships), CsrfToken: in.Session.CSRFToken,
		Session: sessionPB(in.Session)}, nil
}
