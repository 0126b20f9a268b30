package principal

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"google.golang.org/grpc/metadata"
)

// MetadataKey is the gRPC metadata key that carries a signed principal.
const MetadataKey = "x-atrium-principal"

// MinSecretLen is the shortest shared secret a Signer accepts.
const MinSecretLen = 32

// tokenTTL bounds how long a captured token can be replayed. Tokens are
// minted per call, so this only needs to cover clock skew and slow calls.
const tokenTTL = 2 * time.Minute

// Signer signs and verifies principals with a secret shared by all Atrium
// processes of one deployment.
type Signer struct {
	secret []byte
	now    func() time.Time
}

// NewSigner returns a Signer for secret, which must be at least MinSecretLen
// bytes.
func NewSigner(secret []byte) (*Signer, error) {
	if len(secret) < MinSecretLen {
		return nil, fmt.Errorf("internal secret must be at least %d bytes, got %d", MinSecretLen, len(secret))
	}
	return &Signer{secret: bytes.Clone(secret), now: time.Now}, nil
}

type claims struct {
	Principal
	Exp int64 `json:"exp"`
}

// Sign returns a token for p, valid for a short time.
func (s *Signer) Sign(p Principal) string {
	body, err := json.Marshal(claims{Principal: p, Exp: s.now().Add(tokenTTL).Unix()})
	if err != nil {
		// A Principal always marshals; reaching this is a programming error.
		panic(fmt.Sprintf("principal: marshal: %v", err))
	}
	payload := base64.RawURLEncoding.EncodeToString(body)
	return payload + "." + base64.RawURLEncoding.EncodeToString(s.mac(payload))
}

func (s *Signer) mac(payload string) []byte {
	m := hmac.New(sha256.New, s.secret)
	m.Write([]byte(payload))
	return m.Sum(nil)
}

var (
	errMalformed = errors.New("malformed principal token")
	errSignature = errors.New("principal token signature does not verify")
	errExpired   = errors.New("principal token expired")
)

// Verify checks token's signature and expiry and returns the principal.
func (s *Signer) Verify(token string) (Principal, error) {
	payload, sig, ok := strings.Cut(token, ".")
	if !ok {
		return Principal{}, errMalformed
	}
	got, err := base64.RawURLEncoding.DecodeString(sig)
	if err != nil {
		return Principal{}, errMalformed
	}
	if !hmac.Equal(got, s.mac(payload)) {
		return Principal{}, errSignature
	}
	body, err := base64.RawURLEncoding.DecodeString(payload)
	if err != nil {
		return Principal{}, errMalformed
	}
	var c claims
	if err := json.Unmarshal(body, &c); err != nil {
		return Principal{}, errMalformed
	}
	if s.now().Unix() > c.Exp {
		return Principal{}, errExpired
	}
	return c.Principal, nil
}

// OutgoingContext returns ctx with p signed into the outgoing gRPC metadata,
// replacing any principal already there.
func (s *Signer) OutgoingContext(ctx context.Context, p Principal) context.Context {
	md, _ := metadata.FromOutgoingContext(ctx)
	md = md.Copy()
	md.Set(MetadataKey, s.Sign(p))
	return metadata.NewOutgoingContext(ctx, md)
}

// Credentials returns per-RPC credentials that sign p into every call made
// on a connection, for service-to-service clients.
func (s *Signer) Credentials(p Principal) Credentials {
	return Credentials{signer: s, principal: p}
}

// Credentials implements grpc/credentials.PerRPCCredentials.
type Credentials struct {
	signer    *Signer
	principal Principal
}

// GetRequestMetadata mints a fresh token per call.
func (c Credentials) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{MetadataKey: c.signer.Sign(c.principal)}, nil
}

// RequireTransportSecurity is false: Atrium's processes talk over loopback or
// a cluster network; the HMAC, not the transport, authenticates the caller.
func (Credentials) RequireTransportSecurity() bool { return false }
