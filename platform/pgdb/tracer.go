package pgdb

import (
	"context"
	"errors"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"
)

// Tracer makes a client span for every statement, batch, COPY and
// connection a pool runs on behalf of a traced operation, with the
// statement's text (db.query.text) but never its arguments: Atrium's SQL is
// parameterised, so the text holds no data, and the arguments are tenants'
// data. pgdb.Open installs one on every pool.
//
// Work without a recording span in its context gets no span: the relay's
// polls and the health check would otherwise be a stream of one-span
// traces, and a request whose trace is not sampled pays nothing here.
type Tracer struct {
	tracer trace.Tracer
}

// NewTracer returns a tracer making its spans with tp.
func NewTracer(tp trace.TracerProvider) *Tracer {
	return &Tracer{tracer: tp.Tracer("github.com/atrium-hq/atrium/platform/pgdb")}
}

var (
	_ pgx.QueryTracer    = (*Tracer)(nil)
	_ pgx.BatchTracer    = (*Tracer)(nil)
	_ pgx.CopyFromTracer = (*Tracer)(nil)
	_ pgx.ConnectTracer  = (*Tracer)(nil)
)

// One key per kind of operation, so that the end of one never ends the
// span of another running under the same context.
type (
	querySpanKey   struct{}
	batchSpanKey   struct{}
	copySpanKey    struct{}
	connectSpanKey struct{}
)

// start begins a client span named name under ctx's span, if that one is
// recording, and keeps it under key for the matching end.
func (t *Tracer) start(ctx context.Context, key any, name string, conn *pgx.Conn, attrs ...attribute.KeyValue) context.Context {
	if !trace.SpanFromContext(ctx).IsRecording() {
		return ctx
	}
	attrs = append(attrs, semconv.DBSystemNamePostgreSQL)
	if conn != nil {
		cfg := conn.Config()
		attrs = append(attrs, semconv.DBNamespace(cfg.Database), semconv.ServerAddress(cfg.Host), semconv.ServerPort(int(cfg.Port)))
	}
	ctx, span := t.tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
	return context.WithValue(ctx, key, span)
}

// end ends the span start kept under key, recording err.
func end(ctx context.Context, key any, err error, attrs ...attribute.KeyValue) {
	span, ok := ctx.Value(key).(trace.Span)
	if !ok {
		return
	}
	span.SetAttributes(attrs...)
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) {
			span.SetAttributes(semconv.DBResponseStatusCode(pgErr.Code), semconv.ErrorTypeKey.String(pgErr.Code))
		} else {
			span.SetAttributes(semconv.ErrorTypeOther)
		}
	}
	span.End()
}

// operation is the statement's first keyword (SELECT, INSERT, WITH), the
// span's name: the convention's fallback when the query is not summarised.
func operation(sql string) string {
	sql = strings.TrimSpace(sql)
	if i := strings.IndexAny(sql, " \t\n\r("); i > 0 {
		sql = sql[:i]
	}
	if sql == "" {
		return "postgresql"
	}
	return strings.ToUpper(sql)
}

// TraceQueryStart implements pgx.QueryTracer.
func (t *Tracer) TraceQueryStart(ctx context.Context, conn *pgx.Conn, data pgx.TraceQueryStartData) context.Context {
	if !trace.SpanFromContext(ctx).IsRecording() {
		return ctx
	}
	op := operation(data.SQL)
	return t.start(ctx, querySpanKey{}, op, conn, semconv.DBQueryText(data.SQL), semconv.DBOperationName(op))
}

// TraceQueryEnd implements pgx.QueryTracer.
func (t *Tracer) TraceQueryEnd(ctx context.Context, _ *pgx.Conn, data pgx.TraceQueryEndData) {
	end(ctx, querySpanKey{}, data.Err, rowsAffected(data.CommandTag)...)
}

// rowsAffected says how many rows a SELECT returned.
func rowsAffected(tag pgconn.CommandTag) []attribute.KeyValue {
	if !tag.Select() {
		return nil
	}
	return []attribute.KeyValue{semconv.DBResponseReturnedRows(int(tag.RowsAffected()))}
}

// TraceBatchStart implements pgx.BatchTracer: one span for the batch, one
// event per statement.
func (t *Tracer) TraceBatchStart(ctx context.Context, conn *pgx.Conn, data pgx.TraceBatchStartData) context.Context {
	return t.start(ctx, batchSpanKey{}, "BATCH", conn, semconv.DBOperationName("BATCH"), semconv.DBOperationBatchSize(data.Batch.Len()))
}

// TraceBatchQuery implements pgx.BatchTracer.
func (t *Tracer) TraceBatchQuery(ctx context.Context, _ *pgx.Conn, data pgx.TraceBatchQueryData) {
	span, ok := ctx.Value(batchSpanKey{}).(trace.Span)
	if !ok {
		return
	}
	attrs := append([]attribute.KeyValue{semconv.DBQueryText(data.SQL)}, rowsAffected(data.CommandTag)...)
	if data.Err != nil {
		attrs = append(attrs, attribute.String("error.message", data.Err.Error()))
	}
	span.AddEvent("query", trace.WithAttributes(attrs...))
}

// TraceBatchEnd implements pgx.BatchTracer.
func (t *Tracer) TraceBatchEnd(ctx context.Context, _ *pgx.Conn, data pgx.TraceBatchEndData) {
	end(ctx, batchSpanKey{}, data.Err)
}

// TraceCopyFromStart implements pgx.CopyFromTracer.
func (t *Tracer) TraceCopyFromStart(ctx context.Context, conn *pgx.Conn, data pgx.TraceCopyFromStartData) context.Context {
	if !trace.SpanFromContext(ctx).IsRecording() {
		return ctx
	}
	table := data.TableName.Sanitize()
	return t.start(ctx, copySpanKey{}, "COPY "+table, conn, semconv.DBOperationName("COPY"), semconv.DBCollectionName(table))
}

// TraceCopyFromEnd implements pgx.CopyFromTracer.
func (t *Tracer) TraceCopyFromEnd(ctx context.Context, _ *pgx.Conn, data pgx.TraceCopyFromEndData) {
	end(ctx, copySpanKey{}, data.Err)
}

// TraceConnectStart implements pgx.ConnectTracer: a connection opened
// while a traced request waits for it shows in that request's trace.
func (t *Tracer) TraceConnectStart(ctx context.Context, data pgx.TraceConnectStartData) context.Context {
	if !trace.SpanFromContext(ctx).IsRecording() {
		return ctx
	}
	return t.start(ctx, connectSpanKey{}, "connect", nil, semconv.DBNamespace(data.ConnConfig.Database),
		semconv.ServerAddress(data.ConnConfig.Host), semconv.ServerPort(int(data.ConnConfig.Port)))
}

// TraceConnectEnd implements pgx.ConnectTracer.
func (t *Tracer) TraceConnectEnd(ctx context.Context, data pgx.TraceConnectEndData) {
	end(ctx, connectSpanKey{}, data.Err)
}
