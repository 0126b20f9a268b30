package principal

import (
	"encoding/base64"
	"errors"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzVerify: any token a caller could put in the metadata is refused with
// one of the verifier's own errors, unless it carries this deployment's
// signature; and a payload that is signed but malformed is refused too.
func FuzzVerify(f *testing.F) {
	s, err := NewSigner([]byte(strings.Repeat("k", 32)))
	if err != nil {
		f.Fatal(err)
	}
	good := s.Sign(Principal{Kind: KindKey, Subject: "key-1", Scopes: []Scope{ScopeRead}, AgencyID: "a1"})
	payload, _, _ := strings.Cut(good, ".")
	for _, tok := range []string{good, "", ".", "a.b", payload + ".", "." + payload, good + "x", strings.ToUpper(good), "\xff.\xff"} {
		f.Add(tok, false)
	}
	for _, p := range []string{`{}`, `{"kind":"key","exp":1}`, `null`, `[`, `{"exp":"soon"}`, `{"kind":"admin","sub":"admin","exp":99999999999}`} {
		f.Add(base64.RawURLEncoding.EncodeToString([]byte(p)), true)
	}
	known := []error{errMalformed, errSignature, errExpired}
	f.Fuzz(func(t *testing.T, token string, sign bool) {
		if sign {
			// Sign what the fuzzer chose as payload, to reach the decoding behind the signature check.
			token = token + "." + base64.RawURLEncoding.EncodeToString(s.mac(token))
		}
		p, err := s.Verify(token)
		if err != nil {
			if !slices.ContainsFunc(known, func(k error) bool { return errors.Is(err, k) }) {
				t.Fatalf("Verify(%q) = %v, not one of the verifier's errors", token, err)
			}
			return
		}
		if payload, sig, _ := strings.Cut(token, "."); !sign && sig != base64.RawURLEncoding.EncodeToString(s.mac(payload)) {
			t.Fatalf("Verify accepted a token without this deployment's signature: %q as %+v", token, p)
		}
		again, err := s.Verify(token) // now from the cache: the same answer
		if err != nil || !samePrincipal(again, p) {
			t.Fatalf("cached Verify(%q) = %+v, %v; first %+v", token, again, err, p)
		}
	})
}

// FuzzSignVerify: every principal survives signing and verification as it
// was.
func FuzzSignVerify(f *testing.F) {
	s, err := NewSigner([]byte(strings.Repeat("k", 32)))
	if err != nil {
		f.Fatal(err)
	}
	f.Add("key", "key-1", "read,write", "agency-1", "")
	f.Add("service", "collections", "", "", "site-9")
	f.Add("admin", "admin", "read", "", "")
	f.Add("key", "\"quoted\\", "a,,b", "\u2028", "<>&")
	f.Fuzz(func(t *testing.T, kind, subject, scopes, agency, site string) {
		for _, v := range []string{kind, subject, scopes, agency, site} {
			if !utf8.ValidString(v) {
				return // JSON carries only UTF-8; principals are built from validated ids
			}
		}
		p := Principal{Kind: Kind(kind), Subject: subject, AgencyID: agency, SiteID: site}
		if scopes != "" {
			p.Scopes = ScopesFrom(strings.Split(scopes, ","))
		}
		got, err := s.Verify(s.Sign(p))
		if err != nil || !samePrincipal(got, p) {
			t.Fatalf("Sign/Verify of %+v = %+v, %v", p, got, err)
		}
	})
}

func samePrincipal(a, b Principal) bool {
	return a.Kind == b.Kind && a.Subject == b.Subject && a.AgencyID == b.AgencyID && a.SiteID == b.SiteID &&
		slices.Equal(a.Scopes, b.Scopes)
}
