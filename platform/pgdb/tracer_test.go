package pgdb_test

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/atrium-hq/atrium/platform/pgdb"
	"github.com/atrium-hq/atrium/platform/pgtest"
)

// secretArg is a value a statement is run with: it must appear in no span.
const secretArg = "tenant-secret-4711"

// TestQueriesAreTracedWithoutArguments: every statement run under a traced
// request is a client span of that request, carrying the statement's text
// and never its arguments; a failing statement says why; work outside a
// trace makes no span at all.
func TestQueriesAreTracedWithoutArguments(t *testing.T) {
	url := pgtest.NewDatabase(t, "kv", func(ctx context.Context, url string) error {
		return pgdb.ApplyURL(ctx, url, kvMigrations)
	})
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	pool, err := pgdb.Open(t.Context(), url, "kv", pgdb.WithTracerProvider(tp))
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	// Open's own ping ran outside any trace.
	if n := len(rec.Ended()); n != 0 {
		t.Fatalf("%d spans before any traced work", n)
	}

	ctx, parent := tp.Tracer("test").Start(t.Context(), "request")
	const insert = "INSERT INTO kv (k, v) VALUES ($1, $2)"
	if _, err := pool.Exec(ctx, insert, "k1", secretArg); err != nil {
		t.Fatal(err)
	}
	const sel = "SELECT v FROM kv WHERE k = $1"
	var v string
	if err := pool.QueryRow(ctx, sel, "k1").Scan(&v); err != nil || v != secretArg {
		t.Fatalf("read back %q, %v", v, err)
	}
	if _, err := pool.Exec(ctx, insert, "k1", secretArg); err == nil {
		t.Fatal("duplicate insert accepted")
	}
	b := &pgx.Batch{}
	b.Queue(sel, secretArg)
	b.Queue("UPDATE kv SET v = $1 WHERE k = $2", secretArg, "k1")
	if err := pool.SendBatch(ctx, b).Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.CopyFrom(ctx, pgx.Identifier{"kv"}, []string{"k", "v"}, pgx.CopyFromRows([][]any{{"k2", secretArg}})); err != nil {
		t.Fatal(err)
	}
	parent.End()
	// Untraced work: nothing.
	if _, err := pool.Exec(context.Background(), "DELETE FROM kv WHERE k = $1", "k2"); err != nil {
		t.Fatal(err)
	}

	type got struct {
		name, query, system string
		kind                trace.SpanKind
		status              codes.Code
		sqlstate            string
		events              []string
	}
	var spans []got
	for _, s := range rec.Ended() {
		if s.Name() == "request" {
			continue
		}
		if s.Parent().SpanID() != parent.SpanContext().SpanID() || s.SpanContext().TraceID() != parent.SpanContext().TraceID() {
			t.Errorf("span %q is not a child of the request's span", s.Name())
		}
		g := got{name: s.Name(), kind: s.SpanKind(), status: s.Status().Code}
		for _, a := range s.Attributes() {
			if strings.Contains(a.Value.String(), secretArg) {
				t.Errorf("span %q records an argument: %s=%s", s.Name(), a.Key, a.Value.String())
			}
			switch a.Key {
			case "db.query.text":
				g.query = a.Value.AsString()
			case "db.system.name":
				g.system = a.Value.AsString()
			case "db.response.status_code":
				g.sqlstate = a.Value.AsString()
			}
		}
		for _, e := range s.Events() {
			for _, a := range e.Attributes {
				if strings.Contains(a.Value.String(), secretArg) {
					t.Errorf("span %q event %q records an argument", s.Name(), e.Name)
				}
				if a.Key == "db.query.text" {
					g.events = append(g.events, a.Value.AsString())
				}
			}
		}
		spans = append(spans, g)
	}
	want := []got{
		{name: "INSERT", query: insert, status: codes.Unset},
		{name: "SELECT", query: sel, status: codes.Unset},
		{name: "INSERT", query: insert, status: codes.Error, sqlstate: "23505"},
		{name: "BATCH", status: codes.Unset, events: []string{sel, "UPDATE kv SET v = $1 WHERE k = $2"}},
		{name: `COPY "kv"`, status: codes.Unset},
	}
	if len(spans) != len(want) {
		t.Fatalf("spans %+v, want %d (none for untraced work)", spans, len(want))
	}
	for i, w := range want {
		g := spans[i]
		if g.name != w.name || g.query != w.query || g.status != w.status || g.sqlstate != w.sqlstate ||
			g.kind != trace.SpanKindClient || g.system != "postgresql" || strings.Join(g.events, ";") != strings.Join(w.events, ";") {
			t.Errorf("span %d = %+v, want %+v, a client span with db.system.name postgresql", i, g, w)
		}
	}
}
