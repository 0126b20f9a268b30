package signing_test

import (
	"encoding/base64"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/atrium-hq/atrium/services/webhooks/internal/signing"
)

// delivery is a signed delivery's headers and body, as a receiver gets them.
func delivery(t *testing.T, id string, at time.Time, body string, secrets ...signing.Secret) http.Header {
	t.Helper()
	h := http.Header{}
	signing.SetHeaders(h, id, at, []byte(body), secrets...)
	return h
}

// verifier is the reference library's verifier for s, as a receiver sets it
// up from the secret it was shown.
func verifier(t *testing.T, s signing.Secret) *standardwebhooks.Webhook {
	t.Helper()
	wh, err := standardwebhooks.NewWebhook(s.String())
	if err != nil {
		t.Fatalf("the reference library refuses the secret %q: %v", s, err)
	}
	return wh
}

func newSecret(t *testing.T) signing.Secret {
	t.Helper()
	s, err := signing.NewSecret()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestReferenceLibraryVerifiesDeliveries: a receiver using the Standard
// Webhooks reference library accepts what we sign, and refuses it when the
// body, the id or the timestamp was changed or the secret is another one.
func TestReferenceLibraryVerifiesDeliveries(t *testing.T) {
	s := newSecret(t)
	body := `{"type":"item.published","timestamp":"2026-11-25T10:00:00Z","data":{"id":"0192f7c4-1a2b-7c3d-8e4f-5a6b7c8d9e0f"}}`
	now := time.Now()
	h := delivery(t, "evt_1", now, body, s)
	if err := verifier(t, s).Verify([]byte(body), h); err != nil {
		t.Fatalf("the reference library refuses our delivery: %v (headers %v)", err, h)
	}
	tampered := map[string]func() ([]byte, http.Header){
		"body": func() ([]byte, http.Header) { return []byte(strings.Replace(body, "published", "deleted", 1)), h },
		"id": func() ([]byte, http.Header) {
			h2 := h.Clone()
			h2.Set("webhook-id", "evt_2")
			return []byte(body), h2
		},
		"timestamp": func() ([]byte, http.Header) {
			h2 := h.Clone()
			h2.Set("webhook-timestamp", "1")
			return []byte(body), h2
		},
	}
	for name, change := range tampered {
		b, h2 := change()
		if err := verifier(t, s).Verify(b, h2); err == nil {
			t.Errorf("a delivery with its %s changed verified", name)
		}
	}
	if err := verifier(t, newSecret(t)).Verify([]byte(body), h); err == nil {
		t.Error("a delivery verified with another endpoint's secret")
	}
}

// TestRotationCarriesBothSignatures: while the previous secret is valid a
// delivery carries both signatures, and a receiver holding either verifies
// it.
func TestRotationCarriesBothSignatures(t *testing.T) {
	current, previous := newSecret(t), newSecret(t)
	body := `{"type":"webhook.test","timestamp":"2026-11-25T10:00:00Z","data":{}}`
	h := delivery(t, "evt_rot", time.Now(), body, current, previous)
	sigs := strings.Fields(h.Get("webhook-signature"))
	if len(sigs) != 2 || !strings.HasPrefix(sigs[0], "v1,") || !strings.HasPrefix(sigs[1], "v1,") {
		t.Fatalf("webhook-signature = %q, want two space-separated v1 signatures", h.Get("webhook-signature"))
	}
	for name, s := range map[string]signing.Secret{"current": current, "previous": previous} {
		if err := verifier(t, s).Verify([]byte(body), h); err != nil {
			t.Errorf("a receiver with the %s secret refuses the delivery: %v", name, err)
		}
	}
}

// TestSignatureIsTheSpecs: the signature is the spec's HMAC over
// "{id}.{timestamp}.{body}", byte for byte the reference library's.
func TestSignatureIsTheSpecs(t *testing.T) {
	s := newSecret(t)
	at := time.Unix(1_764_064_800, 0)
	body := []byte(`{"type":"x","timestamp":"2026-11-25T10:00:00Z","data":{"é":"\u0000"}}`)
	want, err := verifier(t, s).Sign("msg_2KWPBgLlAfxdpx2AI54pPJ85f4W", at, body)
	if err != nil {
		t.Fatal(err)
	}
	if got := signing.Signature("msg_2KWPBgLlAfxdpx2AI54pPJ85f4W", at, body, s); got != want {
		t.Fatalf("Signature = %q, the reference library signs %q", got, want)
	}
	h := delivery(t, "msg_2KWPBgLlAfxdpx2AI54pPJ85f4W", at, string(body), s)
	if h.Get("webhook-timestamp") != "1764064800" || h.Get("webhook-id") != "msg_2KWPBgLlAfxdpx2AI54pPJ85f4W" {
		t.Fatalf("headers %v: want the id as given and the timestamp in Unix seconds", h)
	}
}

// TestSecrets: a new secret is whsec_ and the base64 of 32 random bytes,
// reads back as itself, and differs from the next; strings that are not
// secrets are refused with what a secret is.
func TestSecrets(t *testing.T) {
	a, b := newSecret(t), newSecret(t)
	if a.String() == b.String() {
		t.Fatal("two new secrets are the same")
	}
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(a.String(), "whsec_"))
	if !strings.HasPrefix(a.String(), "whsec_") || err != nil || len(key) != 32 {
		t.Fatalf("secret %q: want whsec_ and the base64 of 32 bytes", a)
	}
	back, err := signing.ParseSecret(a.String())
	if err != nil || back.String() != a.String() {
		t.Fatalf("ParseSecret(%q) = %q, %v; want it back", a, back, err)
	}
	short := "whsec_" + base64.StdEncoding.EncodeToString(make([]byte, 16))
	for _, bad := range []string{"", "whsec_", "sk_" + strings.TrimPrefix(a.String(), "whsec_"), "whsec_not base64!", short} {
		if _, err := signing.ParseSecret(bad); !errors.Is(err, signing.ErrBadSecret) {
			t.Errorf("ParseSecret(%q) = %v, want ErrBadSecret", bad, err)
		}
	}
	if !strings.Contains(signing.ErrBadSecret.Error(), "whsec_") {
		t.Errorf("ErrBadSecret = %q: it should say what a secret looks like", signing.ErrBadSecret)
	}
}
