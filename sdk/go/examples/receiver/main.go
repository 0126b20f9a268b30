// Command receiver is a webhook endpoint: it verifies each delivery with
// the endpoint's secret (Standard Webhooks) and prints the event, once per
// webhook-id however often it is delivered.
//
//	ATRIUM_WEBHOOK_SECRET=whsec_... go run ./examples/receiver -addr 127.0.0.1:3000
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sync"
	"time"

	atrium "github.com/atrium-hq/atrium/sdk/go"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:3000", "listen address")
	flag.Parse()
	secret := os.Getenv("ATRIUM_WEBHOOK_SECRET")
	if secret == "" {
		log.Fatal("receiver: set ATRIUM_WEBHOOK_SECRET to the webhook's whsec_ secret")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()

	var (
		mu   sync.Mutex
		seen = map[string]bool{}
	)
	mux := http.NewServeMux()
	mux.Handle("POST /", atrium.WebhookHandler(secret, func(_ *http.Request, ev *atrium.WebhookEvent) error {
		mu.Lock()
		defer mu.Unlock()
		if seen[ev.ID] {
			return nil // a retry of one already handled
		}
		seen[ev.ID] = true
		fmt.Printf("%s %s %v\n", ev.ID, ev.Type, ev.Data)
		return nil
	}))
	srv := &http.Server{Addr: *addr, Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		_ = srv.Shutdown(context.Background())
	}()
	// Listen before saying so: whoever waits for the line (a script, a
	// test) may send the first delivery at once.
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("listening on %s\n", ln.Addr())
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		log.Fatal(err)
	}
}
