package auth

import (
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/atrium-hq/atrium/platform/apikey"
	"github.com/atrium-hq/atrium/platform/principal"
)

// MinAdminTokenLen is the shortest admin token accepted.
const MinAdminTokenLen = 16

// AdminTokenPrefix starts the admin tokens `atrium serve` generates, and is
// recommended for chosen ones: the public listener recognises a token with
// it and says where it belongs rather than calling it a malformed key.
const AdminTokenPrefix = "adm_"

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
		if strings.HasPrefix(cred, apikey.Prefix) {
			return principal.Principal{}, status.Error(codes.Unauthenticated,
				"invalid admin token: this looks like an API key (it starts with "+apikey.Prefix+"), which belongs on the public API; the admin API takes the admin token (--admin-token)")
		}
		return principal.Principal{}, status.Error(codes.Unauthenticated, "invalid admin token")
	}
	return principal.Principal{Kind: principal.KindAdmin, Subject: "admin"}, nil
}
