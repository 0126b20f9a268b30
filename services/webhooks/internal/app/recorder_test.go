package app_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/atrium-hq/atrium/platform/memdb"
	"github.com/atrium-hq/atrium/services/webhooks/internal/adapters/memory"
	"github.com/atrium-hq/atrium/services/webhooks/internal/app"
)

// countingStore is the memory store (held in the test as the port) that
// counts the writes of attempts and holds the first until released.
type countingStore struct {
	app.DeliveryStore
	mu      sync.Mutex
	calls   [][]app.AttemptRecord
	release chan struct{}
}

func (s *countingStore) RecordAttempts(ctx context.Context, rs []app.AttemptRecord) error {
	s.mu.Lock()
	s.calls = append(s.calls, rs)
	first := len(s.calls) == 1
	s.mu.Unlock()
	if first {
		<-s.release
	}
	return s.DeliveryStore.RecordAttempts(ctx, rs)
}

// TestAttemptsEndingTogetherAreOneWrite: while one write of attempts is on
// its way, the attempts that end meanwhile wait and then go together in
// the next; each caller returns once its own attempt is written.
func TestAttemptsEndingTogetherAreOneWrite(t *testing.T) {
	mem := memory.New(memdb.New(nil))
	ep := app.Endpoint{ID: "0192f7c4-0000-7000-8000-00000000000e", Tenant: app.Tenant{Kind: "agency", ID: "0192f7c4-0000-7000-8000-00000000000a"}, Enabled: true}
	if err := mem.InTx(t.Context(), func(tx app.EndpointTx) error { return tx.InsertEndpoint(t.Context(), ep) }); err != nil {
		t.Fatal(err)
	}
	var ds []app.Delivery
	for i := range 11 {
		ds = append(ds, app.Delivery{ID: fmt.Sprintf("0192f7c4-0000-7000-8000-0000000001%02d", i), EndpointID: ep.ID, Tenant: ep.Tenant,
			EventID: fmt.Sprint("e", i), Status: app.Pending, CreatedAt: time.Now()})
	}
	if err := mem.AddDeliveries(t.Context(), ds); err != nil {
		t.Fatal(err)
	}
	s := &countingStore{DeliveryStore: mem, release: make(chan struct{})}
	var r app.Recorder
	var wg sync.WaitGroup
	errs := make(chan error, len(ds))
	wg.Go(func() { errs <- r.Record(t.Context(), s, app.AttemptRecord{ID: ds[0].ID, Status: app.Succeeded}) })
	for { // the first write is on its way
		s.mu.Lock()
		n := len(s.calls)
		s.mu.Unlock()
		if n == 1 {
			break
		}
		time.Sleep(time.Millisecond) // why sleep: polls for the leader's write, which the test holds
	}
	for _, d := range ds[1:] {
		wg.Go(func() { errs <- r.Record(t.Context(), s, app.AttemptRecord{ID: d.ID, Status: app.Succeeded}) })
	}
	for r.Pending() != len(ds)-1 { // every other attempt is queued behind it
		time.Sleep(time.Millisecond) // why sleep: polls the queue the waiting callers fill
	}
	close(s.release)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(s.calls) != 2 || len(s.calls[1]) != len(ds)-1 {
		t.Fatalf("%d writes (sizes %d…); want 2: the first alone, then the %d that ended meanwhile together", len(s.calls), len(s.calls[0]), len(ds)-1)
	}
	for _, d := range ds {
		got, err := mem.Delivery(t.Context(), ep.Tenant, ep.ID, d.ID)
		if err != nil || got.Status != app.Succeeded {
			t.Fatalf("delivery %s after the writes: %+v, %v", d.ID, got, err)
		}
	}
}
