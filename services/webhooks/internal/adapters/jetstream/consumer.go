package jetstream

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"golang.org/x/sync/errgroup"
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
}

// Run consumes until ctx ends.
func (c *Consumer) Run(ctx context.Context) error {
	g, ctx := errgroup.WithContext(ctx)
	for _, s := range c.Streams {
		g.Go(func() error { return c.consume(ctx, s) })
	}
	return g.Wait()
}

func (c *Consumer) consume(ctx context.Context, stream string) error {
	var cons jetstream.Consumer
	for {
		var err error
		// A consumer created now starts with the events that arrive from
		// now on: an endpoint registered today does not want last week's.
		// Once created it keeps its place across restarts.
		cons, err = c.JS.CreateOrUpdateConsumer(ctx, stream, jetstream.ConsumerConfig{
			Durable:       c.Durable,
			AckPolicy:     jetstream.AckExplicitPolicy,
			DeliverPolicy: jetstream.DeliverNewPolicy,
			AckWait:       30 * time.Second,
			MaxDeliver:    -1,
		})
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
	cc, err := cons.Consume(func(m jetstream.Msg) { c.handle(ctx, m) })
	if err != nil {
		return err
	}
	<-ctx.Done()
	cc.Drain()
	<-cc.Closed()
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
	if err := c.Handle(ctx, id, m.Subject(), m.Data(), meta.Timestamp); err != nil {
		if c.Logger != nil {
			c.Logger.WarnContext(ctx, "webhooks: event not fanned out, retrying", "event", id, "subject", m.Subject(), "err", err)
		}
		_ = m.NakWithDelay(c.RetryDelay)
		return
	}
	_ = m.Ack()
}
