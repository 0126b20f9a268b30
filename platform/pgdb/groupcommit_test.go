package pgdb_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/atrium-hq/atrium/platform/outbox"
	"github.com/atrium-hq/atrium/platform/pgdb"
	"github.com/atrium-hq/atrium/platform/store"
)

// groupCase is a DB whose batches are held until the calls under test are
// all queued, so that they are sure to go together.
type groupCase struct {
	t       *testing.T
	db      *pgdb.DB
	wakes   atomic.Int32
	release chan struct{}
	mu      sync.Mutex
	sizes   []int
}

func newGroupCase(t *testing.T) *groupCase {
	c := &groupCase{t: t, release: make(chan struct{})}
	pool := openKV(t)
	c.db = pgdb.NewDB(pool, func() { c.wakes.Add(1) })
	pgdb.HoldBatches(c.db, c.release, func(n int) {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.sizes = append(c.sizes, n)
	})
	return c
}

// put inserts k when cond holds, with its event, through ExecEvents.
func (c *groupCase) put(ctx context.Context, k string, cond bool) (int64, error) {
	put := `WITH w AS (INSERT INTO kv (k, v) SELECT $1, $2 WHERE $3::boolean RETURNING k) ` + outbox.InsertSelect("w", 4)
	e, _ := outbox.New("atrium.test.exec", map[string]string{"k": k}, time.Now())
	return c.db.ExecEvents(ctx, put, append([]any{k, "v", cond}, outbox.InsertArgs(ctx, e)...)...)
}

type putResult struct {
	n   int64
	err error
}

// together runs the puts at once, releases the batches when all are
// queued, and returns each put's answer.
func (c *groupCase) together(puts []func() (int64, error)) []putResult {
	out := make([]putResult, len(puts))
	var wg sync.WaitGroup
	for i, put := range puts {
		wg.Go(func() { out[i].n, out[i].err = put() })
	}
	for pgdb.Queued(c.db) < len(puts) {
		time.Sleep(time.Millisecond) // why sleep: polls until every caller has queued; no signal is exported for it
	}
	close(c.release)
	wg.Wait()
	return out
}

func (c *groupCase) count() (rows, events int) {
	c.t.Helper()
	if err := c.db.Pool().QueryRow(c.t.Context(), "SELECT (SELECT count(*) FROM kv), (SELECT count(*) FROM outbox)").Scan(&rows, &events); err != nil {
		c.t.Fatal(err)
	}
	return rows, events
}

// TestConcurrentExecEventsShareOneCommit: calls that wait together go as
// one batch, which commits every row and event at once and wakes the relay
// once; each caller gets its own statement's count, a statement whose
// condition fails 0.
func TestConcurrentExecEventsShareOneCommit(t *testing.T) {
	c := newGroupCase(t)
	var puts []func() (int64, error)
	for i := range 10 {
		puts = append(puts, func() (int64, error) { return c.put(t.Context(), fmt.Sprint("k", i), i != 3) })
	}
	got := c.together(puts)
	for i, r := range got {
		want := int64(1)
		if i == 3 {
			want = 0
		}
		if r.err != nil || r.n != want {
			t.Errorf("put %d = %d, %v; want %d", i, r.n, r.err, want)
		}
	}
	if rows, events := c.count(); rows != 9 || events != 9 {
		t.Errorf("%d rows and %d events, want 9 of each", rows, events)
	}
	if !slices.Equal(c.sizes, []int{10}) || c.wakes.Load() != 1 {
		t.Errorf("batches %v and %d relay wakes; want one batch of 10 and one wake", c.sizes, c.wakes.Load())
	}
}

// TestFailingStatementFailsOnlyItsCaller: when one statement of a batch
// fails, the batch's transaction is rolled back, and every statement is run
// again alone: the failing one's caller gets its error, the others their
// rows, and nothing is written twice.
func TestFailingStatementFailsOnlyItsCaller(t *testing.T) {
	c := newGroupCase(t)
	if _, err := c.db.Pool().Exec(t.Context(), "INSERT INTO kv (k, v) VALUES ('taken', 'v')"); err != nil {
		t.Fatal(err)
	}
	var puts []func() (int64, error)
	for i := range 8 {
		k := fmt.Sprint("k", i)
		if i == 5 {
			k = "taken"
		}
		puts = append(puts, func() (int64, error) { return c.put(t.Context(), k, true) })
	}
	got := c.together(puts)
	for i, r := range got {
		if i == 5 {
			if !errors.Is(pgdb.Err(r.err, "put"), store.ErrDuplicate) {
				t.Errorf("the duplicate's put = %d, %v; want a unique violation", r.n, r.err)
			}
			continue
		}
		if r.err != nil || r.n != 1 {
			t.Errorf("put %d = %d, %v; want 1 (a neighbour's failure is not its own)", i, r.n, r.err)
		}
	}
	if rows, events := c.count(); rows != 8 || events != 7 {
		t.Errorf("%d rows and %d events, want 8 rows (7 new) and 7 events", rows, events)
	}
	if !slices.Equal(c.sizes, []int{8}) {
		t.Errorf("batches %v, want one of 8 (then each alone, outside the batches)", c.sizes)
	}
}

