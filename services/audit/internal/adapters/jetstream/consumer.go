package jetstream

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/atrium-hq/atrium/platform/outbox"
)

// Handler handles one event: its id (the Nats-Msg-Id the outbox relay
// set), subject and payload.
type Handler func(ctx context.Context, id, subject string, payload []byte) error

// Consumer consumes one stream with a durable consumer.
type Consumer struct {
	JS jetstream.JetStream
	// Stream is the stream to consume; while it does not exist yet, it is
	// waited for.
	Stream string
	// Durable names the consumer, shared by every replica.
	Durable string
	Handle  Handler
	// Permanent reports an error no retry can cure (a malformed event):
	// the event is dropped instead of delivered again.
	Permanent func(error) bool
	// RetryDelay is how long an event whose handling failed waits before
	// it is delivered again, and how often a missing stream is looked for.
	RetryDelay time.Duration
	Logger     *slog.Logger
	// Tracer, if set, traces the handling of each event as a span of the
	// write's trace (the relay put its context in the message's headers).
	Tracer trace.TracerProvider
	// Concurrency is how many events are handled at once (default 1): the
	// trail's order is its events' times, not their arrival, so events
	// need no order between them.
	Concurrency int
}

// Run consumes until ctx ends. A consumer created now starts with the
// first event the stream holds: every write's record counts, including
// those made before the audit service first started.
func (c *Consumer) Run(ctx context.Context) error {
	var cons jetstream.Consumer
	for {
		var err error
		cons, err = c.JS.Consumer(ctx, c.Stream, c.Durable)
		if errors.Is(err, jetstream.ErrConsumerNotFound) {
			cons, err = c.JS.CreateConsumer(ctx, c.Stream, jetstream.ConsumerConfig{
				Durable:       c.Durable,
				AckPolicy:     jetstream.AckExplicitPolicy,
				DeliverPolicy: jetstream.DeliverAllPolicy,
				AckWait:       30 * time.Second,
				MaxDeliver:    -1,
				// A deployment gone for longer than the stream keeps
				// events has nothing left to resume: its consumer goes.
				InactiveThreshold: 7 * 24 * time.Hour,
			})
			if errors.Is(err, jetstream.ErrConsumerExists) {
				continue // another replica created it: resume with it
			}
		}
		if err == nil {
			break
		}
		if !errors.Is(err, jetstream.ErrStreamNotFound) && c.Logger != nil {
			c.Logger.WarnContext(ctx, "audit: cannot consume the stream yet", "stream", c.Stream, "err", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(c.RetryDelay):
		}
	}
	sem := make(chan struct{}, max(c.Concurrency, 1))
	var handlers sync.WaitGroup
	cc, err := cons.Consume(func(m jetstream.Msg) {
		sem <- struct{}{}
		handlers.Go(func() {
			defer func() { <-sem }()
			c.handle(ctx, m)
		})
	})
	if err != nil {
		return err
	}
	<-ctx.Done()
	cc.Drain()
	<-cc.Closed()
	handlers.Wait()
	return nil
}

func (c *Consumer) handle(ctx context.Context, m jetstream.Msg) {
	meta, err := m.Metadata()
	if err != nil {
		_ = m.Term() // not a stream message
		return
	}
	id := m.Headers().Get(jetstream.MsgIDHeader)
	if id == "" {
		id = meta.Stream + ":" + strconv.FormatUint(meta.Sequence.Stream, 10)
	}
	ctx = propagation.TraceContext{}.Extract(ctx, outbox.HeaderCarrier(m.Headers()))
	if c.Tracer != nil {
		var span trace.Span
		ctx, span = c.Tracer.Tracer("github.com/atrium-hq/atrium/services/audit").Start(ctx, "audit record "+m.Subject(),
			trace.WithSpanKind(trace.SpanKindConsumer), trace.WithAttributes(attribute.String("messaging.message.id", id)))
		defer span.End()
	}
	if err := c.Handle(ctx, id, m.Subject(), m.Data()); err != nil {
		if c.Permanent != nil && c.Permanent(err) {
			if c.Logger != nil {
				c.Logger.ErrorContext(ctx, "audit: dropping an event that can never be kept", "event", id, "subject", m.Subject(), "err", err)
			}
			_ = m.Term()
			return
		}
		if c.Logger != nil {
			c.Logger.WarnContext(ctx, "audit: event not kept, retrying", "event", id, "subject", m.Subject(), "err", err)
		}
		_ = m.NakWithDelay(c.RetryDelay)
		return
	}
	_ = m.Ack()
}
