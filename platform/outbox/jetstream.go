package outbox

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// JetStream publishes events to a JetStream stream, creating or updating the
// stream before the first publish and again after any failure, so a NATS
// server that was down or was replaced without its data is set up again
// without a restart.
type JetStream struct {
	js     jetstream.JetStream
	stream jetstream.StreamConfig
	// shared are streams other services' events go to as well (the audit
	// trail's): created when missing, never updated, since their owner
	// sets their configuration.
	shared []jetstream.StreamConfig

	mu    sync.Mutex
	ready bool
}

// ErrNotConnected is a publish refused because the NATS connection is down;
// the event stays in the outbox.
var ErrNotConnected = errors.New("NATS is not connected")

// NewJetStream returns a publisher to stream on js.
func NewJetStream(js jetstream.JetStream, stream jetstream.StreamConfig) *JetStream {
	return &JetStream{js: js, stream: stream}
}

// AlsoEnsure makes the publisher create each of streams, when it does not
// exist, beside its own: a stream the service publishes some of its
// events to (the audit trail's, events.AuditStream), which the service
// that consumes it may not have created yet. An existing one is left as
// it is: its owner configures it.
func (p *JetStream) AlsoEnsure(streams ...jetstream.StreamConfig) *JetStream {
	p.shared = append(p.shared, streams...)
	return p
}

// Publish implements Publisher. The event id becomes the Nats-Msg-Id, which
// the stream uses to drop duplicates. The trace context of ctx (the relay's
// publish span) goes into the message's traceparent and tracestate
// headers, so that a consumer can continue the trace (see docs/events.md).
func (p *JetStream) Publish(ctx context.Context, e Event) error {
	// While the connection is down nats.go would buffer the publish and hold
	// the relay for the whole request timeout; failing at once keeps the
	// relay's backoff honest and the reconnect wake-up prompt.
	if nc := p.js.Conn(); nc != nil && !nc.IsConnected() {
		return ErrNotConnected
	}
	if err := p.ensure(ctx); err != nil {
		return err
	}
	msg := &nats.Msg{Subject: e.Subject, Data: e.Payload, Header: nats.Header{}}
	msg.Header.Set("Content-Type", "application/json")
	traceContext.Inject(ctx, HeaderCarrier(msg.Header))
	if _, err := p.js.PublishMsg(ctx, msg, jetstream.WithMsgID(e.ID)); err != nil {
		p.mu.Lock()
		p.ready = false
		p.mu.Unlock()
		return err
	}
	return nil
}

// Name is the stream's name.
func (p *JetStream) Name() string { return p.stream.Name }

// Ensure creates the stream, or updates its configuration to the one
// given to NewJetStream (JetStream moves its data when the replicas
// change), once; after a failed publish it does so again.
func (p *JetStream) Ensure(ctx context.Context) error { return p.ensure(ctx) }

func (p *JetStream) ensure(ctx context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ready {
		return nil
	}
	if _, err := p.js.CreateOrUpdateStream(ctx, p.stream); err != nil {
		return fmt.Errorf("ensure JetStream stream %s: %w", p.stream.Name, err)
	}
	for _, s := range p.shared {
		if _, err := p.js.CreateStream(ctx, s); err != nil && !errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
			return fmt.Errorf("ensure JetStream stream %s: %w", s.Name, err)
		}
	}
	p.ready = true
	return nil
}

// HeaderCarrier lets OpenTelemetry propagators read and write a NATS
// message's headers. NATS header keys are case-sensitive, and W3C trace
// context names its headers in lower case (traceparent, tracestate), so
// unlike an http.Header the keys are kept exactly as given. A consumer
// continues an event's trace with
//
//	ctx := propagator.Extract(ctx, outbox.HeaderCarrier(msg.Headers()))
type HeaderCarrier nats.Header

// Get returns the first value of key.
func (c HeaderCarrier) Get(key string) string { return nats.Header(c).Get(key) }

// Set replaces the values of key.
func (c HeaderCarrier) Set(key, value string) { nats.Header(c).Set(key, value) }

// Keys lists the header names.
func (c HeaderCarrier) Keys() []string {
	return slices.Collect(maps.Keys(c))
}
