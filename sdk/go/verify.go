package atrium

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// WebhookEvent is a delivery a receiver verified.
type WebhookEvent struct {
	// ID is the webhook-id: the same on every retry and replay of the
	// event, to deduplicate on.
	ID        string
	Type      string
	Timestamp time.Time
	Data      map[string]any
	// Raw is the body as received.
	Raw []byte
}

// WebhookTolerance is how far a delivery's webhook-timestamp may be from
// the receiver's clock: older deliveries are refused, against replays by
// a third party (the Standard Webhooks default).
const WebhookTolerance = 5 * time.Minute

// ErrWebhookSignature is a delivery whose signature does not verify with
// the secret: refuse it (answer 4xx).
var ErrWebhookSignature = errors.New("atrium: webhook signature does not verify")

// VerifyWebhook checks a delivery as Standard Webhooks 1.0 specifies: a
// v1 signature (HMAC-SHA256 of "{webhook-id}.{webhook-timestamp}.{body}"
// keyed with the secret's decoded bytes) that matches one of the
// webhook-signature header's (two during a rotation), and a timestamp
// within WebhookTolerance. secret is the whsec_ secret Create or
// RotateSecret answered. It returns the event.
func VerifyWebhook(secret string, header http.Header, body []byte) (*WebhookEvent, error) {
	return verifyAt(secret, header, body, time.Now())
}

func verifyAt(secret string, header http.Header, body []byte, now time.Time) (*WebhookEvent, error) {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil || len(key) == 0 {
		return nil, errors.New("atrium: the webhook secret is not a whsec_ secret")
	}
	id, ts, sigs := header.Get("webhook-id"), header.Get("webhook-timestamp"), header.Get("webhook-signature")
	if id == "" || ts == "" || sigs == "" {
		return nil, fmt.Errorf("%w: webhook-id, webhook-timestamp and webhook-signature are required", ErrWebhookSignature)
	}
	secs, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return nil, fmt.Errorf("%w: webhook-timestamp %q is not Unix seconds", ErrWebhookSignature, ts)
	}
	at := time.Unix(secs, 0)
	if d := now.Sub(at); d > WebhookTolerance || d < -WebhookTolerance {
		return nil, fmt.Errorf("%w: webhook-timestamp %s is more than %s from now", ErrWebhookSignature, at.UTC().Format(time.RFC3339), WebhookTolerance)
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id + "." + ts + "."))
	mac.Write(body)
	want := mac.Sum(nil)
	ok := false
	for _, s := range strings.Fields(sigs) {
		version, sig, found := strings.Cut(s, ",")
		if !found || version != "v1" {
			continue
		}
		got, err := base64.StdEncoding.DecodeString(sig)
		if err == nil && hmac.Equal(got, want) {
			ok = true
		}
	}
	if !ok {
		return nil, ErrWebhookSignature
	}
	var ev struct {
		Type      string         `json:"type"`
		Timestamp time.Time      `json:"timestamp"`
		Data      map[string]any `json:"data"`
	}
	if err := json.Unmarshal(body, &ev); err != nil {
		return nil, fmt.Errorf("atrium: the webhook body is not the JSON of an event: %w", err)
	}
	return &WebhookEvent{ID: id, Type: ev.Type, Timestamp: ev.Timestamp, Data: ev.Data, Raw: body}, nil
}

// WebhookHandler is an http.Handler of a receiver: it verifies each
// delivery with secret and hands the event to handle; a delivery that
// does not verify is answered 401 and never handed over; an error of
// handle is answered 500, so that Atrium tries again later.
func WebhookHandler(secret string, handle func(*http.Request, *WebhookEvent) error) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := readLimited(r, 1<<20)
		if err != nil {
			http.Error(w, err.Error(), http.StatusRequestEntityTooLarge)
			return
		}
		ev, err := VerifyWebhook(secret, r.Header, body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusUnauthorized)
			return
		}
		if err := handle(r, ev); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
}

func readLimited(r *http.Request, n int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r.Body, n+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > n {
		return nil, fmt.Errorf("the delivery is larger than %d bytes", n)
	}
	return b, nil
}
