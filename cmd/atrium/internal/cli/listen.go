package cli

// atrium webhooks listen: the key's tenants' events, from the event
// stream (GET /api/v1/event-stream), forwarded to a local URL signed as a
// webhook delivery is, for developing a receiver without exposing it to
// the internet (as stripe listen does).

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	atrium "github.com/atrium-hq/atrium/sdk/go"
)

const (
	// forwardTimeout bounds the local receiver's answer to one event.
	forwardTimeout = 15 * time.Second
	// listenMaxBackoff caps the wait between reconnections.
	listenMaxBackoff = 30 * time.Second
)

type webhooksListenOptions struct {
	*Factory
	ForwardTo, Events, Secret string
}

func newWebhooksListenCmd(f *Factory, runF func(context.Context, *webhooksListenOptions) error) *Command {
	o := &webhooksListenOptions{Factory: f}
	return &Command{Name: "listen", Summary: "forward the key's live events to a local URL, signed as deliveries are",
		Usage: "--forward-to <url> [--events <type,...>] [--secret whsec_...] [flags]",
		Flags: func(fs *flag.FlagSet) {
			fs.StringVar(&o.ForwardTo, "forward-to", "", "the local URL each event is POSTed to, signed, such as http://localhost:3000/hook")
			fs.StringVar(&o.Events, "events", "", "the event types, comma-separated: names, prefixes followed by .*, or * (default: every event the key receives)")
			fs.StringVar(&o.Secret, "secret", "", "the whsec_ secret the deliveries are signed with (default: a new one, printed at start)")
		},
		Required: []string{"forward-to"},
		Run: func(ctx context.Context, _ []string) error {
			if u, err := url.Parse(o.ForwardTo); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				return usagef("%s: --forward-to must be an absolute http or https URL, such as http://localhost:3000/hook; got %q", o.command, o.ForwardTo)
			}
			if o.Secret != "" {
				if _, err := parseWebhookSecret(o.Secret); err != nil {
					return usagef("%s: --secret %v", o.command, err)
				}
			}
			if runF != nil {
				return runF(ctx, o)
			}
			return webhooksListen(ctx, o)
		}}
}

// webhooksListen runs atrium webhooks listen until ctx ends (Ctrl-C).
func webhooksListen(ctx context.Context, o *webhooksListenOptions) error {
	forward, secret := o.ForwardTo, o.Secret
	var key []byte
	if secret == "" {
		key = make([]byte, 32)
		_, _ = rand.Read(key)
		secret = "whsec_" + base64.StdEncoding.EncodeToString(key)
	} else {
		key, _ = parseWebhookSecret(secret) // checked by the command
	}
	types := splitList(o.Events)
	c, err := o.Client()
	if err != nil {
		return err
	}
	fmt.Fprintf(o.env.Stderr, "Signing secret: %s (verify the deliveries with it)\n", secret)
	f := &forwarder{url: forward, key: key, http: &http.Client{Timeout: forwardTimeout}, out: o.env.Stdout}
	backoff := time.Second
	for {
		live, err := listenOnce(ctx, c, types, f, o.env.Stderr, forward)
		if ctx.Err() != nil {
			return nil // Ctrl-C
		}
		var ae *atrium.Error
		if errors.As(err, &ae) && ae.StatusCode >= 400 && ae.StatusCode < 500 && ae.StatusCode != http.StatusTooManyRequests {
			return err // a bad filter or key does not get better
		}
		if live {
			backoff = time.Second
		}
		fmt.Fprintf(o.env.Stderr, "The event stream stopped (%v); connecting again in %s.\n", err, backoff)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, listenMaxBackoff)
	}
}

// listenOnce forwards the events of one connection of the stream until it
// ends, and reports whether it went live.
func listenOnce(ctx context.Context, c *atrium.Client, types []string, f *forwarder, stderr io.Writer, forward string) (bool, error) {
	live := false
	for ev, err := range c.Webhooks.Listen(ctx, types) {
		if err != nil {
			return live, err
		}
		if !ev.Heartbeat.IsZero() {
			if !live {
				live = true
				which := "every event the key receives"
				if len(types) > 0 {
					which = strings.Join(types, ", ")
				}
				fmt.Fprintf(stderr, "Ready: forwarding %s to %s (Ctrl-C to stop).\n", which, forward)
			}
			continue
		}
		f.forward(ctx, ev.WebhookEvent)
	}
	return live, errors.New("the stream ended")
}

// forwarder POSTs events to the local receiver, signed.
type forwarder struct {
	url  string
	key  []byte
	http *http.Client
	out  io.Writer
}

// forward sends one event and prints a line with the receiver's answer;
// a receiver that fails does not stop the listening.
func (f *forwarder) forward(ctx context.Context, ev atrium.WebhookEvent) {
	status, err := f.post(ctx, ev)
	answer := status
	if err != nil {
		answer = "error: " + err.Error()
	}
	fmt.Fprintf(f.out, "%s  %-24s %s  -> %s\n", ev.Timestamp.UTC().Format(time.RFC3339), ev.Type, ev.ID, answer)
}

func (f *forwarder) post(ctx context.Context, ev atrium.WebhookEvent) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, f.url, bytes.NewReader(ev.Raw))
	if err != nil {
		return "", err
	}
	ts := strconv.FormatInt(time.Now().Unix(), 10)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "atrium-webhooks-listen")
	req.Header.Set("webhook-id", ev.ID)
	req.Header.Set("webhook-timestamp", ts)
	req.Header.Set("webhook-signature", "v1,"+sign(f.key, ev.ID, ts, ev.Raw))
	resp, err := f.http.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	return resp.Status, nil
}

// sign is the Standard Webhooks v1 signature: the base64 of the
// HMAC-SHA256, keyed with the secret's bytes, of "id.timestamp.body" (as
// the webhooks service signs, and the SDK's VerifyWebhook checks).
func sign(key []byte, id, ts string, body []byte) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(id + "." + ts + "."))
	m.Write(body)
	return base64.StdEncoding.EncodeToString(m.Sum(nil))
}

// parseWebhookSecret reads a whsec_ secret as the webhooks service writes
// them.
func parseWebhookSecret(s string) ([]byte, error) {
	b64, ok := strings.CutPrefix(s, "whsec_")
	key, err := base64.StdEncoding.DecodeString(b64)
	if !ok || err != nil || len(key) < 24 || len(key) > 64 {
		return nil, errors.New("must be whsec_ followed by the standard base64 of 24 to 64 bytes (leave it out for a new one)")
	}
	return key, nil
}
