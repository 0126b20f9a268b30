package runner

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"google.golang.org/grpc"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"

	"github.com/atrium-hq/atrium/platform/memdb"
	"github.com/atrium-hq/atrium/platform/natstest"
	"github.com/atrium-hq/atrium/platform/outbox"
	"github.com/atrium-hq/atrium/platform/principal"
	"github.com/atrium-hq/atrium/platform/rpc"
)

var testSecret = []byte("runner-test-secret-0123456789abcdef")

// testSpec is a service of the test's own, with a stream of its own.
func testSpec(t *testing.T) Spec {
	id := fmt.Sprintf("%d", time.Now().UnixNano())
	return Spec{Name: "runnertest", Stream: "ATRIUM_RUNNERTEST_" + id, Subjects: "atrium.runnertest." + id + ".>"}
}

// checkHealthOf asks conn for the process's health and the cause it gives.
func checkHealthOf(t *testing.T, conn *grpc.ClientConn) (healthpb.HealthCheckResponse_ServingStatus, string, error) {
	t.Helper()
	var header metadata.MD
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	resp, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{}, grpc.Header(&header))
	cause := ""
	if v := header.Get(rpc.HealthCauseKey); len(v) > 0 {
		cause = v[0]
	}
	return resp.GetStatus(), cause, err
}

// awaitHealth waits until the process's health on conn (the empty service
// name) is want: gRPC health's Watch stream sends each change as it happens.
func awaitHealth(t *testing.T, conn *grpc.ClientConn, want healthpb.HealthCheckResponse_ServingStatus) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	stream, err := healthpb.NewHealthClient(conn).Watch(ctx, &healthpb.HealthCheckRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for {
		resp, err := stream.Recv()
		if err != nil {
			st, cause, _ := checkHealthOf(t, conn)
			t.Fatalf("health never became %s (now %s, %q): %v", want, st, cause, err)
		}
		if resp.GetStatus() == want {
			return
		}
	}
}

