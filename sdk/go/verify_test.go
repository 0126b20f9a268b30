package atrium

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// The test vector of the Standard Webhooks specification.
const (
	vectorSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	vectorID     = "msg_p5jXN8AQM9LWM0D4loKWxJek"
	vectorTS     = "1614265330"
	vectorBody   = `{"test": 2432232314}`
	vectorSig    = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
)

func vectorHeader(sig string) http.Header {
	return http.Header{"Webhook-Id": {vectorID}, "Webhook-Timestamp": {vectorTS}, "Webhook-Signature": {sig}}
}

var vectorTime = time.Unix(1614265330, 0).Add(time.Minute)

// TestVerifyWebhook: the specification's own vector verifies, also as the
// second of two signatures (a rotation); a tampered body, another secret,
// an old timestamp or a missing header do not.
func TestVerifyWebhook(t *testing.T) {
	if _, err := verifyAt(vectorSecret, vectorHeader(vectorSig), []byte(vectorBody), vectorTime); err != nil {
		t.Fatalf("the specification's vector: %v", err)
	}
	if _, err := verifyAt(vectorSecret, vectorHeader("v1,bm90IGl0 "+vectorSig), []byte(vectorBody), vectorTime); err != nil {
		t.Fatalf("the vector as the second signature: %v", err)
	}
	for name, c := range map[string]struct {
		secret string
		header http.Header
		body   string
		at     time.Time
	}{
		"tampered body":     {vectorSecret, vectorHeader(vectorSig), `{"test": 2432232315}`, vectorTime},
		"other secret":      {"whsec_" + strings.Repeat("A", 32), vectorHeader(vectorSig), vectorBody, vectorTime},
		"old timestamp":     {vectorSecret, vectorHeader(vectorSig), vectorBody, vectorTime.Add(10 * time.Minute)},
		"v2 only":           {vectorSecret, vectorHeader("v2," + vectorSig[3:]), vectorBody, vectorTime},
		"no signature":      {vectorSecret, http.Header{"Webhook-Id": {vectorID}, "Webhook-Timestamp": {vectorTS}}, vectorBody, vectorTime},
		"not a unix second": {vectorSecret, http.Header{"Webhook-Id": {vectorID}, "Webhook-Timestamp": {"yesterday"}, "Webhook-Signature": {vectorSig}}, vectorBody, vectorTime},
	} {
		if _, err := verifyAt(c.secret, c.header, []byte(c.body), c.at); !errors.Is(err, ErrWebhookSignature) {
			t.Errorf("%s: %v, want ErrWebhookSignature", name, err)
		}
	}
}

// TestWebhookHandlerRefusesForgeries: the receiver's handler answers 401
// to a delivery that does not verify, without handing it over.
func TestWebhookHandlerRefusesForgeries(t *testing.T) {
	handled := 0
	h := WebhookHandler(vectorSecret, func(*http.Request, *WebhookEvent) error { handled++; return nil })
	req := httptest.NewRequest("POST", "/hook", strings.NewReader(vectorBody))
	req.Header = vectorHeader("v1,Zm9yZ2Vk")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusUnauthorized || handled != 0 {
		t.Fatalf("a forged delivery answered %d and was handled %d times", rec.Code, handled)
	}
}
