package principal

import (
	"context"
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

// UnaryServerInterceptor verifies the signed principal of every call but
// infrastructure calls, checks it against the access rule the method
// declares (Authorize), and puts it in the handler's context. A method
// without an access rule is refused: the rule is not optional.
func (s *Signer) UnaryServerInterceptor() grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		if Infrastructure(info.FullMethod) {
			return handler(ctx, req)
		}
		tokens := metadata.ValueFromIncomingContext(ctx, MetadataKey)
		if len(tokens) != 1 {
			return nil, apperr.Unauthenticated("missing caller identity: send a signed principal in the %s metadata (see docs/grpc.md), or call through the gateway", MetadataKey)
		}
		p, err := s.Verify(tokens[0])
		if err != nil {
			return nil, apperr.Unauthenticated("invalid caller identity: %v", err)
		}
		a, ok := AccessOf(info.FullMethod)
		if !ok {
			return nil, apperr.PermissionDenied("%s declares no access rule, so nobody may call it", info.FullMethod)
		}
		if err := Authorize(p, a); err != nil {
			return nil, err
		}
		return handler(NewContext(ctx, p), req)
	}
}
