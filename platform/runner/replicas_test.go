package runner

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/atrium-hq/atrium/platform/natstest"
)

// On a three-node NATS cluster, --nats-stream-replicas 3 puts the
// service's stream on every node, also when the stream already existed
// with one replica (as every version before the setting made it): the
// update applies at start, without an event. A durable consumer made on
// the old stream (the webhooks service's) follows it. The service is
// given the cluster as a list of URLs, as --nats-url takes it.
func TestStreamReplicasApplyToNewAndExistingStreams(t *testing.T) {
	cluster := natstest.StartCluster(t, 3)
	nc, err := nats.Connect(cluster.URL())
	if err != nil {
		t.Fatalf("nats.go with a list of URLs: %v", err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	spec := testSpec(t)
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: spec.Stream, Subjects: []string{spec.Subjects},
		Storage: jetstream.FileStorage, MaxAge: 7 * 24 * time.Hour}); err != nil {
		t.Fatal(err)
	}
	if _, err := js.CreateConsumer(ctx, spec.Stream, jetstream.ConsumerConfig{Durable: "atrium-webhooks", AckPolicy: jetstream.AckExplicitPolicy}); err != nil {
		t.Fatal(err)
	}

	rt, err := Open(t.Context(), spec, Config{GRPCAddr: "127.0.0.1:0", Backing: Backing{NATSURL: cluster.URL(), StreamReplicas: 3},
		InternalSecret: testSecret, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- rt.Run(runCtx) }()
	defer func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("Run = %v", err)
		}
	}()

	var peers int
	for {
		info, err := js.Stream(ctx, spec.Stream)
		if err == nil && info.CachedInfo().Config.Replicas == 3 && info.CachedInfo().Cluster != nil {
			peers = 1 + len(info.CachedInfo().Cluster.Replicas)
			if peers == 3 {
				break
			}
		}
		if ctx.Err() != nil {
			t.Fatalf("the existing stream was not moved to 3 replicas (now on %d servers): %v", peers, err)
		}
		time.Sleep(100 * time.Millisecond) // why sleep: polls a JetStream stream's placement, which has no push form
	}
	for {
		cons, err := js.Consumer(ctx, spec.Stream, "atrium-webhooks")
		if err == nil && cons.CachedInfo().Cluster != nil && 1+len(cons.CachedInfo().Cluster.Replicas) == 3 {
			break
		}
		if ctx.Err() != nil {
			var got any = err
			if err == nil {
				got = cons.CachedInfo().Cluster
			}
			t.Fatalf("the durable consumer did not follow its stream to 3 replicas: %v", got)
		}
		time.Sleep(100 * time.Millisecond) // why sleep: polls a JetStream consumer's placement, which has no push form
	}
}

func TestStreamReplicasAreBounded(t *testing.T) {
	for _, n := range []int{-1, 6} {
		err := Config{GRPCAddr: "x", Backing: Backing{NATSURL: "nats://x", StreamReplicas: n}, InternalSecret: testSecret,
			Logger: slog.New(slog.DiscardHandler)}.Validate()
		if err == nil || !strings.Contains(err.Error(), "--nats-stream-replicas") {
			t.Errorf("%d replicas: %v, want an error naming --nats-stream-replicas", n, err)
		}
	}
}
