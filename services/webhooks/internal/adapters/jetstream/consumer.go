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
	"golang.org/x/sync/errgroup"

	"github.com/atrium-hq/atrium/platform/outbox"
)

// Handler handles one event: its id (the Nats-Msg-Id the outbox relay
// set), subject, payload and the time the stream stored it.
type Handler func(ctx context.Context, id, subject string, payload []byte, at time.Time) error

// Consumer consumes streams with one durable consumer each.
type Consumer struct {
	JS jetstream.JetStream
	// Streams are the streams to consume; one that does not exist yet (no
	// service has published to it) is waited for.
	Streams []string
	// Durable names the consumers, shared by every replica.
	Durable string
	Handle  Handler
	// RetryDelay is how long an event whose handling failed waits before
	// it is delivered again, and how often a missing stream is looked for.
	RetryDelay time.Duration
	Logger     *slog.Logger
	// Tracer, if set, traces the handling of each event as a span of the
	// write's trace (the relay put its context in the message's headers).
	Tracer trace.TracerProvider
	// Concurrency is how many events of one stream are handled at once
	// (default 1). Webhook deliveries need no order between events, and
	// handling several at once lets their writes share commits.
	Concurrency int
}

// Run consumes until ctx ends.
func (c *Consumer) Run(ctx context.Context) error {
	started := time.Now().UTC()
	g, ctx := errgroup.WithContext(ctx)
	for _, s := range c.Streams {
		g.Go(func() error { return c.consume(ctx, s, started) })
	}
	return g.Wait()
}

// consume consumes stream with the durable consumer, once it exists. A
// consumer that exists resumes where it stopped, across restarts and
// replicas. One created now starts with the events stored since the
// service started, not before: an endpoint registered today does not want
// last week's; and since a service creates its stream only when it first
// publishes, that is also what makes the event that created the stream
// reach the endpoints.
func (c *Consumer) consume(ctx context.Context, stream string, started time.Time) error {
	var cons jetstream.Consumer
	for {
		var err error
		cons, err = c.JS.Consumer(ctx, stream, c.Durable)
		if errors.Is(err, jetstream.ErrConsumerNotFound) {
			cons, err = c.JS.CreateConsumer(ctx, stream, jetstream.ConsumerConfig{
				Durable:       c.Durable,
				AckPolicy:     jetstream.AckExplicitPolicy,
				DeliverPolicy: jetstream.DeliverByStartTimePolicy,
				OptStartTime:  &started,
				AckWait:       30 * time.Second,
				MaxDeliver:    -1,
				// A deployment gone for longer than the streams keep
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
			c.Logger.WarnContext(ctx, "webhooks: cannot consume stream yet", "stream", stream, "err", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(c.RetryDelay):
		}
	}
	// The callback hands each event to one of Concurrency handlers and
	// waits for a free one: a full pool holds the next message back.
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
		ctx, span = c.Tracer.Tracer("github.com/atrium-hq/atrium/services/webhooks").Start(ctx, "webhooks fan-out "+m.Subject(),
			trace.WithSpanKind(trace.SpanKindConsumer), trace.WithAttributes(attribute.String("messaging.message.id", id)))
		defer span.End()
	}
	if err := c.Handle(ctx, id, m.Subject(), m.Data(), meta.Timestamp); err != nil {
		if c.Logger != nil {
			c.Logger.WarnContext(ctx, "webhooks: event not fanned out, retrying", "event", id, "subject", m.Subject(), "err", err)
		}
		_ = m.NakWithDelay(c.RetryDelay)
		return
	}
	_ = m.Ack()
}