// On stop a service reports NOT_SERVING, saying it is shutting down, while
// it still answers calls for the drain delay; then it stops accepting,
// publishes what its last calls enqueued, and Run returns nil. Its
// background loop is told to stop when the drain begins, and what it
// enqueues as it winds down is published too.
func TestStopDrainsThenStops(t *testing.T) {
	natsURL := natstest.URL(t)
	spec := testSpec(t)
	const drainDelay = time.Minute
	rt, err := Open(t.Context(), spec, Config{GRPCAddr: "127.0.0.1:0", Backing: Backing{NATSURL: natsURL},
		InternalSecret: testSecret, DrainDelay: drainDelay, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	if rt.cfg.RelayInterval != outbox.DefaultInterval {
		t.Fatalf("relay interval %s without one configured, want outbox.DefaultInterval (%s), which the docs give", rt.cfg.RelayInterval, outbox.DefaultInterval)
	}
	// The drain delay lasts until the test has seen the drain.
	drainBegan, endDrain := make(chan time.Duration, 1), make(chan struct{})
	rt.waitDrain = func(d time.Duration) {
		drainBegan <- d
		<-endDrain
	}
	db := Store(rt, func(db *memdb.DB) *memdb.DB { return db }, nil)
	loopStopped := make(chan struct{})
	rt.Go("winder", func(ctx context.Context) error {
		<-ctx.Done()
		close(loopStopped)
		return db.InTx(context.WithoutCancel(ctx), func(tx *memdb.Tx) error {
			return outbox.Enqueue(ctx, tx, strings.TrimSuffix(spec.Subjects, ">")+"wound-down", map[string]string{"id": "wound-down"}, time.Now())
		})
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- rt.Run(ctx) }()
	conn, err := rpc.Dial(rt.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	awaitHealth(t, conn, healthpb.HealthCheckResponse_SERVING)

	if err := db.InTx(ctx, func(tx *memdb.Tx) error {
		return outbox.Enqueue(ctx, tx, strings.TrimSuffix(spec.Subjects, ">")+"last", map[string]string{"id": "last"}, time.Now())
	}); err != nil {
		t.Fatal(err)
	}
	cancel() // SIGTERM
	select {
	case d := <-drainBegan:
		if d != drainDelay {
			t.Fatalf("drain delay %s, want the configured %s", d, drainDelay)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no drain delay began within 10s of the stop")
	}
	awaitHealth(t, conn, healthpb.HealthCheckResponse_NOT_SERVING)
	st, cause, err := checkHealthOf(t, conn)
	if err != nil {
		t.Fatalf("health check during the drain: %v; want an answer", err)
	}
	if st != healthpb.HealthCheckResponse_NOT_SERVING || cause != rpc.CauseShuttingDown {
		t.Fatalf("health during the drain = %s (%q), want NOT_SERVING (%q)", st, cause, rpc.CauseShuttingDown)
	}
	if got := rt.NotServing(); got != rpc.CauseShuttingDown {
		t.Fatalf("NotServing() during the drain = %q", got)
	}
	select {
	case <-loopStopped:
	case <-time.After(10 * time.Second):
		t.Fatal("the background loop was not told to stop when the drain began")
	}
	close(endDrain)

	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run = %v, want nil", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Run still running 30s after the drain")
	}
	if c, err := net.Dial("tcp", rt.Addr()); err == nil {
		c.Close()
		t.Fatal("the service still accepts connections after Run returned")
	}

	nc, err := nats.Connect(natsURL)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	stream, err := js.Stream(t.Context(), spec.Stream)
	if err != nil {
		t.Fatalf("the event enqueued before the stop was not published: %v", err)
	}
	defer func() { _ = js.DeleteStream(context.Background(), spec.Stream) }()
	if info, err := stream.Info(t.Context()); err != nil || info.State.Msgs != 2 {
		t.Fatalf("stream holds %v messages (%v), want the 2 enqueued before the stop and by the loop winding down", info.State.Msgs, err)
	}
}

// A background loop that fails while the service serves stops the service,
// and Run says which loop and why.
func TestBackgroundLoopFailureStopsTheService(t *testing.T) {
	rt, err := Open(t.Context(), testSpec(t), Config{GRPCAddr: "127.0.0.1:0", Backing: Backing{NATSURL: natstest.URL(t)},
		InternalSecret: testSecret, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	rt.Go("consumer", func(context.Context) error { return fmt.Errorf("stream gone") })
	done := make(chan error, 1)
	go func() { done <- rt.Run(t.Context()) }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "consumer: stream gone") {
			t.Fatalf("Run = %v, want the loop's error named by the loop", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not return after its loop failed")
	}
}

// A service that calls another reports NOT_SERVING while it cannot use it,
// and says why: here the two were given different internal secrets.
func TestNotServingWhileAnUpstreamRefusesThePrincipal(t *testing.T) {
	other, _ := principal.NewSigner([]byte("another-secret-0123456789abcdef-xyz"))
	up, err := rpc.Listen("127.0.0.1:0", slog.New(slog.DiscardHandler), other, nil)
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = up.Serve() }()
	defer up.Stop()

	rt, err := Open(t.Context(), testSpec(t), Config{GRPCAddr: "127.0.0.1:0", Backing: Backing{NATSURL: natstest.URL(t)},
		InternalSecret: testSecret, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	upConn, err := rpc.Dial(up.Addr(), grpc.WithPerRPCCredentials(
		rt.Signer.Credentials(principal.Principal{Kind: principal.KindService, Subject: "runnertest"})))
	if err != nil {
		t.Fatal(err)
	}
	defer upConn.Close()
	rt.DependsOn("upstream", upConn)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- rt.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run after cancel: %v", err)
		}
	}()

	conn, err := rpc.Dial(rt.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for range 500 {
		st, cause, err := checkHealthOf(t, conn)
		if err != nil {
			t.Fatal(err)
		}
		if cause == rpc.CauseStarting {
			time.Sleep(10 * time.Millisecond) // why sleep: polls the cause, which only Check reports (Watch sends status changes alone)
			continue
		}
		want := "the principal signing secret differs between the runnertest service and the upstream service"
		if st != healthpb.HealthCheckResponse_NOT_SERVING || !strings.Contains(cause, want) {
			t.Fatalf("health = %s (%q), want NOT_SERVING saying %q", st, cause, want)
		}
		return
	}
	t.Fatal("still starting after 5s")
}
