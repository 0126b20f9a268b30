package signing

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Prefix starts every secret, as the spec's libraries expect.
const Prefix = "whsec_"

// secretBytes is the length of a new secret's key: the spec asks for 24 to
// 64 bytes; 32 is HMAC-SHA256's block-sized comfort and what Svix issues.
const secretBytes = 32

// The spec's header names (lower case, as it writes them; net/http
// canonicalises them on the wire, and receivers match without case).
const (
	HeaderID        = "webhook-id"
	HeaderTimestamp = "webhook-timestamp"
	HeaderSignature = "webhook-signature"
)

// Secret is an endpoint's signing key.
type Secret struct{ key []byte }

// NewSecret returns a new random secret.
func NewSecret() (Secret, error) {
	key := make([]byte, secretBytes)
	if _, err := rand.Read(key); err != nil {
		return Secret{}, fmt.Errorf("generate a webhook secret: %w", err)
	}
	return Secret{key: key}, nil
}

// ErrBadSecret is returned by ParseSecret for a string that is not a
// secret.
var ErrBadSecret = errors.New("a webhook secret is whsec_ followed by the standard base64 of 24 to 64 bytes")

// ParseSecret reads a secret as String writes it (stored secrets).
func ParseSecret(s string) (Secret, error) {
	b64, ok := strings.CutPrefix(s, Prefix)
	if !ok {
		return Secret{}, ErrBadSecret
	}
	key, err := base64.StdEncoding.DecodeString(b64)
	if err != nil || len(key) < 24 || len(key) > 64 {
		return Secret{}, ErrBadSecret
	}
	return Secret{key: key}, nil
}

// String is the secret as shown to its owner: whsec_ and the base64 of the
// key.
func (s Secret) String() string { return Prefix + base64.StdEncoding.EncodeToString(s.key) }

// IsZero reports a secret that was never set.
func (s Secret) IsZero() bool { return len(s.key) == 0 }

// sign is the spec's signature of one message under s, unprefixed.
func (s Secret) sign(id string, at time.Time, body []byte) string {
	mac := hmac.New(sha256.New, s.key)
	ts := strconv.FormatInt(at.Unix(), 10)
	// Written piece by piece: the body can be large, and the signed
	// content need not be built as one string.
	mac.Write([]byte(id))
	mac.Write([]byte{'.'})
	mac.Write([]byte(ts))
	mac.Write([]byte{'.'})
	mac.Write(body)
	return base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

// Signature is the value of the webhook-signature header for the message
// (id, at, body) under each of secrets, in order, space-separated: during
// a rotation the new secret first, then the previous one.
func Signature(id string, at time.Time, body []byte, secrets ...Secret) string {
	var b strings.Builder
	for i, s := range secrets {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString("v1,")
		b.WriteString(s.sign(id, at, body))
	}
	return b.String()
}

// SetHeaders sets the three Standard Webhooks headers of a delivery of
// the message (id, at, body) on h. The id is the event's, the same on every
// attempt and replay (receivers deduplicate on it); at is this attempt's
// time.
func SetHeaders(h http.Header, id string, at time.Time, body []byte, secrets ...Secret) {
	h.Set(HeaderID, id)
	h.Set(HeaderTimestamp, strconv.FormatInt(at.Unix(), 10))
	h.Set(HeaderSignature, Signature(id, at, body, secrets...))
}
