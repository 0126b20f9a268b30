package principal

import (
	"context"
	"errors"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/atrium-hq/atrium/platform/apperr"
)

// Infrastructure reports whether fullMethod belongs to a service every gRPC
// server offers without a principal: health checks (probes call them) and
// reflection (it describes the API, not anyone's data).
func Infrastructure(fullMethod string) bool {
	return strings.HasPrefix(fullMethod, "/grpc.health.v1.Health/") ||
		strings.HasPrefix(fullMethod, "/grpc.reflection.")
}

const healthWatch = "/grpc.health.v1.Health/Watch"

// UnaryServerInterceptor verifies the signed principal of every call but
// infrastructure calls, checks it against the access rule the method
// declares (Authorize), and puts it in the handler's context. A method
// without an access rule is refused: the rule is not optional.
//
// Infrastructure calls need no principal, but one that is sent must
// verify: a caller checks with one health call that the service is up and
// that both were given the same secret (readiness, see platform/rpc).
func (s *Signer) UnaryServerInterceptor() grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		if Infrastructure(info.FullMethod) {
			if err := s.checkSent(ctx); err != nil {
				return nil, err
			}
			return handler(ctx, req)
		}
		ctx, err := s.admit(ctx, info.FullMethod)
		if err != nil {
			return nil, err
		}
		if p, _ := FromContext(ctx); p.ClientID != "" {
			a, _ := AccessOf(info.FullMethod) // admit found it
			if err := AuthorizeRequest(p, a, req); err != nil {
				return nil, err
			}
		}
		return handler(ctx, req)
	}
}

// StreamServerInterceptor is UnaryServerInterceptor for streaming calls
// (the bulk loads): the same identity and the same access rule.
func (s *Signer) StreamServerInterceptor() grpc.StreamServerInterceptor {
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
		if Infrastructure(info.FullMethod) {
			// The health Watch is gRPC's client-side health checking, which
			// picks replicas (platform/rpc.Dial). It is not the place to
			// refuse a principal signed with another secret: the replica
			// would look down instead, and readiness (a Check, verified
			// below) could no longer say that the secrets differ.
			if info.FullMethod == healthWatch {
				return handler(srv, ss)
			}
			if err := s.checkSent(ss.Context()); err != nil {
				return err
			}
			return handler(srv, ss)
		}
		ctx, err := s.admit(ss.Context(), info.FullMethod)
		if err != nil {
			return err
		}
		return handler(srv, &contextStream{ServerStream: ss, ctx: ctx})
	}
}

type contextStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (c *contextStream) Context() context.Context { return c.ctx }

// admit verifies the call's principal against the method's access rule
// and returns the context carrying it.
func (s *Signer) admit(ctx context.Context, fullMethod string) (context.Context, error) {
	tokens := metadata.ValueFromIncomingContext(ctx, MetadataKey)
	if len(tokens) != 1 {
		return nil, apperr.Unauthenticated("missing caller identity: send a signed principal in the %s metadata (see docs/grpc.md), or call through the gateway", MetadataKey)
	}
	p, err := s.Verify(tokens[0])
	if err != nil {
		return nil, invalidIdentity(err)
	}
	a, ok := AccessOf(fullMethod)
	if !ok {
		return nil, apperr.PermissionDenied("%s declares no access rule, so nobody may call it", fullMethod)
	}
	if err := Authorize(p, a); err != nil {
		return nil, err
	}
	return NewContext(ctx, p), nil
}

// checkSent verifies the principal of an infrastructure call if it carries
// one. The error is a status already: the error-mapping interceptor lets
// infrastructure calls through untouched.
func (s *Signer) checkSent(ctx context.Context) error {
	tokens := metadata.ValueFromIncomingContext(ctx, MetadataKey)
	if len(tokens) == 0 {
		return nil
	}
	if len(tokens) > 1 {
		return apperr.ToStatus(apperr.Unauthenticated("more than one caller identity in the %s metadata", MetadataKey)).Err()
	}
	if _, err := s.Verify(tokens[0]); err != nil {
		return apperr.ToStatus(invalidIdentity(err)).Err()
	}
	return nil
}

// invalidIdentity is the error for a principal that does not verify. A
// signature made with another secret carries ReasonPrincipalSignature, so
// that callers can tell a misconfigured deployment from a bad token.
func invalidIdentity(err error) error {
	e := &apperr.Error{Kind: apperr.KindUnauthenticated, Message: "invalid caller identity: " + err.Error()}
	if errors.Is(err, errSignature) {
		e.Reason = apperr.ReasonPrincipalSignature
		e.Message += " (the caller and this service were given different --internal-secret values?)"
	}
	return e
}
