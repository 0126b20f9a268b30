package jetstream_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go"
	jetstreamapi "github.com/nats-io/nats.go/jetstream"

	"github.com/atrium-hq/atrium/platform/events"
	"github.com/atrium-hq/atrium/platform/memdb"
	"github.com/atrium-hq/atrium/platform/natstest"
	"github.com/atrium-hq/atrium/services/audit/internal/adapters/jetstream"
	"github.com/atrium-hq/atrium/services/audit/internal/adapters/memory"
	"github.com/atrium-hq/atrium/services/audit/internal/app"
)

// TestConsumerKeepsEachEventOnce runs two replicas sharing the durable
// consumer on a real JetStream stream. One event is kept and then its
// handling fails before the acknowledgement (a replica that died there),
// so it is delivered again: the trail holds it once. A malformed message
// is dropped without holding up the rest.
func TestConsumerKeepsEachEventOnce(t *testing.T) {
	nc, err := nats.Connect(natstest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstreamapi.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	// A stream of the test's own: ATRIUM_AUDIT on the shared server holds
	// every other test's events. The audit subject is given back to the
	// recorder below.
	id := strings.ReplaceAll(uuid.NewString(), "-", "")
	stream, prefix := "TEST_AUDIT_"+id, "atrium.test."+id+"."
	if _, err := js.CreateStream(t.Context(), jetstreamapi.StreamConfig{Name: stream, Subjects: []string{prefix + ">"}, Storage: jetstreamapi.MemoryStorage}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = js.DeleteStream(context.Background(), stream) })

	st := memory.New(memdb.New(nil))
	rec := &app.Recorder{Store: st}
	agency := uuid.NewString()
	var (
		mu       sync.Mutex
		failed   bool
		handled  = make(chan string, 100)
		crashyID string
	)
	handle := func(ctx context.Context, id, subject string, payload []byte) error {
		svc := strings.TrimPrefix(subject, prefix)
		_, err := rec.Handle(ctx, id, "atrium.audit."+svc+".recorded", payload)
		if err != nil {
			return err
		}
		mu.Lock()
		crash := id == crashyID && !failed
		failed = failed || crash
		mu.Unlock()
		if crash {
			return errors.New("the replica died before acknowledging")
		}
		handled <- id
		return nil
	}
	ctx, cancel := context.WithCancel(t.Context())
	var replicas sync.WaitGroup
	for range 2 {
		c := &jetstream.Consumer{JS: js, Stream: stream, Durable: "test", Handle: handle, RetryDelay: 10 * time.Millisecond,
			Permanent: func(err error) bool { return errors.Is(err, app.ErrMalformed) }, Logger: slog.New(slog.DiscardHandler), Concurrency: 4}
		replicas.Go(func() {
			if err := c.Run(ctx); err != nil {
				t.Error(err)
			}
		})
	}
	defer func() {
		cancel()
		replicas.Wait()
	}()

	publish := func(msgID, svc string, payload []byte) {
		t.Helper()
		if _, err := js.PublishMsg(t.Context(), &nats.Msg{Subject: prefix + svc, Data: payload}, jetstreamapi.WithMsgID(msgID)); err != nil {
			t.Fatal(err)
		}
	}
	at := time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)
	var want []string
	for i := range 5 {
		e := events.AuditEvent{Service: "webhooks", Action: "webhook.created", ResourceType: "webhook", ResourceID: uuid.NewString(),
			AgencyID: agency, ActorKind: "key", ActorID: "key-1", At: at.Add(time.Duration(i) * time.Second)}
		b, _ := json.Marshal(e)
		msgID := uuid.NewString()
		if i == 2 {
			mu.Lock()
			crashyID = msgID
			mu.Unlock()
		}
		publish(msgID, "webhooks", b)
		want = append([]string{msgID}, want...)
		if i == 3 {
			publish(uuid.NewString(), "webhooks", []byte(`{"not":"an audit event"}`))
		}
	}
	seen := map[string]bool{}
	for len(seen) < len(want) {
		select {
		case id := <-handled:
			seen[id] = true
		case <-time.After(20 * time.Second):
			t.Fatalf("only %d of %d events kept after 20s", len(seen), len(want))
		}
	}
	mu.Lock()
	if !failed {
		t.Error("the crashing handling never happened")
	}
	mu.Unlock()
	evs, err := st.Events(t.Context(), app.Filter{AgencyID: agency, Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range evs {
		got = append(got, e.ID)
	}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("the trail holds %v, want each event once, newest first: %v", got, want)
	}
}
