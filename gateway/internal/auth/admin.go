package auth

import (
	"crypto/sha256"
	"crypto/subtle"
	"fmt"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/atrium-hq/atrium/platform/principal"
)

// MinAdminTokenLen is the shortest admin token accepted.
const MinAdminTokenLen = 16

// AdminToken checks the admin listener's bearer token.
type AdminToken struct{ digest [sha256.Size]byte }

// NewAdminToken returns a checker for token.
func NewAdminToken(token string) (*AdminToken, error) {
	if len(token) < MinAdminTokenLen {
		return nil, fmt.Errorf("admin token must be at least %d characters", MinAdminTokenLen)
	}
	return &AdminToken{digest: sha256.Sum256([]byte(token))}, nil
}

// Authenticate returns the admin principal for a valid Authorization header.
// Comparing digests keeps the comparison constant-time whatever the lengths.
func (a *AdminToken) Authenticate(header string) (principal.Principal, error) {
	cred, err := Bearer(header)
	if err != nil {
		return principal.Principal{}, status.Error(codes.Unauthenticated,
			`missing or malformed admin token: send the header "Authorization: Bearer <admin token>"`)
	}
	d := sha256.Sum256([]byte(cred))
	if subtle.ConstantTimeCompare(d[:], a.digest[:]) != 1 {
		return principal.Principal{}, status.Error(codes.Unauthenticated, "invalid admin token")
	}
	return principal.Principal{Kind: principal.KindAdmin, Subject: "admin"}, nil
}
