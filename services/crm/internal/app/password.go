package app

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/subtle"
	_ "embed"
	"encoding/base64"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"unicode/utf8"

	"golang.org/x/crypto/argon2"

	"github.com/atrium-hq/atrium/platform/apperr"
)

// Password rule: long enough to resist guessing without composition rules
// (NIST SP 800-63B), bounded so that hashing a request's password costs a
// known amount.
const (
	MinPasswordLength = 12
	MaxPasswordLength = 1024
)

// The argon2id parameters of new hashes: OWASP's Password Storage Cheat
// Sheet's first configuration (m=19 MiB, t=2, p=1), about 20 to 40 ms on
// one core of this project's machines. Every hash records its parameters
// (a PHC string), so they can be raised later: an older hash is verified
// with the parameters it was made with.
const (
	argonMemoryKiB = 19 * 1024
	argonTime      = 2
	argonThreads   = 1
	argonKeyLen    = 32
	argonSaltLen   = 16
)

// commonPasswordsText is the passwords of 12 characters or more from
// @zxcvbn-ts/language-common 4.1.3 (src/passwords.json, MIT licence,
// copyright 2012-2016 Dan Wheeler and Dropbox, Inc., 2021 @zxcvbn-ts),
// one per line: the ones a length rule alone would let through.
//
//go:embed common_passwords.txt
var commonPasswordsText string

var commonPasswords = sync.OnceValue(func() map[string]bool {
	m := map[string]bool{}
	sc := bufio.NewScanner(strings.NewReader(commonPasswordsText))
	for sc.Scan() {
		if w := strings.TrimSpace(sc.Text()); w != "" {
			m[strings.ToLower(w)] = true
		}
	}
	return m
})

// CheckNewPassword applies the password rule to a password being set.
func CheckNewPassword(field, pw string) error {
	n := utf8.RuneCountInString(pw)
	if n < MinPasswordLength || n > MaxPasswordLength {
		return apperr.Invalid("%s must be %d to %d characters; got %d", field, MinPasswordLength, MaxPasswordLength, n)
	}
	if commonPasswords()[strings.ToLower(pw)] {
		return apperr.Invalid("%s is one of the most common passwords, which are tried first by anyone guessing: choose another", field)
	}
	return nil
}

// Hasher hashes and verifies passwords with argon2id. At most a set
// number of hashes run at once (by default DefaultHashConcurrency, half the
// cores): each takes a core and 19 MiB, so a flood of sign-ins waits its
// turn rather than taking every core from the rest of the API.
type Hasher struct {
	sem   chan struct{}
	dummy func() string
}

// DefaultHashConcurrency is half the cores, at least one.
func DefaultHashConcurrency() int { return max(1, runtime.GOMAXPROCS(0)/2) }

// NewHasher returns a hasher running at most concurrency hashes at once
// (0: DefaultHashConcurrency).
func NewHasher(concurrency int) *Hasher {
	if concurrency <= 0 {
		concurrency = DefaultHashConcurrency()
	}
	h := &Hasher{sem: make(chan struct{}, concurrency)}
	h.dummy = sync.OnceValue(func() string {
		s, err := h.hash(rand.Text())
		if err != nil {
			panic(err)
		}
		return s
	})
	return h
}

func (h *Hasher) acquire(ctx context.Context) error {
	select {
	case h.sem <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (h *Hasher) release() { <-h.sem }

// Hash returns the PHC string of pw's hash with a new salt.
func (h *Hasher) Hash(ctx context.Context, pw string) (string, error) {
	if err := h.acquire(ctx); err != nil {
		return "", err
	}
	defer h.release()
	return h.hash(pw)
}

func (h *Hasher) hash(pw string) (string, error) {
	salt := make([]byte, argonSaltLen)
	if _, err := rand.Read(salt); err != nil {
		return "", err
	}
	key := argon2.IDKey([]byte(pw), salt, argonTime, argonMemoryKiB, argonThreads, argonKeyLen)
	b64 := base64.RawStdEncoding
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, argonMemoryKiB, argonTime, argonThreads,
		b64.EncodeToString(salt), b64.EncodeToString(key)), nil
}

// Verify reports whether pw matches encoded. An empty encoded (no such
// user) is verified against a dummy hash, so that the answer takes as long
// as for a user with a wrong password, and is false.
func (h *Hasher) Verify(ctx context.Context, encoded, pw string) (bool, error) {
	known := encoded != ""
	if !known {
		encoded = h.dummy()
	}
	p, err := parsePHC(encoded)
	if err != nil {
		return false, err
	}
	if err := h.acquire(ctx); err != nil {
		return false, err
	}
	key := argon2.IDKey([]byte(pw), p.salt, p.time, p.memory, p.threads, uint32(len(p.key))) //nolint:gosec // parsePHC bounds the key to 1024 bytes
	h.release()
	return subtle.ConstantTimeCompare(key, p.key) == 1 && known, nil
}

type phc struct {
	memory, time uint32
	threads      uint8
	salt, key    []byte
}

var errBadHash = errors.New("password hash: not an argon2id PHC string")

func parsePHC(s string) (phc, error) {
	parts := strings.Split(s, "$")
	// "", "argon2id", "v=19", "m=..,t=..,p=..", salt, key
	if len(parts) != 6 || parts[1] != "argon2id" {
		return phc{}, errBadHash
	}
	var v int
	if _, err := fmt.Sscanf(parts[2], "v=%d", &v); err != nil || v != argon2.Version {
		return phc{}, errBadHash
	}
	var p phc
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &p.memory, &p.time, &p.threads); err != nil || p.threads == 0 || p.time == 0 {
		return phc{}, errBadHash
	}
	var err error
	if p.salt, err = base64.RawStdEncoding.DecodeString(parts[4]); err != nil {
		return phc{}, errBadHash
	}
	if p.key, err = base64.RawStdEncoding.DecodeString(parts[5]); err != nil || len(p.key) == 0 || len(p.key) > 1024 {
		return phc{}, errBadHash
	}
	return p, nil
}
