package pgdb_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"testing/fstest"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/atrium-hq/atrium/platform/apperr"
	"github.com/atrium-hq/atrium/platform/outbox"
	"github.com/atrium-hq/atrium/platform/pgdb"
	"github.com/atrium-hq/atrium/platform/pgtest"
	"github.com/atrium-hq/atrium/platform/store"
	"github.com/atrium-hq/atrium/platform/txtest"
)

// kvMigrations is a service schema holding one table, plus the outbox.
var kvMigrations = pgdb.ServiceMigrations("kv", fstest.MapFS{
	"0001_kv.sql": {Data: []byte("CREATE TABLE kv (k text PRIMARY KEY, v text NOT NULL);")},
})

func openKV(t *testing.T) *pgxpool.Pool {
	t.Helper()
	url := pgtest.NewDatabase(t, "kv", func(ctx context.Context, url string) error {
		return pgdb.ApplyURL(ctx, url, kvMigrations)
	})
	pool, err := pgdb.Open(t.Context(), url, "kv")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// kv is the smallest PostgreSQL adapter, written the way every service's
// postgres adapter is.
type kv struct{ db *pgdb.DB }

func (s kv) InTx(ctx context.Context, fn func(txtest.Writer) error) error {
	return s.db.InTx(ctx, func(t *pgdb.Tx) error { return fn(kvTx{t}) })
}

func (s kv) Get(ctx context.Context, key string) (string, error) {
	var v string
	err := s.db.Pool().QueryRow(ctx, "SELECT v FROM kv WHERE k = $1", key).Scan(&v)
	return v, pgdb.Err(err, "get "+key)
}

func (s kv) Outbox() outbox.Source { return s.db.Outbox() }

type kvTx struct{ *pgdb.Tx }

func (t kvTx) Get(ctx context.Context, key string) (string, error) {
	var v string
	err := t.QueryRow(ctx, "SELECT v FROM kv WHERE k = $1 FOR UPDATE", key).Scan(&v)
	return v, pgdb.Err(err, "get "+key)
}

func (t kvTx) Put(ctx context.Context, key, value string) error {
	_, err := t.Exec(ctx, "INSERT INTO kv (k, v) VALUES ($1, $2) ON CONFLICT (k) DO UPDATE SET v = excluded.v", key, value)
	return pgdb.Err(err, "put "+key)
}

func TestPostgresTransactionContract(t *testing.T) {
	txtest.RunAll(t, func(t *testing.T, onCommit func()) txtest.Backend {
		return kv{pgdb.NewDB(openKV(t), onCommit)}
	})
}

// TestRetriesSerializationFailures: a transaction that fails with 40001 or
// 40P01 runs again; its events are enqueued once, by the attempt that
// commits.
func TestRetriesSerializationFailures(t *testing.T) {
	pool := openKV(t)
	var wakes atomic.Int32
	db := pgdb.NewDB(pool, func() { wakes.Add(1) })
	attempts := 0
	err := db.InTx(t.Context(), func(tx *pgdb.Tx) error {
		attempts++
		if _, err := tx.Exec(t.Context(), "INSERT INTO kv VALUES ('k', 'v')"); err != nil {
			return err
		}
		e, _ := outbox.New("atrium.test.retry", map[string]int{"attempt": attempts}, time.Now())
		if err := tx.Enqueue(t.Context(), e); err != nil {
			return err
		}
		if attempts <= 2 {
			code := map[int]string{1: "40001", 2: "40P01"}[attempts]
			_, err := tx.Exec(t.Context(), "DO $$ BEGIN RAISE EXCEPTION 'collision' USING ERRCODE = '"+code+"'; END $$")
			return pgdb.Err(err, "collide")
		}
		return nil
	})
	if err != nil || attempts != 3 {
		t.Fatalf("InTx = %v after %d attempts, want success on the third", err, attempts)
	}
	var rows, events int
	if err := pool.QueryRow(t.Context(), "SELECT (SELECT count(*) FROM kv), (SELECT count(*) FROM outbox)").Scan(&rows, &events); err != nil {
		t.Fatal(err)
	}
	if rows != 1 || events != 1 || wakes.Load() != 1 {
		t.Fatalf("after retries: %d rows, %d events, %d wakes; want 1 of each", rows, events, wakes.Load())
	}
}

// TestExecEventsIsOneStatement: a statement that writes rows and their
// event commits both and wakes the relay once; one whose rows are not
// written (its condition does not hold) enqueues nothing and does not wake
// it; one that fails leaves nothing.
func TestExecEventsIsOneStatement(t *testing.T) {
	pool := openKV(t)
	var wakes atomic.Int32
	db := pgdb.NewDB(pool, func() { wakes.Add(1) })
	count := func() (rows, events int) {
		t.Helper()
		if err := pool.QueryRow(t.Context(), "SELECT (SELECT count(*) FROM kv), (SELECT count(*) FROM outbox)").Scan(&rows, &events); err != nil {
			t.Fatal(err)
		}
		return rows, events
	}
	// Insert k = $1 when $3 holds, and the event with it.
	put := `WITH w AS (INSERT INTO kv (k, v) SELECT $1, $2 WHERE $3::boolean RETURNING k) ` + outbox.InsertSelect("w", 4)
	exec := func(k string, cond bool) (int64, error) {
		e, _ := outbox.New("atrium.test.exec", map[string]string{"k": k}, time.Now())
		return db.ExecEvents(t.Context(), put, append([]any{k, "v", cond}, outbox.InsertArgs(t.Context(), e)...)...)
	}
	n, err := exec("a", true)
	if rows, events := count(); err != nil || n != 1 || rows != 1 || events != 1 || wakes.Load() != 1 {
		t.Fatalf("ExecEvents = %d, %v: %d rows, %d events, %d wakes; want 1 of each", n, err, rows, events, wakes.Load())
	}
	n, err = exec("b", false)
	if rows, events := count(); err != nil || n != 0 || rows != 1 || events != 1 || wakes.Load() != 1 {
		t.Fatalf("ExecEvents whose condition fails = %d, %v: %d rows, %d events, %d wakes; want nothing more", n, err, rows, events, wakes.Load())
	}
	_, err = exec("a", true) // a duplicate key
	if !errors.Is(pgdb.Err(err, "put"), store.ErrDuplicate) {
		t.Fatalf("ExecEvents with a duplicate = %v, want a unique violation", err)
	}
	if rows, events := count(); rows != 1 || events != 1 || wakes.Load() != 1 {
		t.Fatalf("after a failed ExecEvents: %d rows, %d events, %d wakes; want the first write's only", rows, events, wakes.Load())
	}
	var payload []byte
	if err := pool.QueryRow(t.Context(), "SELECT payload FROM outbox").Scan(&payload); err != nil || string(payload) != `{"k":"a"}` {
		t.Fatalf("stored payload = %s, %v; want the event's bytes as they were", payload, err)
	}
}

// TestExecEventsWithSeveralEvents: InsertSelectEach enqueues every event
// given, in their order (the relay publishes by sequence), and none when
// the rows are not written.
func TestExecEventsWithSeveralEvents(t *testing.T) {
	pool := openKV(t)
	db := pgdb.NewDB(pool, nil)
	put := `WITH w AS (INSERT INTO kv (k, v) SELECT $1, $2 WHERE $3::boolean RETURNING k) ` + outbox.InsertSelectEach("w", 4)
	exec := func(k string, cond bool, subjects ...string) error {
		var events []outbox.Event
		for _, s := range subjects {
			e, _ := outbox.New(s, map[string]string{"k": k}, time.Now())
			events = append(events, e)
		}
		_, err := db.ExecEvents(t.Context(), put, append([]any{k, "v", cond}, outbox.InsertArgsEach(t.Context(), events)...)...)
		return err
	}
	if err := exec("a", true, "atrium.test.created", "atrium.test.published", "atrium.test.third"); err != nil {
		t.Fatal(err)
	}
	if err := exec("b", false, "atrium.test.created", "atrium.test.published"); err != nil {
		t.Fatal(err)
	}
	rows, err := pool.Query(t.Context(), "SELECT subject, payload FROM outbox ORDER BY seq")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for rows.Next() {
		var subject string
		var payload []byte
		if err := rows.Scan(&subject, &payload); err != nil {
			t.Fatal(err)
		}
		got = append(got, subject+" "+string(payload))
	}
	if rows.Err() != nil {
		t.Fatal(rows.Err())
	}
	want := []string{`atrium.test.created {"k":"a"}`, `atrium.test.published {"k":"a"}`, `atrium.test.third {"k":"a"}`}
	if !slices.Equal(got, want) {
		t.Fatalf("outbox = %q, want %q: every event of the written row, in order, none of the unwritten one", got, want)
	}
}

// TestExhaustedRetriesAreAborted: when every attempt collides, the caller
// gets a retryable Aborted error that says so, and nothing is written.
func TestExhaustedRetriesAreAborted(t *testing.T) {
	pool := openKV(t)
	db := pgdb.NewDB(pool, nil)
	attempts := 0
	err := db.InTx(t.Context(), func(tx *pgdb.Tx) error {
		attempts++
		if _, err := tx.Exec(t.Context(), "INSERT INTO kv VALUES ('k', 'v')"); err != nil {
			return err
		}
		_, err := tx.Exec(t.Context(), "DO $$ BEGIN RAISE EXCEPTION 'collision' USING ERRCODE = '40001'; END $$")
		return err
	})
	if apperr.KindOf(err) != apperr.KindAborted || attempts != pgdb.DefaultMaxAttempts {
		t.Fatalf("InTx = %v (kind %d) after %d attempts, want Aborted after %d", err, apperr.KindOf(err), attempts, pgdb.DefaultMaxAttempts)
	}
	var e *apperr.Error
	if !errors.As(err, &e) || e.Message == "" || errors.Unwrap(e) == nil {
		t.Fatalf("Aborted error %#v lacks a message or its cause", err)
	}
	var rows int
	if err := pool.QueryRow(t.Context(), "SELECT count(*) FROM kv").Scan(&rows); err != nil || rows != 0 {
		t.Fatalf("kv holds %d rows after an aborted write (%v)", rows, err)
	}
}

// TestRealDeadlockIsRetried: two transactions lock two rows in opposite
// orders; PostgreSQL kills one with 40P01, InTx runs it again, and both
// writes land.
func TestRealDeadlockIsRetried(t *testing.T) {
	pool := openKV(t)
	if _, err := pool.Exec(t.Context(), "INSERT INTO kv VALUES ('a', '0'), ('b', '0')"); err != nil {
		t.Fatal(err)
	}
	db := pgdb.NewDB(pool, nil)
	var (
		firstLocks sync.WaitGroup
		wg         sync.WaitGroup
		runs       atomic.Int32
	)
	firstLocks.Add(2)
	lockBoth := func(first, second string) error {
		once := false
		return db.InTx(t.Context(), func(tx *pgdb.Tx) error {
			runs.Add(1)
			if _, err := tx.Exec(t.Context(), "UPDATE kv SET v = (v::int + 1)::text WHERE k = $1", first); err != nil {
				return err
			}
			if !once {
				once = true
				firstLocks.Done()
				firstLocks.Wait() // both hold their first row: the next lock deadlocks
			}
			_, err := tx.Exec(t.Context(), "UPDATE kv SET v = (v::int + 1)::text WHERE k = $1", second)
			return err
		})
	}
	errs := make([]error, 2)
	wg.Go(func() { errs[0] = lockBoth("a", "b") })
	wg.Go(func() { errs[1] = lockBoth("b", "a") })
	wg.Wait()
	if errs[0] != nil || errs[1] != nil {
		t.Fatalf("deadlocked transactions: %v, %v", errs[0], errs[1])
	}
	if runs.Load() < 3 {
		t.Fatalf("%d runs: no transaction was retried, so no deadlock happened", runs.Load())
	}
	var a, b string
	if err := pool.QueryRow(t.Context(), "SELECT (SELECT v FROM kv WHERE k = 'a'), (SELECT v FROM kv WHERE k = 'b')").Scan(&a, &b); err != nil {
		t.Fatal(err)
	}
	if a != "2" || b != "2" {
		t.Fatalf("a = %s, b = %s; want both incremented twice", a, b)
	}
}

// TestUnreachableDatabaseIsUnavailable: a pool whose server is gone gives
// Unavailable, which callers see as a retryable 503, not a fault.
func TestUnreachableDatabaseIsUnavailable(t *testing.T) {
	cfg, err := pgxpool.ParseConfig("postgres://nobody@127.0.0.1:1/none?sslmode=disable&connect_timeout=2")
	if err != nil {
		t.Fatal(err)
	}
	pool, err := pgxpool.NewWithConfig(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	db := pgdb.NewDB(pool, nil)
	err = db.InTx(t.Context(), func(*pgdb.Tx) error { return nil })
	if apperr.KindOf(err) != apperr.KindUnavailable {
		t.Fatalf("InTx against a closed port = %v, want Unavailable", err)
	}
	var v int
	err = pgdb.Err(pool.QueryRow(t.Context(), "SELECT 1").Scan(&v), "read")
	if apperr.KindOf(err) != apperr.KindUnavailable {
		t.Fatalf("Err(read against a closed port) = %v, want Unavailable", err)
	}
}

func TestErrTranslatesDriverErrors(t *testing.T) {
	pool := openKV(t)
	if _, err := pool.Exec(t.Context(), "INSERT INTO kv VALUES ('a', '1')"); err != nil {
		t.Fatal(err)
	}
	_, err := pool.Exec(t.Context(), "INSERT INTO kv VALUES ('a', '2')")
	if err := pgdb.Err(err, "insert"); !errors.Is(err, store.ErrDuplicate) {
		t.Fatalf("unique violation = %v, want ErrDuplicate", err)
	}
	var v string
	err = pool.QueryRow(t.Context(), "SELECT v FROM kv WHERE k = 'zz'").Scan(&v)
	if err := pgdb.Err(err, "get"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("no rows = %v, want ErrNotFound", err)
	}
	if err := pgdb.Err(pgx.ErrTxClosed, "x"); apperr.KindOf(err) != 0 {
		t.Fatalf("a programming error became %v", err)
	}
}

// A caller that goes away mid-query must not cost the pool its connection:
// the next query runs on the same server session, not a new one.
func TestCanceledQueryKeepsItsConnection(t *testing.T) {
	pool := openKV(t)
	ctx := t.Context()
	var before int32
	if err := pool.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&before); err != nil {
		t.Fatal(err)
	}
	for _, sleep := range []string{"0.05", "2"} { // ends before the cancel request is sent; is cancelled by it
		qctx, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
		_, err := pool.Exec(qctx, "SELECT pg_sleep("+sleep+")")
		cancel()
		if sleep == "2" && err == nil {
			t.Fatalf("pg_sleep(2) under a 20ms deadline succeeded")
		}
		var after int32
		if err := pool.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&after); err != nil {
			t.Fatal(err)
		}
		if after != before {
			t.Fatalf("after a canceled pg_sleep(%s) the pool runs on backend %d, not %d: the connection was dropped", sleep, after, before)
		}
	}
}
