package principal

import (
	"context"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/atrium-hq/atrium/platform/apperr"
)

// healthPrefix names the gRPC health service, which probes call without a
// principal.
const healthPrefix = "/grpc.health.v1.Health/"

// UnaryServerInterceptor verifies the signed principal of every call but
// health checks and puts it in the handler's context.
func (s *Signer) UnaryServerInterceptor() grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		if strings.HasPrefix(info.FullMethod, healthPrefix) {
			return handler(ctx, req)
		}
		md, _ := metadata.FromIncomingContext(ctx)
		tokens := md.Get(MetadataKey)
		if len(tokens) != 1 {
			return nil, apperr.Unauthenticated("missing caller identity: call Atrium services through the gateway")
		}
		p, err := s.Verify(tokens[0])
		if err != nil {
			return nil, apperr.Unauthenticated("invalid caller identity: %v", err)
		}
		return handler(NewContext(ctx, p), req)
	}
}

// RequireAdmin allows the operator and other Atrium components.
func RequireAdmin(ctx context.Context) error {
	p, ok := FromContext(ctx)
	if !ok {
		return apperr.Unauthenticated("missing caller identity")
	}
	if p.Kind != KindAdmin && p.Kind != KindService {
		return apperr.PermissionDenied("this operation is for administrators only")
	}
	return nil
}

// RequireService allows only other Atrium components.
func RequireService(ctx context.Context) error {
	p, ok := FromContext(ctx)
	if !ok {
		return apperr.Unauthenticated("missing caller identity")
	}
	if p.Kind != KindService {
		return apperr.PermissionDenied("this operation is internal to Atrium")
	}
	return nil
}

// RequireAgency returns the agency of an API key principal that carries
// scope, or the error to answer with.
func RequireAgency(ctx context.Context, scope Scope) (string, error) {
	p, err := requireKey(ctx, scope)
	if err != nil {
		return "", err
	}
	if p.AgencyID == "" {
		return "", apperr.PermissionDenied("this API key is not bound to an agency; this interface needs a key issued with an agency_id")
	}
	return p.AgencyID, nil
}

// RequireSite returns the site of an API key principal that carries scope,
// or the error to answer with.
func RequireSite(ctx context.Context, scope Scope) (string, error) {
	p, err := requireKey(ctx, scope)
	if err != nil {
		return "", err
	}
	if p.SiteID == "" {
		return "", apperr.PermissionDenied("this API key is not bound to a site; the collections interface needs a key issued with a site_id")
	}
	return p.SiteID, nil
}

func requireKey(ctx context.Context, scope Scope) (Principal, error) {
	p, ok := FromContext(ctx)
	if !ok {
		return Principal{}, apperr.Unauthenticated("missing caller identity")
	}
	if p.Kind != KindKey {
		return Principal{}, apperr.PermissionDenied("this operation needs an API key")
	}
	if !p.HasScope(scope) {
		return Principal{}, apperr.PermissionDenied("this API key lacks the %s scope", scope)
	}
	return p, nil
}
