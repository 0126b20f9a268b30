package memdb_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/atrium-hq/atrium/platform/memdb"
	"github.com/atrium-hq/atrium/platform/outbox"
	"github.com/atrium-hq/atrium/platform/store"
	"github.com/atrium-hq/atrium/platform/txtest"
)

// kv is the smallest memory adapter: one map, written the way every
// service's memory adapter writes.
type kv struct {
	db *memdb.DB
	m  map[string]string
}

func (s *kv) InTx(ctx context.Context, fn func(txtest.Writer) error) error {
	return s.db.InTx(ctx, func(t *memdb.Tx) error { return fn(kvTx{t, s}) })
}

func (s *kv) Get(_ context.Context, key string) (string, error) {
	s.db.RLock()
	defer s.db.RUnlock()
	return s.get(key)
}

func (s *kv) get(key string) (string, error) {
	v, ok := s.m[key]
	if !ok {
		return "", fmt.Errorf("%s: %w", key, store.ErrNotFound)
	}
	return v, nil
}

func (s *kv) Outbox() outbox.Source { return s.db.Outbox() }

type kvTx struct {
	*memdb.Tx
	s *kv
}

func (t kvTx) Get(_ context.Context, key string) (string, error) { return t.s.get(key) }

func (t kvTx) Put(_ context.Context, key, value string) error {
	memdb.Put(t.Tx, t.s.m, key, value)
	return nil
}

func TestMemoryTransactionContract(t *testing.T) {
	txtest.RunAll(t, func(_ *testing.T, onCommit func()) txtest.Backend {
		return &kv{db: memdb.New(onCommit), m: map[string]string{}}
	})
}

func TestDeleteIsUndone(t *testing.T) {
	db := memdb.New(nil)
	m := map[string]int{"a": 1}
	_ = db.InTx(t.Context(), func(tx *memdb.Tx) error {
		if !memdb.Delete(tx, m, "a") || memdb.Delete(tx, m, "missing") {
			t.Error("Delete reported the wrong presence")
		}
		memdb.Put(tx, m, "b", 2)
		memdb.Put(tx, m, "b", 3)
		return fmt.Errorf("abort")
	})
	if len(m) != 1 || m["a"] != 1 {
		t.Fatalf("after rollback m = %v, want map[a:1]", m)
	}
}
