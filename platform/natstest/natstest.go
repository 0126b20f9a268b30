// Package natstest gives tests the NATS server (with JetStream) they run
// against: TEST_NATS_URL, or the local server every development machine of
// this project runs. Like pgtest, it fails rather than skips when the server
// is down, so a suite that did not run is never counted as passing.
package natstest

import (
	"os"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
)

// DefaultURL is the local NATS server.
const DefaultURL = "nats://127.0.0.1:4222"

// URL returns the test NATS server's URL after checking it answers.
func URL(t testing.TB) string {
	t.Helper()
	url := os.Getenv("TEST_NATS_URL")
	if url == "" {
		url = DefaultURL
	}
	nc, err := nats.Connect(url, nats.Timeout(3*time.Second))
	if err != nil {
		t.Fatalf("NATS is required for this test and is unreachable at %s: %v\n"+
			"start it (see DEVELOPERS.md) or point TEST_NATS_URL at a server with JetStream", url, err)
	}
	nc.Close()
	return url
}
