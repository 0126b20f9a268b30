// Package apikey is the one definition of an Atrium API key's format: the
// CRM issues keys, the gateway checks presented keys. The key events (the
// CRM publishes them, the gateway evicts revoked keys from its cache) are
// platform/events' KeyCreated and KeyRevoked.
//
// A secret is "atr_" followed by 43 characters: 256 random bits in unpadded
// base64url. Only its SHA-256 is stored; with that much entropy an unsalted
// digest is enough, and it lets the store find a key by its digest.
package apikey

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"strings"
)

// Prefix starts every secret, so that leaked keys are easy to recognise
// (and to find with secret scanners).
const Prefix = "atr_"

// secretBytes is the entropy of a secret.
const secretBytes = 32

// bodyLen is the length of a secret after the prefix.
var bodyLen = base64.RawURLEncoding.EncodedLen(secretBytes)

// Len is the length of a whole secret.
var Len = len(Prefix) + bodyLen

// displayLen is how much of a secret is kept in clear to recognise the key
// in lists: the prefix and 8 characters, 48 of the 256 bits.
const displayLen = len(Prefix) + 8

// Generate returns a new secret.
func Generate() (string, error) {
	b := make([]byte, secretBytes)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return Prefix + base64.RawURLEncoding.EncodeToString(b), nil
}

// WellFormed reports whether secret has the shape of an Atrium key.
func WellFormed(secret string) bool {
	body, ok := strings.CutPrefix(secret, Prefix)
	if !ok || len(body) != bodyLen {
		return false
	}
	for i := 0; i < len(body); i++ {
		c := body[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// FormatHint describes the format for error messages.
func FormatHint() string {
	return `Atrium keys are "` + Prefix + `" followed by 43 characters`
}

// Digest is what is stored of a secret and what a key is looked up by.
func Digest(secret string) [sha256.Size]byte { return sha256.Sum256([]byte(secret)) }

// DisplayPrefix is the part of a secret shown in key lists.
func DisplayPrefix(secret string) string { return secret[:min(displayLen, len(secret))] }