// TestCallerThatGaveUpIsLeftOut: a call whose context ends while it waits
// for its batch returns at once, and its statement is not sent.
func TestCallerThatGaveUpIsLeftOut(t *testing.T) {
	c := newGroupCase(t)
	gone, cancel := context.WithCancel(t.Context())
	var puts []func() (int64, error)
	puts = append(puts, func() (int64, error) { return c.put(t.Context(), "a", true) })
	puts = append(puts, func() (int64, error) { return c.put(t.Context(), "b", true) })
	puts = append(puts, func() (int64, error) {
		n, err := c.put(gone, "gone", true)
		return n, err
	})
	cancel()
	got := c.together(puts)
	if !errors.Is(got[2].err, context.Canceled) {
		t.Errorf("the canceled caller's put = %d, %v; want context.Canceled", got[2].n, got[2].err)
	}
	var gotGone int
	if err := c.db.Pool().QueryRow(t.Context(), "SELECT count(*) FROM kv WHERE k = 'gone'").Scan(&gotGone); err != nil || gotGone != 0 {
		t.Errorf("rows of the canceled put: %d, %v; want none", gotGone, err)
	}
	if rows, _ := c.count(); rows != 2 {
		t.Errorf("%d rows, want the two live puts'", rows)
	}
}

// TestQueryEventsAnswersEachItsRow: QueryEvents calls batched together get
// each its own statement's row, and ok false where the statement returned
// none; a duplicate fails only its caller.
func TestQueryEventsAnswersEachItsRow(t *testing.T) {
	c := newGroupCase(t)
	if _, err := c.db.Pool().Exec(t.Context(), "INSERT INTO kv (k, v) VALUES ('taken', 'v')"); err != nil {
		t.Fatal(err)
	}
	query := `WITH w AS (INSERT INTO kv (k, v) SELECT $1, $2 WHERE $3::boolean RETURNING k) ` + outbox.InsertSelect("w", 4) + ` RETURNING (SELECT k FROM w)`
	got := make([]string, 10)
	var puts []func() (int64, error)
	for i := range 10 {
		k := fmt.Sprint("k", i)
		if i == 7 {
			k = "taken"
		}
		puts = append(puts, func() (int64, error) {
			e, _ := outbox.New("atrium.test.query", map[string]string{"k": k}, time.Now())
			ok, err := c.db.QueryEvents(t.Context(), fmt.Sprint(9-i), func(row pgx.Row) error { return row.Scan(&got[i]) }, query,
				append([]any{k, "v", i != 3}, outbox.InsertArgs(t.Context(), e)...)...)
			if ok {
				return 1, err
			}
			return 0, err
		})
	}
	res := c.together(puts)
	for i, r := range res {
		switch i {
		case 3:
			if r.err != nil || r.n != 0 || got[i] != "" {
				t.Errorf("query %d (no row) = %d, %q, %v; want not ok", i, r.n, got[i], r.err)
			}
		case 7:
			if !errors.Is(pgdb.Err(r.err, "put"), store.ErrDuplicate) {
				t.Errorf("the duplicate's query = %d, %v; want a unique violation", r.n, r.err)
			}
		default:
			if r.err != nil || r.n != 1 || got[i] != fmt.Sprint("k", i) {
				t.Errorf("query %d = %d, %q, %v; want its own row k%d", i, r.n, got[i], r.err, i)
			}
		}
	}
	if rows, events := c.count(); rows != 9 || events != 8 {
		t.Errorf("%d rows and %d events, want 9 rows (8 new) and 8 events", rows, events)
	}
}

// TestQueryEventsRunInTheOrderOfTheirLockKeys: a batch runs its
// statements sorted by lock key, whatever order their callers came in, so
// two batches lock shared rows in one order. Each statement records how
// many rows it saw before it: the order it ran in.
func TestQueryEventsRunInTheOrderOfTheirLockKeys(t *testing.T) {
	c := newGroupCase(t)
	query := `WITH w AS (INSERT INTO kv (k, v) SELECT $1, (SELECT count(*) FROM kv)::text RETURNING v) ` + outbox.InsertSelect("w", 2) + ` RETURNING (SELECT v FROM w)`
	seen := make([]string, 6)
	var puts []func() (int64, error)
	for i := range 6 {
		puts = append(puts, func() (int64, error) {
			e, _ := outbox.New("atrium.test.order", map[string]int{"i": i}, time.Now())
			ok, err := c.db.QueryEvents(t.Context(), fmt.Sprint("agency-", 5-i), func(row pgx.Row) error { return row.Scan(&seen[i]) }, query,
				append([]any{fmt.Sprint("k", i)}, outbox.InsertArgs(t.Context(), e)...)...)
			if !ok {
				return 0, err
			}
			return 1, err
		})
	}
	for i, r := range c.together(puts) {
		if r.err != nil || r.n != 1 {
			t.Fatalf("query %d = %d, %v", i, r.n, r.err)
		}
	}
	for i, v := range seen {
		if want := fmt.Sprint(5 - i); v != want {
			t.Errorf("statement %d (key agency-%d) ran after %s rows, want %s: the batch runs by key", i, 5-i, v, want)
		}
	}
	if !slices.Equal(c.sizes, []int{6}) {
		t.Errorf("batches %v, want one of 6", c.sizes)
	}
}
