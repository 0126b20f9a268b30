-- The W3C trace context (traceparent, tracestate) of the transaction that
-- enqueued each event, so that the relay publishes it as part of that
-- request's trace. Empty for events enqueued outside a trace, and for those
-- already waiting when this migration ran.
ALTER TABLE outbox
	ADD COLUMN IF NOT EXISTS traceparent text NOT NULL DEFAULT '',
	ADD COLUMN IF NOT EXISTS tracestate text NOT NULL DEFAULT '';
